/**
 * The read script a driver sends to a member's host (`sh -s` locally, or the driver's trial template,
 * e.g. `ssh {host} sudo sh -s`): the running member's settings from /proc (its command line, ETCD_*
 * environment, working directory, user, and the config file it names), found by the process that
 * listens on its client port. Every value sent is a single-quoted shell word.
 */

/** A value as one shell word: single quotes, with each ' closed, escaped and reopened. */
export function shellWord(v: string): string {
  return `'${v.replace(/'/g, `'\\''`)}'`;
}

/**
 * The read script: the member that listens on `port` on this host, as /proc shows it. Prints
 * `opsctl-read: KEY VALUE` lines (cmdline, environ and config base64: they may hold any byte).
 */
export function readScript(port: number, host?: string): string {
  // An IPv4 address as /proc/net/tcp writes it (little-endian hex): a listener on it or on 0.0.0.0 is
  // the member's (two members may share a port on two loopback addresses); any address otherwise.
  const ip = host && /^\d+\.\d+\.\d+\.\d+$/.test(host) ? procHex(host) : '';
  return `${[
    'set -u',
    `port=${port}`,
    `ip=${ip}`,
    'say() { printf "opsctl-read: %s\\n" "$*"; }',
    'hex=$(printf "%04X" "$port")',
    'inodes=$(awk -v p=":$hex" -v ip="$ip" \'$4=="0A" && substr($2, length($2)-4)==p && (ip == "" || length($2) > 13 || substr($2, 1, 8) == ip || substr($2, 1, 8) == "00000000") {print $10}\' /proc/net/tcp /proc/net/tcp6 2>/dev/null)',
    'pid=',
    'for ino in $inodes; do',
    '  f=$(find /proc/[0-9]*/fd -maxdepth 1 -lname "socket:\\[$ino\\]" 2>/dev/null | head -n 1)',
    '  if [ -n "$f" ]; then pid=${f#/proc/}; pid=${pid%%/*}; break; fi',
    'done',
    'if [ -z "$pid" ] && command -v ss >/dev/null 2>&1; then pid=$(ss -ltnpH "sport = :$port" 2>/dev/null | sed -n \'s/.*pid=\\([0-9]*\\).*/\\1/p\' | head -n 1); fi',
    'if [ -z "$pid" ]; then say "none no process on this host listens on port $port (or it cannot be seen: run the trial as root)"; exit 0; fi',
    'say "pid $pid"',
    "say \"uid $(awk '/^Uid:/ {print $2}' /proc/$pid/status) $(awk '/^Gid:/ {print $2}' /proc/$pid/status)\"",
    'say "exe $(readlink /proc/$pid/exe 2>/dev/null)"',
    'say "cwd $(readlink /proc/$pid/cwd 2>/dev/null)"',
    'say "cmdline $(base64 -w0 </proc/$pid/cmdline)"',
    "say \"environ $(tr '\\000' '\\n' </proc/$pid/environ | grep -E '^(ETCD_[A-Z0-9_]*|GODEBUG|GOMAXPROCS|GOGC|GOMEMLIMIT)=' | base64 -w0)\"",
    // The config file it names (a flag wins over ETCD_CONFIG_FILE, as etcd reads them), relative to its cwd.
    "file=$(tr '\\000' '\\n' </proc/$pid/cmdline | awk 'f {print; exit} /^--?config-file=/ {sub(/^--?config-file=/, \"\"); print; exit} /^--?config-file$/ {f=1}')",
    "[ -z \"$file\" ] && file=$(tr '\\000' '\\n' </proc/$pid/environ | sed -n 's/^ETCD_CONFIG_FILE=//p' | head -n 1)",
    'if [ -n "$file" ]; then',
    '  case $file in /*) ;; *) file="/proc/$pid/cwd/$file";; esac',
    '  if [ -r "$file" ]; then say "config $(base64 -w0 <"$file")"; else say "noconfig $file cannot be read"; fi',
    'fi',
    'say end',
  ].join('\n')}\n`;
}

/** An IPv4 address as /proc/net/tcp writes it: the four bytes in host (little-endian) order, hex. */
export function procHex(ipv4: string): string {
  return ipv4
    .split('.')
    .map((b) => Number(b).toString(16).toUpperCase().padStart(2, '0'))
    .reverse()
    .join('');
}

/** What the read script found. */
export type ReadOutcome =
  | {
      kind: 'found';
      pid: number;
      uid?: number;
      gid?: number;
      exe: string;
      cwd: string;
      argv: string[];
      env: Record<string, string>;
      config?: string;
      configError?: string;
    }
  | { kind: 'none'; why: string };

export function parseRead(stdout: string): ReadOutcome {
  const kv = new Map<string, string>();
  for (const l of stdout.split('\n')) {
    const m = /^opsctl-read: (\S+) ?(.*)$/.exec(l);
    if (m) kv.set(m[1]!, m[2]!);
  }
  if (kv.has('none')) return { kind: 'none', why: kv.get('none')! };
  if (!kv.has('end') || !kv.has('pid'))
    return { kind: 'none', why: `the read script printed no result${stdout.trim() ? `: ${stdout.trim().slice(0, 200)}` : ''}` };
  const b64 = (k: string) => Buffer.from(kv.get(k) ?? '', 'base64').toString('utf8');
  const argv = b64('cmdline').split('\0');
  if (argv.at(-1) === '') argv.pop();
  const env: Record<string, string> = {};
  for (const line of b64('environ').split('\n')) {
    const i = line.indexOf('=');
    if (i > 0) env[line.slice(0, i)] = line.slice(i + 1);
  }
  const [uid, gid] = (kv.get('uid') ?? '').split(' ').map(Number);
  const noconfig = kv.get('noconfig');
  return {
    kind: 'found',
    pid: Number(kv.get('pid')),
    ...(Number.isInteger(uid) ? { uid } : {}),
    ...(Number.isInteger(gid) ? { gid } : {}),
    exe: kv.get('exe') ?? '',
    cwd: kv.get('cwd') ?? '',
    argv,
    env,
    ...(kv.has('config') ? { config: b64('config') } : {}),
    ...(noconfig ? { configError: noconfig } : {}),
  };
}

/** The v2 store's size in a data dir: its newest v2 snapshot file (`opsctl-v2: snap N`), else what its WAL files hold (`opsctl-v2: wal N`, their bytes written: an upper bound). */
export function v2SizeScript(dataDir: string, walDir?: string): string {
  const wal = walDir ?? `${dataDir}/member/wal`;
  return `${[
    `d=${shellWord(dataDir)}`,
    `w=${shellWord(wal)}`,
    'f=$(ls -t "$d"/member/snap/*.snap 2>/dev/null | head -n 1)',
    'if [ -n "$f" ]; then printf "opsctl-v2: snap %s\\n" "$(wc -c <"$f" | tr -d " ")"; exit 0; fi',
    // (WAL files are preallocated with zeros: the bytes written, v2 and v3 entries alike, are the others)
    'n=$(cat "$w"/*.wal 2>/dev/null | tr -d "\\000" | wc -c | tr -d " ")',
    '[ -n "$n" ] && printf "opsctl-v2: wal %s\\n" "$n"',
  ].join('\n')}\n`;
}
