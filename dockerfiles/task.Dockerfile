{#- The task base of a repository image, rendered by src/sandbox/task_image.rs (minijinja):
    what every task image of that repository image shares. A task image is then one commit
    over it: a container of the task base, the task's start state put at /testbed (a
    repository holding one parentless commit of the buggy tree, without the hidden tests, on
    branch main, checked out, owned by the test user), committed with the task's labels.

    The task base is NOT a layer over the repository image: that one's /testbed holds the clean
    commit with its history, and a deletion in an upper layer is a whiteout that not every
    storage driver honours (on fuse-overlayfs a removed file could be read again by its path
    after a `git checkout`). Instead it starts from the base image (which has no repository)
    and copies from the repository image only what the tests need (the toolchain's task
    layer: the venv, from which the repository image's build already removed the installed
    copies of the repository's own files; the Java helpers; the node install directory), and
    the repository image's environment. No layer of a task image holds the clean code.

    Every step is a layer commit, slow on some storage drivers (on fuse-overlayfs a commit
    walks the whole tree): the steps here are made once per repository image, and a task costs
    one commit. The entry point runs the container's command under a shell that ends on
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

