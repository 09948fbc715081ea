import { closeSync, existsSync, openSync, readFileSync, rmSync } from 'node:fs';
import { copyMemberData, onDiskBytes, putBackMemberData } from './backup-copy.js';
import { formatSize } from '@opsctl/shared/size.js';
import { mkdir, rm } from 'node:fs/promises';
import { isAbsolute, join, relative } from 'node:path';
import type { MemberSpec, SandboxSpec } from '../cluster/cluster-file.js';
import {
  capabilitiesOf,
  type ProgramCapabilities,
  type DataLayout,
  type HostShellResult,
  type MemberDirs,
  type MemberDriver,
  type MemberTarget,
} from './driver.js';
import { dataDirOf, walDirNow, type StartSettings } from './start-settings.js';
import { type RestoreRequest, STARTS_HERE } from './driver.js';
import { checkLocalDataDir, dropStaged, stagedDir, swapLocalData } from './restore-data.js';
import { promised } from '../../core/promised.js';
import { OpsError } from '../../core/errors.js';
import {
  describeProc,
  findMemberProcesses,
  haveProc,
  listeningInodes,
  memberPorts,
  namesMember,
  procInfo,
  procStartTime,
  type FoundProcess,
  type MemberIdentity,
} from './member-procs.js';
import { newestSnapBytes, readRecord, recordPath, writeDurably, writeRecord, type MemberRecord } from './member-files.js';

type Exec = typeof import('execa').execa;

/**
 * What the sandbox's members run: the simulated member or etcd from a directory, chosen with the
 * sandbox (kv/sandbox/members.ts, the one place that knows which). The local driver starts
 * members through it and answers the flows' questions (capabilities, etcdFromDir) from it.
 */
export interface MemberProgram {
  /** What a flow may do with the program (absent: etcd's answers). */
  readonly capabilities?: ProgramCapabilities;
  /** Every start runs `etcd` from target.binDir. */
  readonly etcdFromDir?: boolean;
  /**
   * The command that starts member `s` of `sandbox` on `target`: the file, the program's own words
   * (a simulated member's script and version), then the member's settings (its config file, or flags).
   */
  command(sandbox: SandboxSpec, s: MemberSpec, target: MemberTarget): { file: string; program: string[]; settings: string[] };
  /** Why a start on `target` has nothing to run (no etcd binaries known for it); undefined when it has. */
  missing(target: MemberTarget): string | undefined;
  /** The version a start on `target` runs: `etcd --version` of target.binDir, or the version a simulated member is told. */
  version(m: MemberSpec, target: MemberTarget): Promise<{ version: string } | { why: string }>;
  /** Before a start from a config file: `target.settings` for this start only written into it, or a kept original put back. */
  beforeStart(configFile: string, target: MemberTarget): Promise<void>;
  /** The member's data rebuilt from the snapshot at `staged` (beside its live data dir), for kv restore. */
  stageRestore(m: MemberSpec, r: RestoreRequest, staged: string): Promise<void>;
}

/** The PID in a member's PID file, if the file exists. */
export function readPid(m: MemberSpec): number | undefined {
  if (!m.pidFile || !existsSync(m.pidFile)) return undefined;
  const n = Number(readFileSync(m.pidFile, 'utf8').trim());
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

/**
 * Whether `pid` is alive and is this member's process (its command line names the member's config
 * file or data dir), so a recycled PID is never mistaken for, or signalled as, a member.
 */
export function pidAlive(pid: number, m: MemberSpec): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  if (!haveProc()) return true; // no /proc: trust kill(0)
  const info = procInfo(pid);
  if (!info) return false; // gone, or a zombie
  const own = identity(m);
  if (!own.dataDir && !own.configFile) return true;
  // The record names the exact process (PID and start time): another start time is a recycled PID.
  const rec = readRecord(m);
  if (rec?.pid === pid && rec.startTime !== undefined && rec.startTime !== info.startTime) return false;
  return Boolean(namesMember(info.argv, own));
}

/** What identifies a local member on this machine (data dir, config file, client and peer ports). */
export function identity(m: MemberSpec): MemberIdentity {
  return { name: m.name, dataDir: m.dataDir, configFile: m.configFile, ports: memberPorts([m.endpoint, m.peerUrl]) };
}

/** A member's processes on this machine: those it is (any way it can be found), and others holding its ports. */
export interface MemberProcesses {
  /** Processes that are the member (named by its PID file or record and alive, or naming its data dir or config file). */
  member: FoundProcess[];
  /** Processes listening on the member's ports that are not the member: never signalled, named. */
  foreign: FoundProcess[];
  /** The member's processes its PID file and record do not name (a start killed before its record). */
  unrecorded: FoundProcess[];
}

/** Looks for the member everywhere: its record, its PID file, /proc's command lines and listeners. */
export function memberProcesses(m: MemberSpec): MemberProcesses {
  const pid = readPid(m);
  if (!haveProc()) {
    // No /proc (not Linux): the PID file is the only record there is.
    const member = pid !== undefined && pidAlive(pid, m) ? [{ pid, startTime: '', argv: [], member: true, why: ['its PID file'] }] : [];
    return { member, foreign: [], unrecorded: [] };
  }
  const found = findMemberProcesses(identity(m));
  const rec = readRecord(m);
  const recorded = (p: FoundProcess) =>
    rec?.state === 'started' && rec.pid !== undefined ? rec.pid === p.pid && rec.startTime === p.startTime : pid === p.pid;
  const member = found.filter((p) => p.member);
  return { member, foreign: found.filter((p) => !p.member), unrecorded: member.filter((p) => !recorded(p)) };
}

/**
 * memberProcesses, without the /proc scan when the record settles it (the driver's hot path: a scan
 * costs tens of milliseconds on a busy machine): a full record ("started", PID and start time) whose
 * process lives is the member; one whose process is gone means no member process lives, since every
 * start writes its intent before it spawns, unless something listens on the member's ports (then the
 * full look, to name it).
 */
export function quickLook(m: MemberSpec): MemberProcesses {
  const rec = readRecord(m);
  if (haveProc() && rec?.state === 'started' && rec.pid !== undefined && rec.startTime !== undefined) {
    const info = procInfo(rec.pid);
    if (info?.startTime === rec.startTime && namesMember(info.argv, identity(m))) {
      return { member: [{ ...info, member: true, why: ['its PID file'] }], foreign: [], unrecorded: [] };
    }
    if (!listeningInodes(identity(m).ports).size) return { member: [], foreign: [], unrecorded: [] };
  }
  return memberProcesses(m);
}

/** Signals `p` if it is still the same process (same start time): never a PID recycled since it was found. */
function signalSame(p: FoundProcess, sig: NodeJS.Signals): void {
  if (p.startTime && procStartTime(p.pid) !== p.startTime) return;
  try {
    process.kill(p.pid, sig);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** What a local driver works with besides its sandbox: the members' program, how it runs commands and saves the sandbox, what it tells. */
export interface LocalDriverParts {
  program: MemberProgram;
  exec: Exec;
  save: (s: SandboxSpec) => Promise<void>;
  env?: NodeJS.ProcessEnv;
  /** Told when a member's process is found that its PID file does not name (and what is done with it). */
  notice?: (text: string) => void;
  /** The debug lines of each start, point by point (--debug): intent written, spawned, recorded. */
  trace?: (line: string) => void;
}

/** Processes this machine starts: the sandbox. Each member has a PID file, a data dir and a binary. */
export class LocalDriver implements MemberDriver {
  readonly type = 'local';
  readonly place = STARTS_HERE;
  readonly sandbox: SandboxSpec;
  private readonly parts: Required<Omit<LocalDriverParts, 'trace'>> & Pick<LocalDriverParts, 'trace'>;

  constructor(sandbox: SandboxSpec, parts: LocalDriverParts) {
    this.sandbox = sandbox;
    this.parts = { ...parts, env: parts.env ?? process.env, notice: parts.notice ?? (() => undefined) };
  }

  get capabilities(): ProgramCapabilities | undefined {
    return this.parts.program.capabilities;
  }

  get etcdFromDir(): boolean | undefined {
    return this.parts.program.etcdFromDir;
  }

  private spec(m: MemberSpec): MemberSpec {
    return this.sandbox.members.find((x) => x.name === m.name) ?? m;
  }

  /**
   * The sandbox's directory holds every member's data dir, config file and records: a copy of it is a
   * clone. Its members' processes (found as isRunning finds them) are paused together while it is copied:
   * a copy of a live member under writes is torn (its db ahead of its WAL, or a page half new). A member's
   * own WAL dir outside it (wal-dir) is copied too (while they are paused), mounted over its path in the clone.
   */
  clonable(): { paths: string[]; pause: number[]; outside?: string[] } | { why: string } {
    const can = capabilitiesOf(this.parts.program);
    if (!can.etcdData) return { why: `${can.what} members keep no etcd data to rehearse on` };
    const inside = (p: string) => !relative(this.sandbox.dir, p).startsWith('..') && !isAbsolute(relative(this.sandbox.dir, p));
    const outside = this.sandbox.members
      .map((m) => this.settingsFor(m, { version: m.version ?? '', binDir: m.binDir, running: true }))
      .map((set) => ('why' in set ? undefined : walDirNow(set)))
      .filter((w): w is string => Boolean(w) && !inside(w!));
    return {
      paths: [this.sandbox.dir],
      pause: this.sandbox.members.flatMap((m) => quickLook(this.spec(m)).member.map((p) => p.pid)),
      ...(outside.length ? { outside } : {}),
    };
  }

  /**
   * Whether the member has a live process: the recorded one (PID and start time, its command line
   * naming the member), else any process found by the member's data dir, config file or ports. A
   * member process its record does not name (a start cut short between the spawn and the record)
   * is named and taken as the member's from then on, so every later stop reaches it.
   */
  async isRunning(m: MemberSpec): Promise<boolean> {
    const s = this.spec(m);
    const found = quickLook(s);
    const [only, ...more] = found.unrecorded;
    if (only && !more.length) await this.adopt(s, only, readRecord(s));
    return found.member.length > 0;
  }

  /** Records a member process found without a record as the member's (its PID file and record now name it). */
  private async adopt(s: MemberSpec, p: FoundProcess, rec: MemberRecord | undefined, { say = true }: { say?: boolean } = {}): Promise<void> {
    const intended = rec !== undefined && [rec.file, ...rec.args].join('\0') === p.argv.join('\0');
    if (say)
      this.parts.notice(
        `${s.name}: ${describeProc(p)} is ${s.name}'s process (${p.why.join('; ')}) but its PID file did not name it ` +
          `(a start cut short before its record): ${s.name} is tracked by this PID from now on`,
      );
    const target = intended ? rec.target : { version: s.version ?? '', binDir: s.binDir };
    const [file = '', ...args] = p.argv;
    writeRecord(s, {
      member: s.name,
      state: 'started',
      file,
      args,
      target,
      dataDir: s.dataDir,
      configFile: s.configFile,
      ports: identity(s).ports,
      pid: p.pid,
      startTime: p.startTime,
      at: new Date().toISOString(),
    });
    if (s.pidFile) writeDurably(s.pidFile, `${p.pid}\n`);
    if (intended && (s.version !== rec.target.version || s.binDir !== rec.target.binDir)) {
      s.version = rec.target.version;
      s.binDir = rec.target.binDir;
      await this.parts.save(this.sandbox);
    }
  }

  /** SIGTERM to every process that is the member (named first when its PID file did not name it). */
  stop(m: MemberSpec): Promise<void> {
    return this.signal(this.spec(m), 'SIGTERM');
  }

  kill(m: MemberSpec): Promise<void> {
    return this.signal(this.spec(m), 'SIGKILL');
  }

  /** `sig` to every process that is the member; one its PID file did not name is named, and recorded first (a later look finds it at once). */
  private async signal(s: MemberSpec, sig: NodeJS.Signals): Promise<void> {
    const found = quickLook(s);
    for (const p of found.unrecorded)
      this.parts.notice(`${s.name}: sending ${sig} to ${describeProc(p)} (${p.why.join('; ')}), which its PID file did not name`);
    const [only, ...more] = found.unrecorded;
    if (only && !more.length) await this.adopt(s, only, readRecord(s), { say: false });
    for (const p of found.member) signalSame(p, sig);
  }

  current(m: MemberSpec): MemberTarget | undefined {
    const s = this.spec(m);
    return { version: s.version ?? '', binDir: s.binDir };
  }

  /**
   * What the member's next start on `target` runs (this driver starts it: argv() below, with no
   * environment but PATH, from opsctl's working directory), its config file read.
   */
  startSettings(m: MemberSpec, target: MemberTarget): Promise<StartSettings | { why: string }> {
    return promised(() => this.settingsFor(m, target));
  }

  private settingsFor(m: MemberSpec, target: MemberTarget): StartSettings | { why: string } {
    const s = this.spec(m);
    // (without the target's binaries the settings still feed the rules; the trial says what is missing)
    if (target.running && !target.binDir) target = { ...target, binDir: s.binDir };
    const noProgram = this.parts.program.missing(target);
    // the program: the etcd binary, or a simulated member's node, script and version
    const { file, program, settings } = this.parts.program.command(this.sandbox, s, noProgram ? { ...target, binDir: s.binDir ?? '/' } : target);
    let config: StartSettings['config'];
    if (s.configFile) {
      try {
        config = { file: s.configFile, text: readFileSync(s.configFile, 'utf8') };
      } catch (err) {
        return { why: `its config file ${s.configFile} cannot be read: ${(err as Error).message}` };
      }
    }
    return {
      program: noProgram ? [] : [file, ...program],
      args: settings,
      env: {},
      ...(config ? { config } : {}),
      from: { args: "the sandbox's start command", env: "the sandbox's start environment" },
      ...(noProgram ? { noProgram } : {}),
      ...(this.parts.program.capabilities ? { capabilities: this.parts.program.capabilities } : {}),
    };
  }

  /** `etcd --version` of the binary the start runs (a simulated member is the version it is told). */
  binaryVersion(m: MemberSpec, target: MemberTarget): Promise<{ version: string } | { why: string }> {
    // a rolling restart on the member's own version: the binary it runs now
    return this.parts.program.version(m, target.running && !target.binDir ? { ...target, binDir: this.spec(m).binDir } : target);
  }

  /** `sh -s` on this machine, the script on its standard input. */
  async hostShell(_m: MemberSpec, script: string, timeoutMs: number): Promise<HostShellResult> {
    // /bin/sh by path and the system's tool folders after the caller's PATH: a PATH that holds only
    // opsctl's own executable (a host with no node) still gets a shell and the tools a script uses
    const path = [this.parts.env.PATH, '/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'].filter(Boolean).join(':');
    const r = await this.parts.exec('/bin/sh', ['-s'], {
      input: script,
      reject: false,
      timeout: timeoutMs,
      extendEnv: false,
      env: { PATH: path },
    });
    const failed = r.timedOut ? `timed out after ${timeoutMs} ms` : r.exitCode === undefined ? (r.originalMessage ?? 'did not run') : undefined;
    return { stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? ''), exitCode: r.exitCode, ...(failed ? { failed } : {}) };
  }

  v2DataBytes(m: MemberSpec): Promise<number | undefined> {
    return promised(() => newestSnapBytes(this.spec(m).dataDir));
  }

  /**
   * The member's data dir (the sandbox's) and, where its settings set one (its config file's wal-dir, or
   * the flag it starts with), its WAL dir: what every tool run here on its data is given.
   */
  async dataDirs(m: MemberSpec): Promise<MemberDirs | undefined> {
    const s = this.spec(m);
    if (!s.dataDir) return undefined;
    const set = this.settingsFor(m, { version: s.version ?? '', binDir: s.binDir, running: true });
    const read = 'why' in set ? undefined : await dataDirOf(set);
    return { dataDir: s.dataDir, ...(read?.walDir ? { walDir: read.walDir } : {}) };
  }

  async dataLayout(m: MemberSpec): Promise<DataLayout> {
    const dirs = await this.dataDirs(m);
    const dir = this.spec(m).dataDir ?? '';
    return {
      dir,
      ...(dirs?.walDir ? { walDir: dirs.walDir } : {}),
      exists: existsSync(join(dir, 'member')),
      wal: existsSync(dirs?.walDir ?? join(dir, 'member', 'wal')),
      db: existsSync(join(dir, 'member', 'snap', 'db')),
    };
  }

  async backupDataDir(m: MemberSpec, dest: string): Promise<string> {
    const dirs = await this.dataDirs(m);
    return promised(() => {
      // Synchronous: the member is stopped and nothing else runs meanwhile; a thread-pool round trip
      // per file and per stat is several times slower for a small dir. In proportion: backup-copy.ts.
      // A member with its own WAL dir: that WAL is the copy's member/wal (one copy holds it all).
      const c = copyMemberData(dirs ?? { dataDir: this.spec(m).dataDir! }, dest);
      return `${c.files} files, ${formatSize(c.onDisk)} on disk (${c.bytes} bytes${c.skipped ? `; the WAL's preallocated next segment left out` : ''}) copied to ${dest}${dirs?.walDir ? ` (its WAL dir ${dirs.walDir} as member/wal)` : ''}`;
    });
  }

  dropBackup(_m: MemberSpec, dest: string): Promise<string> {
    return promised(() => {
      if (!existsSync(dest)) return `${dest}: already gone`;
      const bytes = onDiskBytes(dest);
      rmSync(dest, { recursive: true, force: true });
      return `${dest} removed (${formatSize(bytes)} freed)`;
    });
  }

  async restoreBackup(m: MemberSpec, dest: string, run: string): Promise<string> {
    const dirs = (await this.dataDirs(m)) ?? { dataDir: this.spec(m).dataDir! };
    return promised(() => putBackMemberData(dest, dirs, run));
  }

  /** The member's config file (kv sandbox up writes one per member), for the 3.3 configuration check. */
  readConfig(m: MemberSpec): Promise<{ file: string; text: string } | undefined> {
    return promised(() => {
      const file = this.spec(m).configFile;
      if (!file || !existsSync(file)) return undefined;
      return { file, text: readFileSync(file, 'utf8') };
    });
  }

  /** The argv that starts a member on `target`. */
  argv(m: MemberSpec, target: MemberTarget): { file: string; args: string[] } {
    const { file, program, settings } = this.parts.program.command(this.sandbox, this.spec(m), target);
    return { file, args: [...program, ...settings] };
  }

  /**
   * Starts the member without ever losing its process: the intent (what is about to run, its data
   * dir and ports) is written durably first, then the spawn, then the PID and the process's start
   * time, durably again. A kill anywhere in between leaves a record or a process that isRunning,
   * stop and kv sandbox down find by the data dir and ports. Refuses while the member runs, and while
   * another program holds one of its ports (named: the member would only die on it).
   */
  async start(m: MemberSpec, target: MemberTarget): Promise<void> {
    const s = this.spec(m);
    const found = quickLook(s);
    if (found.member.length) throw new Error(`member ${s.name} is already running (${found.member.map(describeProc).join(', ')})`);
    const [holder] = found.foreign;
    if (holder) {
      throw new OpsError(`member ${s.name} cannot start: ${describeProc(holder)} holds its port (${holder.why.join('; ')}) and is not ${s.name}`, 1, {
        code: 'port_taken',
        hint: `its command line names neither ${s.dataDir} nor ${s.configFile ?? 'the member config file'}: stop that program (kill ${holder.pid}) or free the port, then run the command again`,
      });
    }
    await mkdir(s.dataDir!, { recursive: true });
    if (s.configFile) await this.parts.program.beforeStart(s.configFile, target);
    const { file, args } = this.argv(s, target);
    const base = {
      member: s.name,
      file,
      args,
      target: { version: target.version, binDir: target.binDir },
      dataDir: s.dataDir,
      configFile: s.configFile,
      ports: identity(s).ports,
    };
    this.parts.trace?.(`[kv] ${s.name}: start: before-intent`);
    writeRecord(s, { ...base, state: 'starting', at: new Date().toISOString() });
    this.parts.trace?.(`[kv] ${s.name}: start: after-intent (the intent is written)`);
    const childEnv: Record<string, string> = { PATH: this.parts.env.PATH ?? '/usr/bin:/bin' };
    if (this.parts.env.OPSCTL_KV_MEMBER) childEnv.OPSCTL_KV_MEMBER = this.parts.env.OPSCTL_KV_MEMBER;
    const fd = openSync(s.logFile!, 'a');
    let pid: number;
    try {
      const child = this.parts.exec(file, args, {
        detached: true,
        cleanup: false,
        stdin: 'ignore',
        // A raw file descriptor: the child writes its log itself, nothing is piped through opsctl
        // (which exits long before the member). execa's types list only 0-2 as numbers.
        stdout: fd as 1,
        stderr: fd as 2,
        extendEnv: false,
        env: childEnv,
        reject: false,
      });
      child.catch(() => undefined);
      child.unref();
      if (!child.pid) throw new Error(`member ${s.name}: could not start ${file}`);
      pid = child.pid;
    } finally {
      closeSync(fd);
    }
    this.parts.trace?.(`[kv] ${s.name}: start: after-spawn (pid ${pid})`);
    writeRecord(s, { ...base, state: 'started', pid, startTime: procStartTime(pid), at: new Date().toISOString() });
    if (s.pidFile) writeDurably(s.pidFile, `${pid}\n`);
    this.parts.trace?.(`[kv] ${s.name}: start: after-record (pid ${pid} recorded)`);
    s.version = target.version;
    s.binDir = target.binDir;
    await this.parts.save(this.sandbox);
  }

  checkRestore(m: MemberSpec): Promise<string> {
    return promised(() => {
      checkLocalDataDir(this.spec(m));
      return `data dir ${this.spec(m).dataDir}`;
    });
  }

  async prepareRestore(m: MemberSpec, r: RestoreRequest): Promise<void> {
    const s = this.spec(m);
    const staged = stagedDir(s.dataDir!, r.run);
    rmSync(staged, { recursive: true, force: true });
    await this.parts.program.stageRestore(s, r, staged);
  }

  abandonRestore(m: MemberSpec, r: RestoreRequest): Promise<void> {
    return promised(() => {
      dropStaged(this.spec(m), r.run);
    });
  }

  async restoreData(m: MemberSpec, r: RestoreRequest): Promise<string> {
    const detail = swapLocalData(this.sandbox, this.spec(m), r, (await this.dataDirs(m))?.walDir);
    await this.parts.save(this.sandbox);
    return detail;
  }

  /** Forget a member's files (sandbox down). */
  async remove(m: MemberSpec): Promise<void> {
    const s = this.spec(m);
    if (s.pidFile) await rm(s.pidFile, { force: true });
    const rec = recordPath(s);
    if (rec) await rm(rec, { force: true });
  }
}
