{#- The task image: a task's start state as a thin layer over its repository image, rendered by
    src/sandbox/task_image.rs (minijinja). Its /testbed is what an agent is given.

    Build context (a tar made in memory):
      testbed/         the start state: a repository holding one parentless commit of the
                       buggy tree, without the hidden tests, on branch main, checked out

    1. The repository image's /testbed (the clean commit with its history) is removed, and with
       it every way back to the fix that the image holds: for Python, the installed copies of
       the repository's own modules in the venv's site-packages (imports resolve to /testbed
       through PYTHONPATH) and any bytecode; for Java, the warm-up build of the clean commit.
    2. The start state, owned by the test user.

    The entry point runs the container's command under a shell that ends on SIGTERM, so a
    harness that keeps the container alive with `tail -f /dev/null` (SWE-bench's) can stop it at
    once instead of waiting for the kill timeout.

    The repository images run as root, so no USER step; the labels are set by the build (no
    LABEL step): every step is a layer commit, slow on some storage drivers (≈5 s each on
    fuse-overlayfs). The steps before COPY are the same for every task of a repository image,
    so Docker's build cache shares them: a task costs one commit. For Python,
    dockerfiles/strip-installed.py runs inline (`python -c`) and removes the installed copies
    of the repository's own files.
-#}
FROM {{ repo_image }}
RUN ["bash", "-c", {{ prepare | json }}]
ENTRYPOINT ["/bin/sh", "-c", "trap 'exit 143' TERM INT; \"$@\" & wait $!", "sh"]
COPY --chown={{ uid }}:{{ uid }} testbed/ /testbed/
