{#- The per-repository image for Python projects: the recipe is src/toolchain/python_pytest.rs,
    rendered by src/sandbox/image/repo.rs (minijinja).

    Build context (a tar made in memory):
      testbed/         the repository at its pinned commit, with its .git
      host/            only when needed: the host's CA bundle (ca-bundle.pem) and/or the wheels
                       downloaded on the host (wheelhouse/) when the package index is not
                       reachable from a build container; `pip_env` points pip at them

    Stage `deps` installs the test tools and then the project (its install command, run in a
    throwaway copy) into /opt/venv, then removes from the venv the installed copies of the
    repository's own files (dockerfiles/strip-installed.py: tests import the repository from
    /testbed through PYTHONPATH, and a clean copy in site-packages would hand an agent the fix);
    last, one pytest run in an empty directory caches the assertion rewriting of the installed
    pytest plugins' packages (rewrite_warm_up in the recipe: test runs write no bytecode, and
    would otherwise rewrite all of Hypothesis in every process);
    the final stage copies that venv (the dependency layer),
    then the repository (the source layer, owned by the test user). Neither the CA bundle nor
    the wheelhouse nor the build tree reaches the image. The base image already has the test
    user, /testbed, /scratch and WORKDIR /testbed.

    Every instruction is a layer commit, slow on some storage drivers: keep them few.
-#}
{% set pip_env = "export " ~ (pip_vars | join(" ")) ~ ((" PIP_CERT=" ~ ca_bundle ~ " SSL_CERT_FILE=" ~ ca_bundle ~ " REQUESTS_CA_BUNDLE=" ~ ca_bundle) if ca_bundle else "") ~ " && " %}
FROM {{ base }} AS deps
{% if ca_bundle or wheelhouse %}
COPY host/ /tmp/swe-forge/host/
{% endif %}
RUN ["bash", "-c", {{ (pip_env ~ "python3 -m venv /opt/venv && /opt/venv/bin/python -m pip install -q " ~ (test_tools | join(" "))) | json }}]
COPY testbed/ /tmp/swe-forge/src/
{% if install_command %}
RUN ["bash", "-c", {{ (pip_env ~ "cd /tmp/swe-forge/src && export PATH=/opt/venv/bin:$PATH VIRTUAL_ENV=/opt/venv && bash -c " ~ (install_command | sh) ~ " && /opt/venv/bin/python -I -c " ~ (strip_script | sh) ~ " " ~ strip_roots ~ " && " ~ rewrite_warm_up) | json }}]
{% else %}
RUN ["bash", "-c", {{ rewrite_warm_up | json }}]
{% endif %}

FROM {{ base }}
COPY --from=deps /opt/venv /opt/venv
COPY --chown={{ uid }}:{{ uid }} testbed/ /testbed/
ENV VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp TZ=UTC LC_ALL=C.UTF-8 LANG=C.UTF-8 PYTHONHASHSEED=0 PYTHONDONTWRITEBYTECODE=1 PYTHONPATH={{ python_path | json }}
LABEL{% for key, value in labels | items %} {{ key }}={{ value | json }}{% endfor %}

