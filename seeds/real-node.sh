#!/usr/bin/env bash
# Fetches the real JavaScript projects of seeds/real-node.yaml: the upstream sources, tests
# included, as Debian's source packages carry them (npm's registry is not reachable from the
# machines this project runs on; Debian's archive is). Each project's main upstream tarball is
# unpacked into target/real-node/<name>/ (ignored by git, and outside seeds/, whose files are
# compiled into the binary), without Debian's packaging.
#
# Needs `deb-src` lines for bookworm in apt's sources (apt-get source), and Debian's node
# packages the tests load: apt-get install jest mocha node-typescript ts-jest chai.
#   seeds/real-node.sh            # then:
#   swe-forge run seeds/real-node.yaml --max-candidates 30 --json --out out-node
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p target/real-node/.src
cd target
# name  source package  version
while read -r name pkg version; do
  [ -n "$name" ] || continue
  if [ -f "real-node/$name/package.json" ]; then
    echo "$name: already there"
    continue
  fi
  (cd real-node/.src && apt-get source --download-only -qq "$pkg=$version" >/dev/null 2>&1 || true)
  upstream=${version%-*}
  tarball=$(ls real-node/.src/"${pkg}_${upstream}".orig.tar.* 2>/dev/null | head -n 1)
  if [ -z "$tarball" ]; then
    echo "$name: no upstream tarball of $pkg $version (deb-src configured?)" >&2
    exit 1
  fi
  mkdir -p "real-node/$name"
  tar -xf "$tarball" -C "real-node/$name" --strip-components=1
  rm -rf "real-node/$name/debian"
  echo "$name: $pkg $version"
done <<'LIST'
js-yaml              node-js-yaml              4.1.0+dfsg+~4.0.5-7
negotiator           node-negotiator           0.6.3+~0.6.1-1
content-disposition  node-content-disposition  0.5.4-2
depd                 node-depd                 2.0.0-2
bytes                node-bytes                3.1.2-1
commander            node-commander            9.4.1-1
css-what             node-css-what             6.1.0-5
LIST
