/**
 * The scripts a driver sends to a member's host (`sh -s` locally, or the driver's trial template,
 * e.g. `ssh {host} sudo sh -s`): the running member's settings from /proc (its command line, ETCD_*
 * environment, working directory, user, and the config file it names), found by the process that
 * listens on its client port; and --settle auto's v2 size there (v2SizeScript: the v2 store itself,
 * never the v3 values beside it). Every value sent is a single-quoted shell word.
 */
import type { MemberSpec } from '../cluster/cluster-file.js';
import type { HostShellResult, MemberTarget, V2SizeRead } from './driver.js';
import type { WalMark } from '../wal/wal-mark.js';
import { walDirOf, type MemberDirs } from '../wal/v2-data.js';
import { dataDirOf, type StartSettings } from './start-settings.js';

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
    // The etcd processes first (their command name read from /proc, no process started per PID): on a
    // busy host a walk of every process's fds takes most of the read; it runs only when none holds it.
    'if [ -n "$inodes" ]; then',
    '  for d in /proc/[0-9]*; do',
    '    c=; { read -r c <"$d/comm"; } 2>/dev/null || continue',
    '    case $c in etcd*) ;; *) continue;; esac',
    '    for ino in $inodes; do',
    '      if [ -n "$(find "$d/fd" -maxdepth 1 -lname "socket:\\[$ino\\]" 2>/dev/null | head -n 1)" ]; then pid=${d#/proc/}; break 2; fi',
    '    done',
    '  done',
    'fi',
    'for ino in $inodes; do',
    '  [ -z "$pid" ] || break',
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

/**
 * The v2 store's WAL reader for the member's host: perl (in every Debian, Ubuntu and RHEL base system),
 * walking etcd's WAL framing as v2-data.ts does here (wal/v2-data.ts: each frame a little-endian
 * uint64, low 56 bits the record's length, the top byte's padding; a record of type 2 carries a raft
 * entry; a normal entry's data is an InternalRaftRequest whose field 2 is its v2 Request, or the v2
 * Request itself as 3.2 wrote it). Only v2 PUT/POST requests count, their path and value bytes: never
 * a v3 request, whatever its size. Prints `BYTES WRITES`.
 */
const WAL_V2_PERL = String.raw`use strict;
my ($bytes, $writes) = (0, 0);
sub vi { my $ip = $_[1]; my ($v, $m) = (0, 1); while (1) { die "short\n" if $$ip >= length $_[0]; my $b = ord(substr($_[0], $$ip, 1)); $$ip++; $v += ($b & 127) * $m; return $v unless $b & 128; $m *= 128; } }
sub fields { my $n = length $_[0]; my $i = 0; my %f; while ($i < $n) { my $k = vi($_[0], \$i); my ($fn, $wt) = (int($k / 8), $k % 8); my $v;
  if ($wt == 0) { $v = vi($_[0], \$i) } elsif ($wt == 2) { my $l = vi($_[0], \$i); die "short\n" if $i + $l > $n; $v = substr($_[0], $i, $l); $i += $l }
  elsif ($wt == 1) { $i += 8; next } elsif ($wt == 5) { $i += 4; next } else { die "wire\n" }
  $f{$fn} = [$wt, $v] unless exists $f{$fn}; } return \%f; }
sub str { my $x = $_[0]->{$_[1]}; return ($x && $x->[0] == 2) ? $x->[1] : undef }
my $method = qr/\A(?:PUT|POST|DELETE|QGET|GET|HEAD|SYNC)\z/;
for my $file (@ARGV) {
  open(my $fh, '<:raw', $file) or die "cannot read $file: $!\n";
  while (1) {
    my $h; last unless (read($fh, $h, 8) // 0) == 8;
    my ($lo, $hi) = unpack('VV', $h);
    last if $lo == 0 && $hi == 0;
    my $top = ($hi >> 24) & 255;
    my $len = $lo + ($hi & 0xffffff) * 4294967296;
    my $rec; last unless (read($fh, $rec, $len) // 0) == $len;
    if ($top & 128) { my $p; read($fh, $p, $top & 7); }
    my $r = eval { fields($rec) } or next;
    next unless $r->{1} && $r->{1}[0] == 0 && $r->{1}[1] == 2;
    my $data = str($r, 3); next unless defined $data;
    my $e = eval { fields($data) } or next;
    next if $e->{1} && ($e->{1}[0] != 0 || $e->{1}[1] != 0);
    my $p = str($e, 4); next unless defined $p && length $p;
    my $q = eval { fields($p) } or next;
    my $two = str($q, 2); next unless defined $two;
    my $req = $two =~ $method ? $q : eval { fields($two) }; next unless $req;
    my $m = str($req, 2) // ''; next unless $m =~ $method;
    next unless $m eq 'PUT' || $m eq 'POST';
    $bytes += length(str($req, 3) // '') + length(str($req, 4) // ''); $writes++;
  }
  close $fh;
}
print "$bytes $writes\n";
`;

/**
 * The v2 store's size in a data dir, measured on its host: its newest v2 snapshot file (`opsctl-v2:
 * snap N`: each is the whole v2 store), else the v2 writes its WAL holds (`opsctl-v2: wal BYTES WRITES
 * FILES`, read by perl: v2 PUT/POST paths and values only, an upper bound of the store as deleted keys
 * count too; v3 requests are never counted). Without perl on the host, only every byte its WAL files hold
 * (`opsctl-v2: walall N`: v3 values included, an upper bound that proves no more than "under N").
 */
export function v2SizeScript(dataDir: string, walDir?: string): string {
  const wal = walDir ?? `${dataDir}/member/wal`;
  return `${[
    `d=${shellWord(dataDir)}`,
    `w=${shellWord(wal)}`,
    // (the greatest TERM-INDEX name is the newest, as member-files.ts picks it here)
    'f=$(ls "$d/member/snap" 2>/dev/null | grep -E "^[0-9a-f]{16}-[0-9a-f]{16}\\.snap$" | sort | tail -n 1)',
    'if [ -n "$f" ]; then printf "opsctl-v2: snap %s\\n" "$(wc -c <"$d/member/snap/$f" | tr -d " ")"; exit 0; fi',
    'set -- "$w"/*.wal',
    '[ -e "$1" ] || { printf "opsctl-v2: none no WAL file in %s\\n" "$w"; exit 0; }',
    'if command -v perl >/dev/null 2>&1; then',
    `  if r=$(perl -e ${shellWord(WAL_V2_PERL)} "$@"); then printf "opsctl-v2: wal %s %s\\n" "$r" "$#"; exit 0; fi`,
    'fi',
    // (WAL files are preallocated with zeros: the bytes written, v2 and v3 entries alike, are the others)
    'n=$(cat "$@" 2>/dev/null | tr -d "\\000" | wc -c | tr -d " ")',
    '[ -n "$n" ] && printf "opsctl-v2: walall %s\\n" "$n"',
  ].join('\n')}\n`;
}

export function parseV2Size(stdout: string): V2SizeRead {
  const snap = /^opsctl-v2: snap (\d+)$/m.exec(stdout);
  if (snap) return { kind: 'snap', bytes: Number(snap[1]) };
  const wal = /^opsctl-v2: wal (\d+) (\d+) (\d+)$/m.exec(stdout);
  if (wal) return { kind: 'wal', bytes: Number(wal[1]), writes: Number(wal[2]), files: Number(wal[3]) };
  const all = /^opsctl-v2: walall (\d+)$/m.exec(stdout);
  if (all) return { kind: 'walall', bytes: Number(all[1]) };
  const none = /^opsctl-v2: none (.*)$/m.exec(stdout);
  return { kind: 'none', why: none ? none[1]! : `the v2 size script printed no result${stdout.trim() ? `: ${stdout.trim().slice(0, 200)}` : ''}` };
}

/** What hostV2Size needs of a driver: the member's settings (its data dir) and a shell on its host. */
interface OnHost {
  startSettings(m: MemberSpec, target: MemberTarget): Promise<StartSettings | { why: string }>;
  hostShell(m: MemberSpec, script: string, timeoutMs: number): Promise<HostShellResult>;
}

/** The member's v2 store measured on its host (`reached`: the driver has a way there): the data dir its running process names, then the script there. */
export async function hostV2Size(d: OnHost, m: MemberSpec, { timeoutMs, reached }: { timeoutMs: number; reached: boolean }): Promise<V2SizeRead> {
  if (!reached)
    return {
      kind: 'none',
      why: "no way onto its host to measure it there (a trial template such as 'ssh {host} sudo sh -s', or driver.v2Size / --v2-size-cmd)",
    };
  const s = await d.startSettings(m, { version: '', running: true });
  if ('why' in s) return { kind: 'none', why: `on ${m.name}'s host: ${s.why}` };
  const dirs = await dataDirOf(s);
  if (!dirs) return { kind: 'none', why: `on ${m.name}'s host: its data dir cannot be told from its settings` };
  const r = await d.hostShell(m, v2SizeScript(dirs.dataDir, dirs.walDir), timeoutMs);
  if (r.failed && !r.stdout) return { kind: 'none', why: `on ${m.name}'s host: ${r.failed}` };
  return parseV2Size(r.stdout);
}

/** A file on a member's host, read through its shell (`missing`: cat said it is not there). */
export async function readHostFile(
  shell: (script: string) => Promise<HostShellResult>,
  file: string,
): Promise<{ text: string } | { why: string; missing: boolean }> {
  const r = await shell(`cat -- ${shellWord(file)}\n`);
  if (!r.failed && r.exitCode === 0) return { text: r.stdout };
  return { why: r.failed ?? (r.stderr.trim() || `exit ${r.exitCode}`), missing: !r.failed && /No such file/.test(r.stderr) };
}

/**
 * A member's data and WAL dirs on its host, from its running settings read there, kept once read (it is down
 * when its start and a put-back mark its WAL), and its WAL mark there through `shell`.
 */
export class HostData {
  private readonly seen = new Map<string, MemberDirs>();
  constructor(
    private readonly settings: (m: MemberSpec) => Promise<StartSettings | { why: string }>,
    private readonly shell: (m: MemberSpec, script: string) => Promise<HostShellResult>,
    /** Whether the driver has a way onto the host (the trial template). */
    private readonly reaches: () => boolean,
  ) {}

  async dirs(m: MemberSpec): Promise<MemberDirs | undefined> {
    const seen = this.seen.get(m.name);
    if (seen) return seen;
    const read = await this.settings(m);
    const dirs = 'why' in read ? undefined : await dataDirOf(read);
    if (dirs) this.seen.set(m.name, dirs);
    return dirs;
  }

  async walMark(m: MemberSpec): Promise<WalMark | { why: string }> {
    if (!this.reaches()) return { why: `no way onto ${m.name}'s host to read its WAL (a trial template such as 'ssh {host} sudo sh -s')` };
    const dirs = await this.dirs(m);
    if (!dirs) return { why: `${m.name}'s data dir on its host was not read while it ran` };
    return hostWalMark((script) => this.shell(m, script), walDirOf(dirs));
  }
}

/**
 * The WAL mark on a member's host (kv/wal/wal-mark.ts), where opsctl reads nothing itself: the WAL files' names
 * in order and a checksum (POSIX cksum) of the newest, the only one etcd appends to (a new segment, or one
 * purged, changes the names). One 64 MB preallocated file read, not every segment.
 */
export async function hostWalMark(shell: (script: string) => Promise<HostShellResult>, walDir: string): Promise<WalMark | { why: string }> {
  const script = [
    `d=${shellWord(walDir)}`,
    'say() { printf "opsctl-mark: %s\\n" "$*"; }',
    '[ -d "$d" ] || { say "none $d does not exist"; exit 0; }',
    'names=$(ls -- "$d" | grep "\\.wal$" | LC_ALL=C sort)',
    '[ -n "$names" ] || { say "none $d holds no WAL file"; exit 0; }',
    'last=$(printf "%s\\n" "$names" | tail -n 1)',
    'say "files $(printf "%s\\n" "$names" | wc -l) $(printf "%s\\n" "$names" | cksum | cut -d" " -f1)"',
    'say "last $last $(cksum <"$d/$last" | cut -d" " -f1,2)"',
    '',
  ].join('\n');
  const r = await shell(script);
  const line = (k: string) => new RegExp(`^opsctl-mark: ${k} (.*)$`, 'm').exec(r.stdout)?.[1];
  const none = line('none');
  if (none) return { why: `on its host: ${none}` };
  const files = line('files');
  const last = line('last');
  if (r.failed || !files || !last)
    return { why: `on its host: ${r.failed ?? `the WAL mark script printed no mark${r.stderr.trim() ? `: ${r.stderr.trim().split('\n').pop()}` : ''}`}` };
  const [count, names] = files.split(' ');
  const [name, sum, size] = last.split(' ');
  return { digest: `${names}/${name}/${sum}/${size}`, text: `${count} WAL files, the newest ${name} with checksum ${sum} (on its host)` };
}
