/**
 * The POSIX shell script a trial sends to a member's host (`sh -s` locally, or the driver's
 * trial template, e.g. `ssh {host} sudo sh -s`), and what it prints back (the read script, drivers/host-script.ts, finds the running member's settings):
 * - run: the hop's target started once with the rewritten settings in a scratch dir, its /health
 *   asked until it answers healthy, it exits, or the timeout passes; then it is killed and the
 *   scratch dir removed, whatever happened (a trap). It says it still waits about once a second: where
 *   the one reading it is gone (opsctl killed -9, the ssh that carried it closed), that line breaks the pipe
 *   and the trap ends the trial then, not when it would have ended.
 * Every value is a single-quoted shell word: nothing of a member's settings is ever read by the shell.
 */
import { shellWord } from '../drivers/host-script.js';
import type { TrialPlan } from './rewrite.js';

export const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The run script for one trial. `delimiter` must not occur in the config text (a random one does not). */
export function runScript(
  p: TrialPlan,
  o: {
    timeoutS: number;
    delimiter: string;
    user?: { uid: number; gid: number };
    /** The member's own certificate and key, shown to a trial member that asks clients for one (client-cert-auth). */
    clientCert?: { cert: string; key: string };
    /** Ask the binary its version first (`--version`): where the driver does not know it (a preset's bins on the hosts). */
    askVersion?: boolean;
  },
): string {
  if (p.config?.text.includes(o.delimiter)) throw new Error('the here-document delimiter occurs in the config file');
  const envWords = Object.entries(p.env).map(([k, v]) => shellWord(`${k}=${v}`));
  const cmd = ['env', '-i', shellWord(`PATH=${PATH}`), ...envWords, ...p.program.map(shellWord), ...p.args.map(shellWord)].join(' ');
  const lines = [
    'set -u',
    // (below the member it proves and whatever else runs there: a trial never takes the CPU a live member or the
    // rehearsal's clone waits for; a host without renice runs it as it is)
    'renice -n 10 -p $$ >/dev/null 2>&1 || :',
    `dir=${shellWord(p.dir)}`,
    `url=${shellWord(`${p.clientUrl}/health`)}`,
    `port=${shellWord(new URL(p.clientUrl).port)}`,
    // the deadline in polls of about 50 ms (no clock read per poll: each would be a process)
    `limit=${Math.max(1, Math.round(o.timeoutS * 20))}`,
    'pid=',
    'umask 077',
    'say() { printf "opsctl-trial: %s\\n" "$*"; }',
    'mkdir "$dir" || { say "error cannot create $dir"; exit 0; }',
    // The trial member never outlives the script, and its scratch dir goes with it.
    // $pid may be runuser, which forks: etcd's own PID is in $dir/etcd.pid (the shell that wrote it exec'd it)
    'cleanup() { if [ -n "$pid" ]; then [ -s "$dir/etcd.pid" ] && kill -9 "$(cat "$dir/etcd.pid")" 2>/dev/null; kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; fi; rm -rf "$dir"; }',
    'trap cleanup EXIT',
    "trap 'exit 130' INT TERM HUP",
    // (the reader gone: the next line written breaks the pipe; without this trap the shell died of it and the trial member lived on)
    "trap 'exit 141' PIPE",
  ];
  if (p.config) lines.push(`cat >${shellWord(p.config.path)} <<'${o.delimiter}'`, p.config.text.replace(/\n?$/, '\n') + o.delimiter);
  // As the member's own user where this runs as root (files it cannot read fail the trial as they would fail it).
  lines.push('as=');
  if (o.user && o.user.uid !== 0) {
    const { uid, gid } = o.user;
    lines.push(
      `if [ "$(id -u)" = 0 ] && [ ${uid} != 0 ]; then`,
      `  chown -R ${uid}:${gid} "$dir"`,
      `  who=$(getent passwd ${uid} | cut -d: -f1)`,
      `  if [ -n "$who" ] && command -v runuser >/dev/null 2>&1; then as="runuser -u $who --"`,
      `  elif command -v setpriv >/dev/null 2>&1; then as="setpriv --reuid=${uid} --regid=${gid} --clear-groups"`,
      `  else say "note runs as root: no runuser or setpriv to take uid ${uid}"; fi`,
      'fi',
    );
  }
  if (o.askVersion) lines.push(`say "version $(${p.program.map(shellWord).join(' ')} --version 2>/dev/null | sed -n 's/^etcd Version: //p' | head -n 1)"`);
  lines.push(
    `cd ${shellWord(p.cwd)} 2>/dev/null || cd "$dir"`,
    `$as sh -c 'echo $$ >"$0"; exec "$@"' "$dir/etcd.pid" ${cmd} >"$dir/log" 2>&1 </dev/null &`,
    'pid=$!',
    'start=$(date +%s)',
    't0=$(date +%s%N 2>/dev/null)',
    'ms() { n=$(date +%s%N 2>/dev/null); case $n$t0 in *N*|"") echo $(( ($(date +%s) - start) * 1000 ));; *) echo $(( (n - t0) / 1000000 ));; esac; }',
    'polls=0',
    // Listening on the client port (/proc/net/tcp, state 0A): where /health cannot be read.
    'listening() { hex=$(printf "%04X" "$port"); awk -v p=":$hex" \'$4=="0A" && substr($2, length($2)-4)==p {f=1} END {exit !f}\' /proc/net/tcp /proc/net/tcp6 2>/dev/null; }',
    // Whether the listener on the client port is the trial's own process (or its child: runuser forks).
    // Another program that took the port after it was chosen answers /health too, and must not pass for
    // the trial (the trial, unable to bind, exits and is tried again on other ports). Where this shell
    // cannot see the sockets of the process, the answer is taken as before.
    'ours() {',
    '  hex=$(printf "%04X" "$port")',
    '  inodes=$(awk -v p=":$hex" \'$4=="0A" && substr($2, length($2)-4)==p {print $10}\' /proc/net/tcp /proc/net/tcp6 2>/dev/null)',
    // (a process whose fds are not ours to read, another user's: taken as before; one that is exiting, a zombie or gone
    // has none to show, or no fd dir, whatever its state says at that instant: not ours)
    '  fds=$(LC_ALL=C ls -l "/proc/$pid/fd" 2>&1) || { case $fds in *"Permission denied"*) return 0;; esac; return 1; }',
    '  [ -n "$inodes" ] && [ -r "/proc/$pid/task/$pid/children" ] || return 0',
    '  for q in $(cat /proc/$pid/task/*/children 2>/dev/null); do fds="$fds $(ls -l "/proc/$q/fd" 2>/dev/null)"; done',
    '  for i in $inodes; do case $fds in *"socket:[$i]"*) return 0;; esac; done',
    '  return 1',
    '}',
    'curl=$(command -v curl 2>/dev/null)',
    'last=',
    'while :; do',
    '  if ! kill -0 "$pid" 2>/dev/null; then',
    '    wait "$pid"; code=$?; pid=',
    '    say "exited $code $(ms)"; say log; tail -c 8000 "$dir/log"; exit 0',
    '  fi',
    // /health asked once etcd's log says it serves clients (etcd 3.0 to 3.7 alike), else every 10 polls (a
    // log that goes elsewhere): a curl each poll would cost more than the start it waits for.
    '  if [ -z "$curl" ]; then',
    '    if listening && ours; then say "listening $(ms) no curl"; exit 0; fi',
    '  elif [ $((polls % 10)) = 0 ] || grep -qs "ready to serve client requests" "$dir"/log*; then',
    `    body=$("$curl" -sk --max-time 2 ${o.clientCert ? `--cert ${shellWord(o.clientCert.cert)} --key ${shellWord(o.clientCert.key)} ` : ''}-w ' HTTP%{http_code}' "$url" 2>/dev/null); rc=$?`,
    '    case "$body" in',
    '      *HTTP200) case "$body" in *true*) if ours; then say "ready $(ms) $body"; exit 0; fi; last="another process answers on port $port";; *) last="answers $body";; esac;;',
    '      *HTTP[1-9]*) last="answers $body";;',
    '      *) case $rc in 7|28) ;; *) if listening && ours; then say "listening $(ms) curl exit $rc"; exit 0; fi;; esac;;',
    '    esac',
    '  fi',
    '  polls=$((polls + 1))',
    '  [ $((polls % 20)) = 0 ] && say waiting',
    '  if [ "$polls" -ge "$limit" ]; then say "timeout $(ms) $last"; say log; tail -c 8000 "$dir/log"; exit 0; fi',
    '  sleep 0.05 2>/dev/null || sleep 1',
    'done',
  );
  return `${lines.join('\n')}\n`;
}

/** What a trial said. */
export type TrialOutcome = (
  | { kind: 'ready'; ms: number; how: string }
  | { kind: 'exited'; code: number; ms: number; log: string }
  | { kind: 'timeout'; ms: number; last: string; log: string }
  | { kind: 'error'; message: string }
) & { version?: string };

/** The run script's output, read. */
export function parseRun(stdout: string): TrialOutcome {
  const version = /^opsctl-trial: version (\S+)$/m.exec(stdout)?.[1];
  const outcome = parseOutcome(stdout);
  return version ? { ...outcome, version } : outcome;
}

function parseOutcome(stdout: string): TrialOutcome {
  const lines = stdout.split('\n');
  const at = lines.findIndex((l) => /^opsctl-trial: (ready|listening|exited|timeout|error) /.test(l));
  if (at < 0) return { kind: 'error', message: `the trial script printed no result${stdout.trim() ? `: ${stdout.trim().slice(0, 300)}` : ''}` };
  const line = lines[at]!.slice('opsctl-trial: '.length);
  const logAt = lines.findIndex((l, i) => i > at && l === 'opsctl-trial: log');
  const log = logAt < 0 ? '' : lines.slice(logAt + 1).join('\n');
  const [word, a = '', ...rest] = line.split(' ');
  const n = Number(a);
  switch (word) {
    case 'ready':
      return {
        kind: 'ready',
        ms: n,
        how: `served /health (${rest
          .join(' ')
          .replace(/ HTTP200$/, '')
          .trim()})`,
      };
    case 'listening':
      return { kind: 'ready', ms: n, how: `listening on its client port (/health not read: ${rest.join(' ')})` };
    case 'exited':
      return { kind: 'exited', code: n, ms: Number(rest[0] ?? 0), log };
    case 'timeout':
      return { kind: 'timeout', ms: n, last: rest.join(' '), log };
    default:
      return { kind: 'error', message: [a, ...rest].join(' ') };
  }
}
