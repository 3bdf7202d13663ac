{#- A base image finished from a pulled Debian image, where a registry answers (rendered by
    src/sandbox/image.rs; offline, debootstrap makes the same image: same packages, same test
    user, same directories). `packages` is the language's whole list (BaseRecipe); the slim
    image leaves out /usr/share/man, where the JDK's postinst makes alternatives links. No
    documentation, manual pages or translations (dpkg's path-exclude), as offline. -#}
FROM {{ from }}
RUN mkdir -p /usr/share/man/man1 /etc/dpkg/dpkg.cfg.d \
 && printf {{ dpkg_nodoc | json }} > /etc/dpkg/dpkg.cfg.d/swe-forge-nodoc \
 && apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends {{ packages }} \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid {{ uid }} {{ user }} \
 && useradd --uid {{ uid }} --gid {{ uid }} --home-dir /tmp --no-create-home --shell /bin/bash {{ user }} \
 && mkdir -p /testbed /scratch && chown {{ uid }}:{{ uid }} /testbed /scratch \
 && git config --system --add safe.directory /testbed
ENV LANG=C.UTF-8 LC_ALL=C.UTF-8 TZ=UTC
WORKDIR /testbed
LABEL swe-forge.kind="base" swe-forge.language="{{ language }}" swe-forge.source="registry"
