#!/usr/bin/env bash
# Builds a real etcd release (etcd, etcdctl, etcdutl) from the Go module proxy into a cache outside the
# work tree, for the kv ladder tests (3.5.x, 3.6.x and 3.7.x: Debian has 3.4 only, ../shared/etcd has 3.2/3.3).
#
#   scripts/etcd-build.sh 3.6.16 [3.5.35 …]   prints one line per version: VERSION DIR
#   scripts/etcd-build.sh                     the versions pinned in scripts/etcd-versions.json (the tests' own)
#
# How: a throw-away module requires go.etcd.io/etcd/{server,etcdctl,etcdutl}/v3 at the release tag (their
# monorepo `replace` lines apply only inside etcd's own tree, so the tagged modules come from the proxy),
# a two-line main calls server/v3/etcdmain as etcd's own main.go does, and CGO_ENABLED=0 go build makes
# static binaries. A release already built (its `etcd --version` names the version) is reused.
# Cache: $OPSCTL_ETCD_BUILDS, else /var/tmp/opsctl-etcd-builds (kept across runs on this machine).
set -euo pipefail
if [ $# -eq 0 ]; then
  # The pinned versions (one place: the tests read the same file).
  pinned=$(node -e 'const v = require(process.argv[1]); console.log(Object.keys(v).filter((k) => /^\d+\.\d+$/.test(k)).map((k) => v[k]).join(" "))' \
    "$(cd "$(dirname "$0")" && pwd)/etcd-versions.json") \
    || { echo "usage: $0 [VERSION…]  (for example 3.6.16; none: scripts/etcd-versions.json)" >&2; exit 2; }
  read -r -a pinned_versions <<<"$pinned"
  set -- "${pinned_versions[@]}"
fi
command -v go >/dev/null || { echo "etcd-build: no go on PATH (Go builds etcd 3.5/3.6/3.7 from the module proxy)" >&2; exit 1; }
cache=${OPSCTL_ETCD_BUILDS:-/var/tmp/opsctl-etcd-builds}
mkdir -p "$cache"
for version in "$@"; do
  [[ $version =~ ^3\.[567]\.[0-9]+$ ]] || { echo "etcd-build: $version is not a 3.5.x, 3.6.x or 3.7.x version (3.2/3.3: ../shared/etcd; 3.4: Debian's etcd-server)" >&2; exit 2; }
  dest="$cache/etcd-v$version-linux-amd64"
  # (grep reads a captured string: `etcd --version | grep -q` lets grep exit first, and under pipefail the
  # SIGPIPE etcd then gets fails the pipe: a right binary read as wrong, at random)
  if [ -x "$dest/etcd" ] && [ -x "$dest/etcdctl" ] && [ -x "$dest/etcdutl" ] \
    && grep -q "^etcd Version: $version\$" <<<"$("$dest/etcd" --version 2>/dev/null)"; then
    echo "$version $dest"
    continue
  fi
  work=$(mktemp -d "$cache/.build-$version.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  (
    cd "$work"
    printf 'module opsctl.local/etcd-build\n\ngo 1.23\n' >go.mod
    mkdir etcd
    printf 'package main\n\nimport (\n\t"os"\n\n\t"go.etcd.io/etcd/server/v3/etcdmain"\n)\n\nfunc main() { etcdmain.Main(os.Args) }\n' >etcd/main.go
    GOFLAGS=-mod=mod go get "go.etcd.io/etcd/server/v3@v$version" "go.etcd.io/etcd/etcdctl/v3@v$version" "go.etcd.io/etcd/etcdutl/v3@v$version" >&2
    export CGO_ENABLED=0 GOFLAGS=-mod=mod
    go build -trimpath -o out/etcd ./etcd
    go build -trimpath -o out/etcdctl go.etcd.io/etcd/etcdctl/v3
    go build -trimpath -o out/etcdutl go.etcd.io/etcd/etcdutl/v3
    grep -q "^etcd Version: $version\$" <<<"$(out/etcd --version)" || { echo "etcd-build: the built etcd does not say $version:" >&2; out/etcd --version >&2; exit 1; }
  )
  rm -rf "$dest"
  mv "$work/out" "$dest"
  rm -rf "$work"
  trap - EXIT
  echo "$version $dest"
done
