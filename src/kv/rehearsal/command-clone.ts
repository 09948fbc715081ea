/**
 * A command-driver cluster's clone (kv/rehearsal): members whose processes run on this machine and whose
 * start per version the driver's `settings` template prints. The operator's start and stop templates act
 * on the host's own state (PID files, units, the real members), so a clone never runs them: the clone's
 * members are started by opsctl itself, exactly as the settings say. The cluster as it runs now (each
 * process's command line, ETCD_* environment, working directory and user, read from /proc) is what the
 * clone starts first; every later start on a version runs what the settings template prints for it, which
 * is what the start template will run on the cluster. Everything else the run asks of the driver (its
 * checks, the binaries' versions, the v2 fix written past, the waits) goes through the command driver
 * itself: one executor, one plan, one driver's words.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MemberSpec } from '../cluster/cluster-file.js';
import {
  BY_HOST_TEMPLATES,
  type CloneReach,
  type CloneReads,
  type Cloning,
  type HostReads,
  type HostShellResult,
  type MemberDirs,
  type MemberDriver,
  type MemberTarget,
} from '../drivers/driver.js';
import { onThisHost } from '../drivers/local-reach.js';
import type { CommandDriver } from '../drivers/command.js';
import type { CommandCloningParts } from '../drivers/entry.js';
import { CLONE_RECORD, fetchedDir, findCommandClone, type ClonedMember } from './clone-find.js';
import { findAwayClone } from './clone-away.js';
import { LocalFileError } from '../../core/local-file.js';
import { fileProblem } from '../../core/file-errors.js';

/**
 * The command driver's clone (MemberDriver.cloning, given where the driver is made): each member's process
 * looked for here (clone-find.ts), and inside the clone its members started by opsctl itself from the record.
 * `given`: whether the driver has a settings template (its start on each version is known), and the same driver
 * with its reads of the hosts answered otherwise (entry.ts builds it: the clone's members fetched from their hosts).
 */
export function commandCloning(driver: CommandDriver, given: CommandCloningParts): Cloning {
  return {
    look: async (members, how) => {
      const reach: CloneReach = {
        settings: given.settings,
        ...(how?.copyKeys ? { copyKeys: true } : {}),
        here: (m: MemberSpec) => onThisHost(m.endpoint),
        running: (m: MemberSpec) => driver.runningSettings(m),
        shell: (m: MemberSpec, script: string) => driver.hostShell(m, script, 60_000),
        reach: (m) => driver.reach(m),
        versionSettings: (m, target) => driver.versionSettings(m, target),
        readConfig: (m, target) => driver.readConfig(m, target),
        hostBinary: (v) => driver.hostBinary(v),
      };
      // (members on other hosts, reached by the trial template: their files brought here, kv/rehearsal/clone-away.ts)
      const away = given.settings && members.some((m) => !reach.here(m)) && members.every((m) => driver.reach(m));
      driver.setClone(await (away ? findAwayClone(members, reach) : findCommandClone(members, reach)));
    },
    inClone: async (dataDir) => {
      const record = await readCloneRecord(dataDir);
      // inside the clone, what the driver would read on the members' hosts is read here, in each member's own mounts
      // (the same driver, built by entry.ts with those reads answered: hostAnswers)
      const reads = record.some((r) => r.fetched) ? given.answeredBy(hostAnswers(record, dataDir)) : driver;
      return new CloneMembers(reads, record, dataDir);
    },
  };
}

/** The record the parent left in the clone (CLONE_RECORD under opsctl's data directory, which is the clone's copy). */
export async function readCloneRecord(dataDir: string): Promise<ClonedMember[]> {
  const file = join(dataDir, CLONE_RECORD);
  const refuse = (why: string) =>
    new LocalFileError(file, why, {
      what: "the rehearsal's record of the clone's members",
      hint: 'opsctl writes it into the clone it makes: run opsctl kv upgrade --rehearse, not --rehearsal-clone by hand',
    });
  let doc: { members?: unknown };
  try {
    doc = JSON.parse(await readFile(file, 'utf8')) as { members?: unknown };
  } catch (err) {
    throw refuse(err instanceof SyntaxError ? `is not JSON: ${err.message}` : `cannot be read: ${fileProblem(err)}`);
  }
  const list = Array.isArray(doc?.members) ? doc.members : [];
  const ok = (x: unknown): x is ClonedMember => {
    const m = x as Partial<ClonedMember> | null;
    return Boolean(
      m &&
      typeof m.name === 'string' &&
      typeof m.version === 'string' &&
      typeof m.exe === 'string' &&
      Array.isArray(m.args) &&
      m.args.every((a) => typeof a === 'string') &&
      m.env &&
      typeof m.env === 'object' &&
      typeof m.dataDir === 'string',
    );
  };
  if (!list.length || !list.every(ok)) throw refuse("is not the record of a clone's members");
  return list;
}

/**
 * Members fetched from other hosts (kv/rehearsal/clone-away.ts): the driver's reads of their hosts (its host
 * shell, its settings and config templates, which would go to hosts the clone cannot reach) answered here,
 * each in the member's own mounts, from what the parent read on the hosts.
 */
function hostAnswers(record: readonly ClonedMember[], dataDir: string): HostReads {
  const member = (m: MemberSpec) => memberOf(record, m);
  return {
    hostShell: (m, script, timeoutMs) => shellIn(mountsOf(dataDir, member(m)), script, timeoutMs),
    versionSettings: (m, target) =>
      Promise.resolve(member(m).settings?.[target.version] ?? { why: `the settings of ${m.name} on ${target.version} were not read on its host` }),
    readConfig: (m, target) => Promise.resolve(member(m).configs?.[target.version]),
    // (a v2Size template runs on the hosts: the clone's run measures through the v2 API instead)
    v2DataBytes: () => Promise.resolve(undefined),
  };
}

/** A fetched member's copies (under the clone's copy of opsctl's data directory) and the paths they are mounted over (copy, path, …). */
function mountsOf(dataDir: string, rec: ClonedMember): string[] {
  return (rec.fetched ?? []).flatMap((p) => [join(fetchedDir(dataDir, rec.name), p), p]);
}

function memberOf(record: readonly ClonedMember[], m: MemberSpec): ClonedMember {
  const r = record.find((x) => x.name === m.name);
  if (!r) throw new Error(`the clone has no member ${m.name}`);
  return r;
}

/**
 * The clone's members, started and stopped by opsctl itself (processes of the clone's PID namespace, which
 * die with it); every read is the command driver's own.
 */
export class CloneMembers implements MemberDriver {
  readonly type = 'command';
  /** (answered as the command driver whose reads it makes) */
  readonly place = BY_HOST_TEMPLATES;
  private readonly procs = new Map<string, ChildProcess>();
  private readonly versions = new Map<string, MemberTarget>();
  readonly hostShell: MemberDriver['hostShell'] & {};
  readonly startSettings: MemberDriver['startSettings'] & {};
  readonly dataLayout?: MemberDriver['dataLayout'];

  private readonly logDir: string;

  /** `dataDir`: the clone's copy of opsctl's data directory (its members' logs, and fetched members' copies, are there). */
  constructor(
    private readonly inner: CloneReads,
    private readonly record: readonly ClonedMember[],
    private readonly dataDir: string,
  ) {
    this.logDir = join(dataDir, 'rehearsal');
    this.hostShell = (m, script, timeoutMs) => inner.hostShell(m, script, timeoutMs);
    this.startSettings = (m, target, reads) => inner.startSettings(m, target, reads);
    const layout = inner.dataLayout;
    if (layout) this.dataLayout = (m) => layout(m);
  }

  private member(m: MemberSpec): ClonedMember {
    return memberOf(this.record, m);
  }

  /** Its data dir and WAL dir, as the parent read them: the clone's checks (etcdutl check v2store, the just-in-time WAL read) read the copies there. */
  dataDirs(m: MemberSpec): Promise<MemberDirs | undefined> {
    const r = this.member(m);
    // (a fetched member's copies are mounted over its paths in its own mounts only: here they are read where they are)
    const at = (p: string) => (r.fetched ? join(fetchedDir(this.dataDir, r.name), p) : p);
    return Promise.resolve(r.dataDir ? { dataDir: at(r.dataDir), ...(r.walDir ? { walDir: at(r.walDir) } : {}) } : undefined);
  }

  current(m: MemberSpec): MemberTarget | undefined {
    return this.versions.get(m.name) ?? { version: this.member(m).version, running: true };
  }

  /** The first start: the member as it runs on the cluster now; every later one: what the settings template prints for the version. */
  async start(m: MemberSpec, target: MemberTarget): Promise<void> {
    const rec = this.member(m);
    let program = rec.exe;
    let args = rec.args;
    let env = rec.env;
    let cwd = rec.cwd;
    if (this.versions.has(m.name)) {
      const s = await this.inner.versionSettings(m, target);
      if ('why' in s) throw new Error(s.why);
      const bin = target.binDir
        ? join(target.binDir, 'etcd')
        : (this.inner.hostBinary(target.version) ?? (target.version === rec.version ? rec.exe : undefined));
      if (!bin) throw new Error(`the clone's ${m.name}: the path of the ${target.version} binary is not known (--target-bin ${target.version}=DIR)`);
      [program, args, env, cwd] = [bin, s.args, s.env, s.cwd ?? rec.cwd];
    }
    mkdirSync(this.logDir, { recursive: true });
    const log = openSync(join(this.logDir, `${m.name}.log`), 'a');
    const root = process.getuid?.() === 0;
    // (a member fetched from its host: started in a mount namespace of its own, its copies over its paths)
    if (rec.fetched) [program, args] = inMounts(mountsOf(this.dataDir, rec), [program, ...args]);
    const child = spawn(program, args, {
      cwd: cwd && existsSync(cwd) ? cwd : '/',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
      stdio: ['ignore', log, log],
      ...(root && rec.user && rec.user.uid !== 0 ? { uid: rec.user.uid, gid: rec.user.gid } : {}),
    });
    closeSync(log);
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (err) => reject(new Error(`the clone's ${m.name}: ${program} did not start: ${err.message}`)));
    });
    // (the clone's members die with its PID namespace when this run ends: they do not hold its exit)
    child.unref();
    this.procs.set(m.name, child);
    this.versions.set(m.name, target);
  }

  stop(m: MemberSpec): Promise<void> {
    this.procs.get(m.name)?.kill('SIGTERM');
    return Promise.resolve();
  }

  kill(m: MemberSpec): Promise<void> {
    this.procs.get(m.name)?.kill('SIGKILL');
    return Promise.resolve();
  }

  isRunning(m: MemberSpec): Promise<boolean> {
    const p = this.procs.get(m.name);
    return Promise.resolve(Boolean(p && p.exitCode === null && p.signalCode === null));
  }

  binaryVersion(m: MemberSpec, target: MemberTarget) {
    return this.inner.binaryVersion(m, target);
  }
  hostBinary(version: string) {
    return this.inner.hostBinary(version);
  }
  readConfig(m: MemberSpec, target: MemberTarget) {
    return this.inner.readConfig(m, target);
  }
  v2DataBytes(m: MemberSpec) {
    return this.inner.v2DataBytes(m);
  }
  hostV2Size(m: MemberSpec) {
    return this.inner.hostV2Size(m);
  }
  measuresV2(m: MemberSpec) {
    return this.inner.measuresV2(m);
  }
  runsHere(m: MemberSpec) {
    return this.inner.runsHere(m);
  }
}

/** Inside a mount namespace of its own: each copy (COPY PATH pairs) mounted over its path (a copy missing: nothing runs), then the command. */
const MOUNTS = [
  'while [ "$1" != -- ]; do',
  // (a copy that is missing is never replaced by the cluster member's own files: the member is not started)
  '  [ -e "$1" ] || { echo "opsctl: the clone has no copy of $2 ($1)" >&2; exit 1; }',
  '  mount --bind "$1" "$2" || exit 1',
  '  shift 2',
  'done',
  'shift',
  'exec "$@"',
].join('\n');

/** `command` in a mount namespace of its own with `pairs` (copy, path, …) mounted: the argv to spawn. Values are arguments, never code. */
export function inMounts(pairs: readonly string[], command: readonly string[]): [string, string[]] {
  return ['unshare', ['--mount', '--propagation', 'private', '--', 'sh', '-c', MOUNTS, 'sh', ...pairs, '--', ...command]];
}

/** A host shell of a fetched member inside the clone: `sh -s` in its own mounts, `script` on its input. */
function shellIn(pairs: readonly string[], script: string, timeoutMs: number): Promise<HostShellResult> {
  const [program, args] = inMounts(pairs, ['sh', '-s']);
  return new Promise((resolve) => {
    const child = spawn(program, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => void (stdout += String(b)));
    child.stderr.on('data', (b: Buffer) => void (stderr += String(b)));
    child.stdin.on('error', () => undefined);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      resolve({ stdout, stderr, failed: `${program} did not run: ${err.message}` });
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ stdout, stderr, exitCode: code ?? undefined, ...(signal ? { failed: `\`sh -s\` in the member's mounts ended by ${signal}` } : {}) });
    });
    child.stdin.end(script);
  });
}
