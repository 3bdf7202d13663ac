{#- The per-repository image for JavaScript and TypeScript projects: the recipe is
    src/toolchain/node.rs, rendered by src/sandbox/image/repo.rs (minijinja).

    Build context (a tar made in memory):
      node/            swe-forge's dependency check (deps-check.js)
      testbed/         the repository at its pinned commit, with its .git
      host/            only when the host has one: its CA bundle (ca-bundle.pem), for npm

    The base image (swe-forge/node-base) has Debian's node, jest, ts-jest, mocha and
    TypeScript's compiler, with their dependencies under /usr/share/nodejs, where node finds
    them without node_modules. The build checks that the dependencies the tests need (every
    dependency; the devDependencies test files load or the test configuration names) load
    from there. For those that do not, it first installs Debian's own packages of them
    (`node-<name>`, else `<name>`: chai, say) where Debian's archive answers, and copies what
    they added to Debian's node directories into /opt/swe-forge/node/node_modules (on
    NODE_PATH, and copied into task images, which start from the base image); for what is still
    missing, where the network answers, Debian's npm and `npm install` into /opt/swe-forge/node
    (outside /testbed, which task images replace; on NODE_PATH); otherwise the build fails with
    the missing names (the seed is rejected). What only some test files need (deps-check.js exits 0) is not fetched: the
    build goes on without it, and the baseline reports those files as uncollectable.
    jest's cache directory {{ jest_cache }} belongs to the test user (outside /testbed, which
    resets leave alone, and outside /tmp, which the agent empties). /node_modules is a link to
    /usr/share/nodejs: resolving from /testbed upwards (jest's presets and transforms such as
    ts-jest, TypeScript's @types) then finds Debian's packages as if installed.

    Debian's own copy of the project (js-yaml is one of jest's dependencies, so the base image
    holds Debian's js-yaml) would hold the fixed code in every task image: it is replaced by a
    link to /testbed (`own_copy`, src/toolchain/node.rs; the task images' layer does the same
    from the name kept in /opt/swe-forge/node), so that whatever loads the package by name
    loads the repository's code.

    Every instruction is a layer commit, slow on some storage drivers: keep them few.
-#}
FROM {{ base }}
COPY node/ /opt/swe-forge/node-tools/
COPY --chown={{ uid }}:{{ uid }} testbed/ /testbed/
{% if ca_bundle %}
COPY host/ /tmp/swe-forge/host/
{% endif %}
RUN set -e; install -d -o {{ uid }} -g {{ uid }} {{ jest_cache }}; mkdir -p /opt/swe-forge/node; \
    ln -sfn /usr/share/nodejs /node_modules; \
    cd /testbed; \
    missing=$(node /opt/swe-forge/node-tools/deps-check.js) && status=0 || status=$?; \
    if [ -n "$missing" ] && timeout 300 apt-get -qq update >/dev/null 2>&1; then \
      pkgs() { for r in /usr/share/nodejs /usr/lib/nodejs; do [ -d "$r" ] && (cd "$r" && for p in [!@]* @*/*; do [ -e "$p" ] && echo "$r/$p"; done); done | sort; }; \
      pkgs > /tmp/swe-forge-before; \
      for m in $missing; do \
        d=$(printf '%s' "$m" | sed 's/^@//; s#/#-#g' | tr 'A-Z' 'a-z'); \
        DEBIAN_FRONTEND=noninteractive timeout 300 apt-get -qq install -y --no-install-recommends "node-$d" >/dev/null 2>&1 \
          || DEBIAN_FRONTEND=noninteractive timeout 300 apt-get -qq install -y --no-install-recommends "$d" >/dev/null 2>&1 \
          || true; \
      done; \
      rm -rf /var/lib/apt/lists/*; \
      pkgs > /tmp/swe-forge-after; \
      for p in $(comm -13 /tmp/swe-forge-before /tmp/swe-forge-after); do \
        n=${p#/usr/share/nodejs/}; n=${n#/usr/lib/nodejs/}; \
        mkdir -p "/opt/swe-forge/node/node_modules/$(dirname "$n")"; cp -rL "$p" "/opt/swe-forge/node/node_modules/$n"; \
      done; \
      rm -f /tmp/swe-forge-before /tmp/swe-forge-after; \
      missing=$(node /opt/swe-forge/node-tools/deps-check.js) && status=0 || status=$?; \
    fi; \
    if [ -n "$missing" ] && [ "$status" = 0 ]; then \
      echo {{ ("swe-forge: " ~ seed ~ ": going on without ") | sh }}"$(echo $missing)"{{ " (only some test files need them)" | sh }} >&2; \
    elif [ -n "$missing" ]; then \
      echo "swe-forge: not in Debian's node packages: $(echo $missing)"; \
      cp package.json /opt/swe-forge/node/; \
      if ! (command -v npm >/dev/null || (timeout 300 apt-get -qq update && DEBIAN_FRONTEND=noninteractive timeout 600 apt-get -qq install -y --no-install-recommends npm >/dev/null)) \
         || ! (cd /opt/swe-forge/node && {% if ca_bundle %}NODE_EXTRA_CA_CERTS={{ ca_bundle }} {% endif %}timeout 600 npm install --no-audit --no-fund --no-package-lock --ignore-scripts --loglevel=error >&2); then \
        echo {{ ("swe-forge: " ~ seed ~ "'s dependencies cannot be met offline and no npm registry answered; missing: ") | sh }}"$(echo $missing)" >&2; \
        exit 1; \
      fi; \
    elif [ "$status" != 0 ]; then \
      exit 1; \
    fi; \
    node -e 'try { process.stdout.write(String(require("/testbed/package.json").name || "")) } catch (e) {}' > /opt/swe-forge/node/own-package-name; \
    {{ own_copy }}; \
    rm -rf /tmp/swe-forge
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp TZ=UTC LC_ALL=C.UTF-8 LANG=C.UTF-8 NODE_PATH=/opt/swe-forge/node/node_modules
LABEL{% for key, value in labels | items %} {{ key }}={{ value | json }}{% endfor %}
