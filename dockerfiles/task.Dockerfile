{#- The task image: a task's start state over its repository's environment, rendered by
    src/sandbox/task_image.rs (minijinja). Its /testbed is what an agent is given.

    Build context (a tar made in memory):
      testbed/         the start state: a repository holding one parentless commit of the
                       buggy tree, without the hidden tests, on branch main, checked out

    The image is NOT a layer over the repository image: that one's /testbed holds the clean
    commit with its history, and a deletion in an upper layer is a whiteout that not every
    storage driver honours (on fuse-overlayfs a removed file could be read again by its path
    after a `git checkout`). Instead it starts from the language's base image (which has no
    repository) and copies from the repository image only what the tests need: the venv
    (from which the repository image's build already removed the installed copies of the
    repository's own files) or the Java helpers, and the repository image's environment.
    No layer of a task image holds the clean code.

    The labels are one LABEL step (the build's own label option makes one step per label):
    every step is a layer commit, slow on some storage drivers (≈5 s each on fuse-overlayfs). The steps before the last COPY are the
    same for every task of a repository image, so Docker's build cache shares them: a task
    costs one commit. The entry point runs the container's command under a shell that ends on
    SIGTERM, so a harness that keeps the container alive with `tail -f /dev/null`
    (SWE-bench's) can stop it at once.
-#}
FROM {{ base }}
{% for path in copy_paths %}
COPY --from={{ repo_image }} {{ path }} {{ path }}
{% endfor %}
{% if prepare %}
RUN ["bash", "-c", {{ prepare | json }}]
{% endif %}
{% if env %}
ENV{% for kv in env %} {{ kv }}{% endfor %}

{% endif %}
ENTRYPOINT ["/bin/sh", "-c", "trap 'exit 143' TERM INT; \"$@\" & wait $!", "sh"]
COPY --chown={{ uid }}:{{ uid }} testbed/ /testbed/
LABEL{% for key, value in labels | items %} {{ key }}={{ value | json }}{% endfor %}

