import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * Finding a local member's processes the way an operator would, not only through its PID file: the
 * processes whose command line names the member's data dir or config file (`/proc/<pid>/cmdline`),
 * and whatever listens on its client and peer ports (`/proc/net/tcp{,6}` → socket inode →
 * `/proc/<pid>/fd`). A process counts as the member only when its command line names the member's
 * data dir or config file; a listener that does not is someone else's, never signalled. Linux only:
 * without /proc every answer is empty (the PID file stays the only record).
 */

/** A process, as /proc shows it; `startTime` (field 22 of /proc/<pid>/stat) tells a recycled PID apart. */
export interface ProcInfo {
  pid: number;
  startTime: string;
  argv: string[];
}

/** What identifies a member on this machine. */
export interface MemberIdentity {
  name: string;
  dataDir?: string;
  configFile?: string;
  /** Client and peer ports. */
  ports: number[];
}

/** A process found holding a member's data dir or ports. */
export interface FoundProcess extends ProcInfo {
  /** Its command line names the member's data dir or config file. */
  member: boolean;
  /** Why it was found: "its command line names …", "it listens on port N". */
  why: string[];
}

/** The process start time (clock ticks since boot) of `pid`; undefined when it is gone (or a zombie). */
export function procStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields are counted after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (rest[0] === 'Z' || rest[0] === 'X') return undefined;
    return rest[19]; // field 22: starttime (rest[0] is field 3)
  } catch {
    return undefined;
  }
}

/** The argv of `pid`; undefined when it is gone or unreadable. */
export function procArgv(pid: number): string[] | undefined {
  try {
    const raw = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    const argv = raw.split('\0');
    if (argv[argv.length - 1] === '') argv.pop(); // each argument ends with a NUL
    return argv;
  } catch {
    return undefined;
  }
}

/** `pid` as /proc shows it now, or undefined when gone. */
export function procInfo(pid: number): ProcInfo | undefined {
  const startTime = procStartTime(pid);
  const argv = startTime === undefined ? undefined : procArgv(pid);
  return startTime === undefined || !argv ? undefined : { pid, startTime, argv };
}

/** Whether /proc is there to look at. */
export function haveProc(): boolean {
  try {
    readFileSync('/proc/self/stat');
    return true;
  } catch {
    return false;
  }
}

function pids(): number[] {
  try {
    return readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .map(Number)
      .filter((p) => p !== process.pid);
  } catch {
    return [];
  }
}

/** The value of `--flag X`, `--flag=X`, `-flag X` or `-flag=X` (Go's flag syntax, as etcd parses it) in argv. */
export function flagValues(argv: string[], flag: string): string[] {
  const out: string[] = [];
  argv.forEach((a, i) => {
    const bare = a.replace(/^--?/, '');
    if (bare === a) return;
    if (bare === flag && argv[i + 1] !== undefined) out.push(argv[i + 1]!);
    else if (bare.startsWith(`${flag}=`)) out.push(bare.slice(flag.length + 1));
  });
  return out;
}

/** Why `argv` is this member's process (its data dir or config file named), or undefined when it is not. */
export function namesMember(argv: string[], id: MemberIdentity): string | undefined {
  const same = (a: string, b: string | undefined) => b !== undefined && resolve(a) === resolve(b);
  const dir = flagValues(argv, 'data-dir').find((x) => same(x, id.dataDir));
  if (dir) return `its command line names ${id.name}'s data dir ${id.dataDir}`;
  const conf = flagValues(argv, 'config-file').find((x) => same(x, id.configFile));
  if (conf) return `its command line names ${id.name}'s config file ${id.configFile}`;
  return undefined;
}

/** Socket inodes listening (TCP, v4 and v6) on `ports`, with their port. */
export function listeningInodes(ports: number[]): Map<string, number> {
  const out = new Map<string, number>();
  if (!ports.length) return out;
  const want = new Set(ports);
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(f, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      const local = cols[1];
      const state = cols[3];
      const inode = cols[9];
      if (!local || state !== '0A' || !inode || inode === '0') continue; // 0A: LISTEN
      const port = parseInt(local.slice(local.lastIndexOf(':') + 1), 16);
      if (want.has(port)) out.set(inode, port);
    }
  }
  return out;
}

/** Which processes hold the socket inodes (readable /proc/<pid>/fd only: our own user's processes). */
function socketHolders(inodes: Map<string, number>): Map<number, number[]> {
  const out = new Map<number, number[]>();
  if (!inodes.size) return out;
  for (const pid of pids()) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let link: string;
      try {
        link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const m = /^socket:\[(\d+)\]$/.exec(link);
      const port = m ? inodes.get(m[1]!) : undefined;
      if (port !== undefined) out.set(pid, [...new Set([...(out.get(pid) ?? []), port])]);
    }
  }
  return out;
}

/**
 * Every process holding the member: its command line names the member's data dir or config file, or
 * it listens on one of the member's ports. `member` says which are really the member (only those
 * may be signalled); the others hold a port the member needs.
 */
export function findMemberProcesses(id: MemberIdentity): FoundProcess[] {
  const found = new Map<number, FoundProcess>();
  if (id.dataDir || id.configFile) {
    for (const pid of pids()) {
      const argv = procArgv(pid);
      const why = argv && namesMember(argv, id);
      if (!argv || !why) continue;
      const startTime = procStartTime(pid);
      if (startTime === undefined) continue; // gone, or a zombie
      found.set(pid, { pid, startTime, argv, member: true, why: [why] });
    }
  }
  for (const [pid, ports] of socketHolders(listeningInodes(id.ports))) {
    const why = ports.map((p) => `it listens on ${id.name}'s port ${p}`);
    const known = found.get(pid);
    if (known) {
      known.why.push(...why);
      continue;
    }
    const info = procInfo(pid);
    if (!info) continue;
    const mine = namesMember(info.argv, id);
    found.set(pid, { ...info, member: Boolean(mine), why: mine ? [mine, ...why] : why });
  }
  return [...found.values()].sort((a, b) => a.pid - b.pid);
}

/** The ports of a member's client and peer URLs. */
export function memberPorts(urls: Array<string | undefined>): number[] {
  const out: number[] = [];
  for (const u of urls) {
    if (!u) continue;
    try {
      const url = new URL(u);
      const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
      if (port > 0) out.push(port);
    } catch {
      // not a URL: nothing to look for
    }
  }
  return out;
}

/** A short description of a process for messages: "pid 123 (etcd --config-file /x/kv1.conf.yml)". */
export function describeProc(p: ProcInfo): string {
  const cmd = p.argv
    .map((a) => a.replace(/[^\x20-\x7e]/g, '?'))
    .join(' ')
    .slice(0, 160);
  return `pid ${p.pid} (${cmd})`;
}
