#!/usr/bin/env bash
# Builds the S3-compatible servers of the off-host snapshot tests' matrix (test/helpers/s3-stores.ts), each pinned,
# into a cache outside the work tree:
#   versitygw  Versity Gateway, a POSIX-backed S3 server (multipart, per-part SHA-256, per-user accounts, bucket
#              policies), from the Go module proxy;
#   rclone     `rclone serve s3` (rclone's own S3 server over its local backend), from the Go module proxy: a small
#              main of its own (scripts/s3-stores/rclone: the local backend and `serve s3` only, not all of rclone);
#   moto       moto's S3 server (`moto_server`, pip moto[server]), in a virtual environment of its own.
#
#   scripts/s3-build.sh        prints one line per server: NAME VERSION PATH-TO-PROGRAM
#
# (Each step ends its function with `|| return 1`: bash ignores `set -e` inside a function called as `f || …`.)
# Cache: $OPSCTL_S3_BUILD, else /var/tmp/opsctl-s3-build (kept across runs on this machine); a server already built
# at its pinned version is reused. The tests find them at the same paths.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
versitygw=v1.8.0
rclone=v1.76.0
moto=5.2.5
cache=${OPSCTL_S3_BUILD:-/var/tmp/opsctl-s3-build}
mkdir -p "$cache"

build_versitygw() {
  local dest="$cache/versitygw-$versitygw"
  if [ ! -x "$dest/versitygw" ]; then
    command -v go >/dev/null || { echo "s3-build: no go on PATH (Go builds versitygw from the module proxy)" >&2; return 1; }
    local work
    work=$(mktemp -d "$cache/.build.XXXXXX")
    CGO_ENABLED=0 GOBIN="$work/bin" GOFLAGS=-mod=mod go install -trimpath "github.com/versity/versitygw/cmd/versitygw@$versitygw" >&2 || return 1
    "$work/bin/versitygw" --version >/dev/null 2>&1 || "$work/bin/versitygw" --help >/dev/null || return 1
    rm -rf "$dest" && mv "$work/bin" "$dest" && rm -rf "$work" || return 1
  fi
  echo "versitygw $versitygw $dest/versitygw"
}

build_rclone() {
  local dest="$cache/rclone-$rclone"
  if [ ! -x "$dest/rclone" ]; then
    command -v go >/dev/null || { echo "s3-build: no go on PATH (Go builds rclone from the module proxy)" >&2; return 1; }
    grep -q "github.com/rclone/rclone $rclone" "$here/s3-stores/rclone/go.mod" || { echo "s3-build: scripts/s3-stores/rclone/go.mod is not on rclone $rclone" >&2; return 1; }
    local work
    work=$(mktemp -d "$cache/.build.XXXXXX")
    cp "$here/s3-stores/rclone/go.mod" "$here/s3-stores/rclone/go.sum" "$here/s3-stores/rclone/main.go" "$work/" || return 1
    (cd "$work" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -o "$work/bin/rclone" . >&2) || return 1
    "$work/bin/rclone" serve s3 --help >/dev/null || return 1
    rm -rf "$dest" && mv "$work/bin" "$dest" && rm -rf "$work" || return 1
  fi
  echo "rclone $rclone $dest/rclone"
}

build_moto() {
  local dest="$cache/moto-$moto"
  # a virtual environment's scripts name its own path, so it is made where it stays; .complete marks it whole
  if [ ! -f "$dest/.complete" ] || [ ! -x "$dest/bin/moto_server" ]; then
    command -v python3 >/dev/null || { echo "s3-build: no python3 on PATH (moto's server is a Python package)" >&2; return 1; }
    rm -rf "$dest"
    python3 -m venv "$dest" >&2 || return 1
    "$dest/bin/pip" install --quiet --disable-pip-version-check "moto[server]==$moto" >&2 || return 1
    "$dest/bin/moto_server" --help >/dev/null || return 1
    touch "$dest/.complete"
  fi
  echo "moto $moto $dest/bin/moto_server"
}

status=0
build_versitygw || status=1
build_rclone || status=1
build_moto || status=1
exit "$status"
