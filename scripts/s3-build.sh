#!/usr/bin/env bash
# Builds a real S3-compatible server for the off-host snapshot tests: Versity Gateway (versitygw), a POSIX-backed
# S3 server with multipart upload, ListObjectsV2, per-user accounts (flat-file IAM) and bucket policies, from the
# Go module proxy into a cache outside the work tree.
#
#   scripts/s3-build.sh        prints: VERSION PATH-TO-BINARY
#
# Cache: $OPSCTL_S3_BUILD, else /var/tmp/opsctl-s3-build (kept across runs on this machine); a binary already
# built at the pinned version is reused. The tests find it at the same path (test/helpers/s3-server.ts).
set -euo pipefail
version=v1.8.0
command -v go >/dev/null || { echo "s3-build: no go on PATH (Go builds versitygw from the module proxy)" >&2; exit 1; }
cache=${OPSCTL_S3_BUILD:-/var/tmp/opsctl-s3-build}
dest="$cache/versitygw-$version"
mkdir -p "$cache"
if [ -x "$dest/versitygw" ]; then
  echo "$version $dest/versitygw"
  exit 0
fi
work=$(mktemp -d "$cache/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=0 GOBIN="$work/bin" GOFLAGS=-mod=mod go install -trimpath "github.com/versity/versitygw/cmd/versitygw@$version" >&2
"$work/bin/versitygw" --version >/dev/null 2>&1 || "$work/bin/versitygw" --help >/dev/null
rm -rf "$dest"
mv "$work/bin" "$dest"
echo "$version $dest/versitygw"
