import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import type { ClusterSpec, MemberSpec, SandboxSpec } from './cluster.js';
import { LocalDriver, pidAlive, readPid } from './drivers/local.js';
import { clusterKey } from './journal.js';

type Exec = typeof import('execa').execa;

export function sandboxDir(dataDir: string): string {
  return join(dataDir, 'kv', 'sandbox');
}

export function sandboxFile(dataDir: string): string {
  return join(sandboxDir(dataDir), 'sandbox.json');
}

export function loadSandbox(dataDir: string): SandboxSpec | undefined {
  const f = sandboxFile(dataDir);
  if (!existsSync(f)) return undefined;
  return JSON.parse(readFileSync(f, 'utf8')) as SandboxSpec;
}

export async function saveSandbox(dataDir: string, spec: SandboxSpec): Promise<void> {
  await mkdir(sandboxDir(dataDir), { recursive: true });
  await writeFileAtomic(sandboxFile(dataDir), `${JSON.stringify(spec, null, 2)}\n`);
}

export function sandboxCluster(spec: SandboxSpec): ClusterSpec {
  return { source: 'sandbox', key: clusterKey(spec.members.map((m) => m.endpoint)), members: spec.members, driver: { type: 'local' }, sandbox: spec };
}

export function localDriver(dataDir: string, spec: SandboxSpec, exec: Exec, env: NodeJS.ProcessEnv): LocalDriver {
  return new LocalDriver(spec, exec, (s) => saveSandbox(dataDir, s), env);
}

/** A free TCP port on 127.0.0.1 (the OS picks; a small race is acceptable for a sandbox). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

export interface SandboxUpOptions {
  members: number;
  version: string;
  /** Real etcd: the directory with `etcd`. */
  etcdBin?: string;
  heartbeatMs: number;
}

/** Lays out a new sandbox (ports, data dirs, PID files); the caller starts the members. */
export async function createSandbox(dataDir: string, opts: SandboxUpOptions): Promise<SandboxSpec> {
  const dir = sandboxDir(dataDir);
  await mkdir(dir, { recursive: true });
  const members: MemberSpec[] = [];
  for (let i = 1; i <= opts.members; i++) {
    const name = `kv${i}`;
    const [client, peer] = [await freePort(), await freePort()];
    members.push({
      name,
      endpoint: `http://127.0.0.1:${client}`,
      peerUrl: `http://127.0.0.1:${peer}`,
      dataDir: join(dir, name, 'data'),
      pidFile: join(dir, name, `${name}.pid`),
      logFile: join(dir, name, `${name}.log`),
      version: opts.version,
      binDir: opts.etcdBin,
    });
    await mkdir(join(dir, name), { recursive: true });
  }
  const spec: SandboxSpec = {
    kind: opts.etcdBin ? 'etcd' : 'sim',
    dir,
    token: `opsctl-sandbox-${randomBytes(4).toString('hex')}`,
    heartbeatMs: opts.heartbeatMs,
    members,
    createdAt: new Date().toISOString(),
  };
  await saveSandbox(dataDir, spec);
  return spec;
}

/** Which sandbox members still have a live process. */
export function liveMembers(spec: SandboxSpec): MemberSpec[] {
  return spec.members.filter((m) => {
    const pid = readPid(m);
    return pid !== undefined && pidAlive(pid, m);
  });
}

export async function removeSandbox(dataDir: string): Promise<void> {
  await rm(sandboxDir(dataDir), { recursive: true, force: true });
}
