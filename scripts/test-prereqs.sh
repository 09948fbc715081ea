#!/usr/bin/env bash
# Everything the test suite needs beyond `npm ci`, on a fresh Debian machine (as root, or with sudo): after it,
# `npm test` finds every prerequisite by itself (no variable to set) and skips nothing. `.ci/run` runs its steps;
# this is the one list of them.
#
#   scripts/test-prereqs.sh            all of it (`npm run setup:test`): the Debian packages, then etcd 3.5/3.6/3.7 and
#                                      the S3 servers built side by side, then where etcd 3.2/3.3 come from
#   scripts/test-prereqs.sh packages   the Debian packages (apt-get only when one is missing), then the versions of
#                                      chromium and etcd
#   scripts/test-prereqs.sh etcd       etcd 3.5/3.6/3.7 at the versions of scripts/etcd-versions.json, built from the Go
#                                      module proxy by scripts/etcd-build.sh into ${OPSCTL_ETCD_BUILDS:-/var/tmp/opsctl-etcd-builds}
#                                      (one line per version: VERSION DIR; reused when built)
#   scripts/test-prereqs.sh s3         the S3-compatible servers of the off-host snapshot e2e (versitygw and rclone from the
#                                      Go module proxy, moto from PyPI) by scripts/s3-build.sh into
#                                      ${OPSCTL_S3_BUILD:-/var/tmp/opsctl-s3-build} (reused when built)
#   scripts/test-prereqs.sh archives   etcd 3.2.32/3.3.27: nothing can build or download them here, so they come as
#                                      archives in shared/etcd beside the checkout (or OPSCTL_ETCD_ARCHIVES); says whether
#                                      they are there (the vitest global setup extracts them)
#   scripts/test-prereqs.sh containers the packages (podman and runc among them, and /etc/containers/containers.conf as this
#                                      host needs it: runc, cgroupfs, the rlimits it allows), then the docker CLI: the whole
#                                      container suite (`npm run test:containers`; npm test runs kv-containers-podman)
#   scripts/test-prereqs.sh list       the Debian packages, one a line
#
# Not installed here, the machine's own: Node.js (npm ci, the tests), Go (the builds: etcd 3.7.3 asks Go 1.26; Debian's
# golang-go is older) and python3 with venv (moto).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)

# The Debian packages, and what needs each.
PACKAGES=(
  chromium                                   # the login and report e2e (playwright-core drives Debian's Chromium)
  etcd-server etcd-client                    # real etcd 3.4 (/usr/bin) for the kv e2e, the ladder's 3.4 rung
  xz-utils                                   # to extract the etcd 3.2/3.3 archives of shared/etcd
  openssl                                    # the test certificates (etcd over TLS)
  curl                                       # the kv e2e over TLS read each member's /version with it
  procps                                     # ps: the data trial e2e checks that nothing of a trial runs on
  time                                       # GNU time: the peak RSS of kv snapshot status on a 2.5 GiB file
  iproute2                                   # network namespaces: the kv e2e of hosts on a bridge
  openssh-server openssh-client              # the kv upgrade of hosts over ssh (a real sshd per host)
  gnome-keyring dbus dbus-user-session libsecret-tools # the OS keyring e2e (a Secret Service in a D-Bus session)
  zsh fish                                   # the completion e2e on a real terminal (bash is there already)
  ksh mksh busybox sudo                      # the differential shell fuzz
  man-db                                     # to render the generated man pages
  systemd                                    # systemd-analyze verify of the snapshot timer units in docs/examples
  xdg-utils                                  # xdg-open: --web's opener
  python3-venv                               # moto's server in a virtual environment of its own (s3-build.sh)
  podman runc                                # the kv container driver's e2e: members as containers of local etcd images
)

# podman here: runc (crun refuses the host's hybrid cgroups), cgroupfs, and the rlimits the host allows (raising them is
# not permitted). Written once; an existing file is left as it is.
podman_conf() {
  [ -f /etc/containers/containers.conf ] && return 0
  as_root mkdir -p /etc/containers
  printf '%s\n' '[containers]' 'default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]' '' \
    '[engine]' 'cgroup_manager = "cgroupfs"' 'runtime = "runc"' | as_root tee /etc/containers/containers.conf >/dev/null
}

as_root() {
  if [ "$(id -u)" = 0 ]; then
    "$@"
  elif command -v sudo >/dev/null; then
    sudo "$@"
  else
    echo "test-prereqs: installing Debian packages needs root (or sudo): run it as root" >&2
    return 1
  fi
}

# The Debian packages named that are not installed yet, installed (apt-get only when one is missing).
install_missing() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q ' ok installed$' || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "(installing ${missing[*]})"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

# The whole container suite (`npm run test:containers`): podman (with the packages) and the docker CLI.
step_containers() {
  step_packages
  # the docker e2e drives a docker CLI through podman's Docker API: any `docker` on PATH does (28.2 here); else
  # Debian's docker.io, the one package with the CLI in bookworm (no docker-cli), for its client only (its daemon is not used)
  if ! command -v docker >/dev/null; then install_missing docker.io; fi
  docker --version
}

step_packages() {
  echo "::: system packages: ${PACKAGES[*]}"
  install_missing "${PACKAGES[@]}"
  chromium --version 2>/dev/null || true
  etcd --version | sed -n 1p # sed reads to the end: head could leave etcd a SIGPIPE, which pipefail would make fatal
  podman_conf
  podman --version
}

# Where the vitest global setup looks for the 3.2/3.3 archives (test/helpers/etcd-releases.ts, archivesDir):
# OPSCTL_ETCD_ARCHIVES, else the nearest shared/etcd beside the checkout or beside one of its parents.
archives_dir() {
  if [ -n "${OPSCTL_ETCD_ARCHIVES:-}" ]; then
    echo "$OPSCTL_ETCD_ARCHIVES"
    return
  fi
  local d
  d=$(dirname "$repo")
  while :; do
    if [ -e "$d/shared/etcd" ]; then
      echo "$d/shared/etcd"
      return
    fi
    [ "$d" = / ] && break
    d=$(dirname "$d")
  done
  echo "$(dirname "$repo")/shared/etcd"
}

# Says whether both archives are there; returns 1 when one is missing.
step_archives() {
  local dir v ok=0
  dir=$(archives_dir)
  echo "::: real etcd 3.2.32/3.3.27 for the kv e2e: the archives in $dir (OPSCTL_ETCD_ARCHIVES, else shared/etcd beside the checkout), extracted by the vitest global setup"
  for v in 3.2.32 3.3.27; do
    if [ -f "$dir/etcd-v$v-linux-amd64.tar.xz" ]; then
      echo "etcd $v: $dir/etcd-v$v-linux-amd64.tar.xz"
    else
      echo "(missing: $dir/etcd-v$v-linux-amd64.tar.xz: the kv 3.2 -> 3.3 e2e skip, and fail under OPSCTL_REQUIRE_E2E=1)"
      ok=1
    fi
  done
  return "$ok"
}

step_all() {
  step_containers
  local logs etcd_pid s3_pid status=0 version dir
  logs=$(mktemp -d)
  echo "::: real etcd 3.5/3.6/3.7 (scripts/etcd-build.sh) and the S3-compatible servers (scripts/s3-build.sh), side by side"
  "$repo/scripts/etcd-build.sh" >"$logs/etcd" 2>"$logs/etcd.log" &
  etcd_pid=$!
  "$repo/scripts/s3-build.sh" >"$logs/s3" 2>"$logs/s3.log" &
  s3_pid=$!
  if wait "$etcd_pid"; then
    while read -r version dir; do
      echo "etcd $version: $dir: $("$dir/etcd" --version | sed -n 1p), $("$dir/etcdctl" version | sed -n 1p), $("$dir/etcdutl" version | sed -n 1p)"
    done <"$logs/etcd"
  else
    tail -n 40 "$logs/etcd.log"
    echo "etcd-build failed (log above): the kv ladder e2e skip" >&2
    status=1
  fi
  if wait "$s3_pid"; then
    cat "$logs/s3"
  else
    tail -n 40 "$logs/s3.log"
    echo "s3-build failed (log above): the kv off-host snapshot e2e skip" >&2
    status=1
  fi
  rm -rf "$logs"
  step_archives || status=1
  if [ "$status" = 0 ]; then
    echo "::: done: npm test finds every prerequisite"
  else
    echo "::: not all there (above): npm test skips what needs it, loudly" >&2
  fi
  return "$status"
}

case "${1:-all}" in
  all) step_all ;;
  packages) step_packages ;;
  etcd) exec "$repo/scripts/etcd-build.sh" ;;
  s3) exec "$repo/scripts/s3-build.sh" ;;
  archives) step_archives ;;
  containers) step_containers ;;
  list) printf '%s\n' "${PACKAGES[@]}" ;;
  *)
    echo "usage: $0 [all|packages|etcd|s3|archives|containers|list]" >&2
    exit 2
    ;;
esac
