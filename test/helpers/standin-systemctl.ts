import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A STAND-IN for systemctl (not systemd: a real one cannot run inside a test), written as `DIR/systemctl` for the
 * PATH of ssh sessions (sshd SetEnv): units `etcd-VERSION` of the one member of the session's host, whose folder
 * is `memberDir` (a shell word: `/srv/etcd`, or `"/tmp/x/$OPSCTL_TEST_MEMBER"`), started from `bins[VERSION]/etcd`
 * with `--config-file MEMBERDIR/etcd.yaml`, stopped by its PID file (waiting until it is gone, as systemctl stop
 * does), and `cat` printing the unit's file with that ExecStart (what the systemd preset reads per version).
 */
export function writeStandinSystemctl(dir: string, o: { bins: Record<string, string>; memberDir: string; test: string }): void {
  mkdirSync(dir, { recursive: true });
  const units = Object.entries(o.bins)
    .map(([v, bin]) => `etcd-${v}) echo "${bin}/etcd" ;;`)
    .join(' ');
  writeFileSync(
    join(dir, 'systemctl'),
    `#!/bin/sh
# STAND-IN for systemctl (opsctl test ${o.test}): not systemd.
set -eu
cmd="$1"; shift
[ "\${1:-}" = "--quiet" ] && shift
d=${o.memberDir}
bin() { case "$1" in ${units} *) echo "Unit $1.service not found." >&2; exit 5 ;; esac; }
alive() { [ -f "$d/pid" ] && kill -0 "$(cat "$d/pid")" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$(cat "$d/pid")/status"; }
case "$cmd" in
  start) b="$(bin "$1")"; alive && exit 0; nohup "$b" --config-file "$d/etcd.yaml" >>"$d/etcd.log" 2>&1 </dev/null & echo $! >"$d/pid" ;;
  stop) if alive; then kill -TERM "$(cat "$d/pid")"; n=0; while alive; do n=$((n+1)); [ $n -lt 900 ] || kill -KILL "$(cat "$d/pid")"; sleep 0.1; done; fi ;;
  is-active) alive ;;
  cat) b="$(bin "$1")"; printf '# /etc/systemd/system/%s.service\\n[Unit]\\nDescription=etcd\\n\\n[Service]\\nType=notify\\nExecStart=%s --config-file %s/etcd.yaml\\nRestart=on-failure\\n' "$1" "$b" "$d" ;;
  *) echo "stand-in systemctl: $cmd is not supported" >&2; exit 1 ;;
esac
`,
    { mode: 0o755 },
  );
}
