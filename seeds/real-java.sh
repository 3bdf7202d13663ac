#!/usr/bin/env bash
# Fetches the real Java libraries of seeds/real-java.yaml: the upstream sources, tests included,
# at the versions Debian bookworm packages, into target/real-java/<name>/ (ignored by git, and
# outside seeds/, whose files are compiled into the binary), each a git repository of one
# commit, without Debian's packaging.
#
# From Debian's source packages (apt-get source; needs `deb-src` lines for bookworm in apt's
# sources), or, with --git, from the upstream repositories at the release tag
# (REAL_JAVA_GIT=<base> names where `<owner>/<name>` are cloned from; default GitHub).
# Then install the Debian packages their builds and tests need (dockerfiles/java-maven.md):
#   seeds/real-java.sh [--git]
#   swe-forge run seeds/real-java.yaml --sandbox docker --max-candidates 30 --json --out out-java
set -euo pipefail
mode=${1:-deb-src}
cd "$(dirname "$0")/.."
mkdir -p target/real-java/.src
cd target/real-java
commit() {
  git -C "$1" init -q
  git -C "$1" add -A
  git -C "$1" -c user.name=swe-forge -c user.email=swe-forge@localhost commit -q -m "$2"
}
# name  source package  Debian version  upstream repository  tag
while read -r name pkg version repo tag; do
  [ -n "$name" ] || continue
  if [ -f "$name/pom.xml" ]; then
    echo "$name: already there"
    continue
  fi
  if [ "$mode" = --git ]; then
    tmp=$(mktemp -d)
    git clone -q --no-checkout "${REAL_JAVA_GIT:-https://github.com}/$repo" "$tmp/r"
    git -C "$tmp/r" checkout -q -f "$tag"
    mkdir -p "$name"
    git -C "$tmp/r" archive "$tag" | tar -x -C "$name"
    rm -rf "$tmp"
  else
    (cd .src && apt-get source --download-only -qq "$pkg=$version" >/dev/null 2>&1 || true)
    upstream=${version%-*}
    upstream=${upstream#*:}
    tarball=$(ls .src/"${pkg}_${upstream}".orig.tar.* 2>/dev/null | head -n 1)
    if [ -z "$tarball" ]; then
      echo "$name: no upstream tarball of $pkg $version (deb-src configured? else use --git)" >&2
      exit 1
    fi
    mkdir -p "$name"
    tar -xf "$tarball" -C "$name" --strip-components=1
    rm -rf "$name/debian"
  fi
  commit "$name" "$name $version (Debian's $pkg; upstream $repo $tag)"
  echo "$name: $pkg $version"
done <<'LIST'
commons-cli    libcommons-cli-java    1.5.0-1    apache/commons-cli    commons-cli-1.5.0
commons-codec  libcommons-codec-java  1.15-1     apache/commons-codec  rel/commons-codec-1.15
jsoup          libjsoup-java          1.15.3-1   jhy/jsoup             jsoup-1.15.3
joda-time      libjoda-time-java      2.10.14-1  JodaOrg/joda-time     v2.10.14
args4j         libargs4j-java         2.33-2     kohsuke/args4j        args4j-site-2.33
LIST
