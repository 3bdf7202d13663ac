{#- The task image: a task's start state as a thin layer over its repository image, rendered by
    src/sandbox/task_image.rs (minijinja). Its /testbed is what an agent is given.

    Build context (a tar made in memory):
      testbed/         the start state: a repository holding one parentless commit of the
                       buggy tree, without the hidden tests, on branch main, checked out
      strip-installed.py  (Python) removes the installed copies of the repository's own files

    1. The repository image's /testbed (the clean commit with its history) is removed, and with
       it every way back to the fix that the image holds: for Python, the installed copies of
       the repository's own modules in the venv's site-packages (imports resolve to /testbed
       through PYTHONPATH) and any bytecode; for Java, the warm-up build of the clean commit.
    2. The start state, owned by the test user.

    The entry point runs the container's command under a shell that ends on SIGTERM, so a
    harness that keeps the container alive with `tail -f /dev/null` (SWE-bench's) can stop it at
    once instead of waiting for the kill timeout.

    Two instructions, so the layer is the start state's files and a few deletions.
-#}
FROM {{ repo_image }}
USER root
COPY strip-installed.py /tmp/swe-forge-strip.py
RUN set -e; rm -rf /testbed; install -d -o {{ uid }} -g {{ uid }} /testbed; \
{% if python %}
    /opt/venv/bin/python /tmp/swe-forge-strip.py {{ roots | join(" ") }}; \
{% endif %}
{% if java_build_cache %}
    find {{ java_build_cache }} -mindepth 1 -delete; \
{% endif %}
    rm -f /tmp/swe-forge-strip.py
COPY --chown={{ uid }}:{{ uid }} testbed/ /testbed/
ENTRYPOINT ["/bin/sh", "-c", "trap 'exit 143' TERM INT; \"$@\" & wait $!", "sh"]
LABEL{% for key, value in labels | items %} {{ key }}={{ value | json }}{% endfor %}
