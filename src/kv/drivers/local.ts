import { closeSync, cpSync, existsSync, openSync, readFileSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MemberSpec, SandboxSpec } from '../cluster.js';
import type { DataLayout, MemberDriver, MemberTarget } from './driver.js';
import { checkLocalDataDir, dropStaged, stageLocalData, swapLocalData, type RestoreRequest } from '../restore-data.js';
import { promised } from '../../core/promised.js';

type Exec = typeof import('execa').execa;

declare const __OPSCTL_SEA__: boolean | undefined;

/**
 * How to start a simulated member: the running executable itself with `__kv-member` when opsctl is
 * one file (the single executable has no node to run a script with), else node with the member script.
 */
export function memberArgs(env: NodeJS.ProcessEnv = process.env): string[] {
  if (typeof __OPSCTL_SEA__ === 'boolean' && __OPSCTL_SEA__) return ['__kv-member'];
  return [memberProgram(env)];
}

/** Where the simulated member program is: dist/kv-member.cjs next to the bundle, or from the sources. */
export function memberProgram(env: NodeJS.ProcessEnv = process.env): string {
  const here = import.meta.dirname; // the build makes it the chunk's __dirname
  const candidates = [
    env.OPSCTL_KV_MEMBER,
    join(here, '../kv-member.cjs'), // dist/chunks/*.cjs
    join(here, 'kv-member.cjs'), // dist/*.cjs
    join(here, '../../../dist/kv-member.cjs'), // src/kv/drivers/*.ts
  ].filter((x): x is string => Boolean(x));
  const found = candidates.find((c) => existsSync(c));
  if (!found) throw new Error(`the simulated kv member program is missing (looked for ${candidates.join(', ')}): run npm run build`);
  return found;
}

function dirBytes(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    n += e.isDirectory() ? dirBytes(p) : statSync(p).size;
  }
  return n;
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
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (/\) Z /.test(stat)) return false; // a zombie is gone
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    const own = [m.configFile, m.dataDir].filter((x): x is string => Boolean(x));
    return !own.length || own.some((x) => cmdline.includes(x));
  } catch {
    return true; // no /proc: trust kill(0)
  }
}

/** Processes this machine starts: the sandbox. Each member has a PID file, a data dir and a binary. */

export class LocalDriver implements MemberDriver {
  readonly type = 'local';

  constructor(
    readonly sandbox: SandboxSpec,
    private readonly exec: Exec,
    private readonly save: (s: SandboxSpec) => Promise<void>,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  private spec(m: MemberSpec): MemberSpec {
    return this.sandbox.members.find((x) => x.name === m.name) ?? m;
  }

  isRunning(m: MemberSpec): Promise<boolean> {
    return promised(() => {
      const s = this.spec(m);
      const pid = readPid(s);
      return pid !== undefined && pidAlive(pid, s);
    });
  }

  stop(m: MemberSpec): Promise<void> {
    return promised(() => {
      const s = this.spec(m);
      const pid = readPid(s);
      if (pid !== undefined && pidAlive(pid, s)) process.kill(pid, 'SIGTERM');
    });
  }

  kill(m: MemberSpec): Promise<void> {
    return promised(() => {
      const s = this.spec(m);
      const pid = readPid(s);
      if (pid !== undefined && pidAlive(pid, s)) process.kill(pid, 'SIGKILL');
    });
  }

  current(m: MemberSpec): MemberTarget | undefined {
    const s = this.spec(m);
    return { version: s.version ?? '', binDir: s.binDir };
  }

  v2DataBytes(m: MemberSpec): Promise<number | undefined> {
    return promised(() => {
      const dir = join(this.spec(m).dataDir ?? '', 'member', 'snap');
      if (!existsSync(dir)) return 0;
      return readdirSync(dir)
        .filter((f) => f.endsWith('.snap'))
        .reduce((n, f) => n + statSync(join(dir, f)).size, 0);
    });
  }

  dataLayout(m: MemberSpec): Promise<DataLayout> {
    return promised(() => {
      const dir = this.spec(m).dataDir ?? '';
      return { dir, exists: existsSync(join(dir, 'member')), wal: existsSync(join(dir, 'member', 'wal')), db: existsSync(join(dir, 'member', 'snap', 'db')) };
    });
  }

  backupDataDir(m: MemberSpec, dest: string): Promise<string> {
    return promised(() => {
      const src = this.spec(m).dataDir!;
      // Synchronous copy: the member is stopped and nothing else runs meanwhile; fs.promises.cp
      // makes a thread-pool round trip per file and per stat, several times slower for a small dir.
      rmSync(dest, { recursive: true, force: true });
      cpSync(src, dest, { recursive: true });
      return `${dirBytes(dest)} bytes copied to ${dest}`;
    });
  }

  restoreBackup(m: MemberSpec, dest: string, run: string): Promise<string> {
    return promised(() => {
      const dir = this.spec(m).dataDir!;
      const failed = `${dir}.failed-${run}`;
      rmSync(failed, { recursive: true, force: true });
      if (existsSync(dir)) renameSync(dir, failed);
      cpSync(dest, dir, { recursive: true });
      return `data dir restored from ${dest}, the failed one kept as ${failed}`;
    });
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
    const s = this.spec(m);
    if (s.configFile) {
      // The member's config file holds every setting (real etcd ignores its flags when given one).
      if (this.sandbox.kind === 'sim')
        return { file: process.execPath, args: [...memberArgs(this.env), '--kv-version', target.version, '--config-file', s.configFile] };
      if (!target.binDir) throw new Error(`member ${s.name}: no etcd binary directory to start`);
      return { file: join(target.binDir, 'etcd'), args: ['--config-file', s.configFile] };
    }
    const cluster = this.sandbox.members.map((x) => `${x.name}=${x.peerUrl}`).join(',');
    const common = [
      '--name',
      s.name,
      '--data-dir',
      s.dataDir!,
      '--listen-client-urls',
      s.endpoint,
      '--listen-peer-urls',
      s.peerUrl!,
      '--initial-cluster',
      cluster,
      '--initial-cluster-token',
      this.sandbox.token,
      '--heartbeat-interval',
      String(this.sandbox.heartbeatMs),
    ];
    if (this.sandbox.kind === 'sim') {
      return { file: process.execPath, args: [...memberArgs(this.env), '--kv-version', target.version, ...common] };
    }
    if (!target.binDir) throw new Error(`member ${s.name}: no etcd binary directory to start`);
    return {
      file: join(target.binDir, 'etcd'),
      args: [
        ...common,
        '--advertise-client-urls',
        s.endpoint,
        '--initial-advertise-peer-urls',
        s.peerUrl!,
        '--initial-cluster-state',
        'new',
        '--election-timeout',
        String(this.sandbox.heartbeatMs * 10),
      ],
    };
  }

  async start(m: MemberSpec, target: MemberTarget): Promise<void> {
    const s = this.spec(m);
    if (await this.isRunning(s)) throw new Error(`member ${s.name} is already running (pid ${readPid(s)})`);
    await mkdir(s.dataDir!, { recursive: true });
    const { file, args } = this.argv(s, target);
    const childEnv: Record<string, string> = { PATH: this.env.PATH ?? '/usr/bin:/bin' };
    if (this.env.OPSCTL_KV_MEMBER) childEnv.OPSCTL_KV_MEMBER = this.env.OPSCTL_KV_MEMBER;
    const fd = openSync(s.logFile!, 'a');
    try {
      const child = this.exec(file, args, {
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
      await writeFile(s.pidFile!, `${child.pid}\n`);
    } finally {
      closeSync(fd);
    }
    s.version = target.version;
    s.binDir = target.binDir;
    await this.save(this.sandbox);
  }

  checkRestore(m: MemberSpec): Promise<string> {
    return promised(() => {
      checkLocalDataDir(this.spec(m));
      return `data dir ${this.spec(m).dataDir}`;
    });
  }

  async prepareRestore(m: MemberSpec, r: RestoreRequest): Promise<void> {
    await stageLocalData(this.sandbox, this.spec(m), r, this.exec);
  }

  abandonRestore(m: MemberSpec, r: RestoreRequest): Promise<void> {
    return promised(() => {
      dropStaged(this.spec(m), r.run);
    });
  }

  async restoreData(m: MemberSpec, r: RestoreRequest): Promise<string> {
    const detail = swapLocalData(this.sandbox, this.spec(m), r);
    await this.save(this.sandbox);
    return detail;
  }

  /** Forget a member's files (sandbox down). */
  async remove(m: MemberSpec): Promise<void> {
    const s = this.spec(m);
    if (s.pidFile) await rm(s.pidFile, { force: true });
  }
}
