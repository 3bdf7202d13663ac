{#- The per-repository image for Java projects built with Maven, rendered by
    src/sandbox/image.rs (minijinja). See java-maven.md for the offline recipe.

    Build context (a tar made in memory):
      java/            swe-forge's coverage helpers (PerTestListener.java, PerTestCoverage.java,
                       from dockerfiles/java/), maven-settings.xml, and warmup-setup.sh (the
                       Maven runner's fast-path setup script, rendered by image.rs)
      testbed/         the repository at its pinned commit, with its .git

    The base image (swe-forge/java-base) has the JDK, Maven, Debian's Maven repository
    (/usr/share/maven-repo: JUnit 4/5 with the console launcher, Surefire, the core plugins,
    JaCoCo), python3 for the agent, git, the test user, /testbed, /scratch and WORKDIR /testbed.

    1. The helpers, compiled here into {{ helpers }} in the layout the Maven runner expects
       (listener/ with the META-INF/services entry, tools/, jacocoagent.jar extracted from
       Debian's org.jacoco.agent jar), the settings at {{ settings }} (offline, the local
       repository being the overlay {{ overlay }}), the overlay script, swe-forge's Maven core
       extension in Maven's lib/ext (it removes the plugins the overlay drops; it does nothing
       where there is no drop list), and the runner's fast-path build cache {{ build_cache }}
       owned by the test user. This layer is the same for every repository on a base, so
       Docker's build cache shares it.
    2. The repository, owned by the test user.
    3. As root, the overlay of Debian's Maven repository for this project (maven-overlay.py,
       see java-maven.md, "Real projects"): built from a copy of the repository, so /testbed
       stays as it is, and owned by root, so nothing a task's agent runs can change what
       grading resolves. Its mapping is {{ overlay }}/.swe-forge/mapping.json. A project that
       does not build offline even so fails here, with the build's error lines.
    4. As the test user, the warm-up: the runner's fast-path setup builds the commit
       (`mvn -o test-compile` on a `git archive` of HEAD) into {{ build_cache }}, where every
       worker finds it (outside /testbed, so resets keep it; outside /tmp, which the agent
       empties). When the fast path does not apply (its reason is printed), a plain offline
       `mvn test-compile` checks the project instead. Either way a project whose plugins or
       dependencies Debian does not package fails here, with a message, rather than at its
       baseline run. Then `git clean -fdx` (what the agent's reset runs before every
       candidate): /testbed is the commit's tree, without build output.

    Every instruction is a layer commit, slow on some storage drivers: keep them few.
-#}
FROM {{ base }}
COPY java/ /tmp/swe-forge/java/
RUN set -e; H={{ helpers }}; J={{ java_lib }}; S=/tmp/swe-forge/java; \
    mkdir -p $H/listener/META-INF/services $H/tools; \
    javac --release 11 -nowarn -d $H/listener \
      -cp $J/junit-platform-launcher.jar:$J/junit-platform-engine.jar:$J/junit-platform-commons.jar \
      $S/PerTestListener.java; \
    javac --release 11 -nowarn -d $H/tools -cp $J/org.jacoco.core.jar $S/PerTestCoverage.java; \
    echo sweforge.PerTestListener > $H/listener/META-INF/services/org.junit.platform.launcher.TestExecutionListener; \
    cd $H; jar xf $J/org.jacoco.agent.jar jacocoagent.jar; test -s $H/jacocoagent.jar; \
    install -m 0644 $S/maven-settings.xml {{ settings }}; \
    install -m 0755 $S/warmup-setup.sh $H/warmup-setup.sh; \
    install -m 0644 $S/maven-overlay.py $S/maven-aliases.txt $H/; \
    bash $S/build-extension.sh; \
    install -d -o {{ uid }} -g {{ uid }} {{ build_cache }}; \
    rm -rf /tmp/swe-forge /tmp/hsperfdata_root
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp TZ=UTC LC_ALL=C.UTF-8 LANG=C.UTF-8
COPY --chown={{ uid }}:{{ uid }} testbed/ /testbed/
RUN export JAVA_TOOL_OPTIONS={{ jvm_options | sh }} MALLOC_ARENA_MAX=2; \
    cp -a /testbed /tmp/swe-forge-overlay-src; \
    if ! python3 {{ helpers }}/maven-overlay.py --root {{ overlay }} --project /tmp/swe-forge-overlay-src; then \
      echo {{ ("swe-forge: " ~ seed ~ " does not build offline against Debian's Maven repository (/usr/share/maven-repo), even with the versions it asks for mapped to Debian's: install the Debian packages of the artifacts named above in the Java base image (see dockerfiles/java-maven.md), or leave the seed out.") | sh }} >&2; \
      exit 1; \
    fi; \
    rm -rf /tmp/swe-forge-overlay-src /tmp/hsperfdata_root /tmp/.m2
USER {{ user }}
RUN export JAVA_TOOL_OPTIONS={{ jvm_options | sh }} MALLOC_ARENA_MAX=2; \
    mkdir -p {{ warmup_dir }}; \
    bash {{ helpers }}/warmup-setup.sh; \
    result=$(head -n 1 {{ warmup_dir }}/{{ setup_file }} 2>/dev/null); \
    if [ "$result" != ok ]; then \
      echo "swe-forge: no fast-path build for this commit (${result:-the setup wrote no result}); checking with plain Maven" >&2; \
      if ! mvn -o -q -B -s {{ settings }} test-compile; then \
        echo {{ ("swe-forge: " ~ seed ~ " does not build offline against Debian's Maven repository (/usr/share/maven-repo). Pin plugin and dependency versions that Debian bookworm packages (see dockerfiles/java-maven.md), or leave the seed out.") | sh }} >&2; \
        exit 1; \
      fi; \
    fi; \
    git clean -q -f -d -x; \
    rm -rf {{ warmup_dir }} /tmp/hsperfdata_{{ user }}
USER root
LABEL{% for key, value in labels | items %} {{ key }}={{ value | json }}{% endfor %}

