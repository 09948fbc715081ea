import { randomBytes, randomInt } from 'node:crypto';
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
  await mkdir(sandboxDir(dataDir), { recursive: true, mode: 0o700 });
  await writeFileAtomic(sandboxFile(dataDir), `${JSON.stringify(spec, null, 2)}\n`);
}

export function sandboxCluster(spec: SandboxSpec): ClusterSpec {
  return { source: 'sandbox', key: clusterKey(spec.members.map((m) => m.endpoint)), members: spec.members, driver: { type: 'local' }, sandbox: spec };
}

export function localDriver(dataDir: string, spec: SandboxSpec, exec: Exec, env: NodeJS.ProcessEnv): LocalDriver {
  return new LocalDriver(spec, exec, (s) => saveSandbox(dataDir, s), env);
}

/**
 * A free TCP port on 127.0.0.1 for a sandbox member. A member keeps its port across restarts (an
 * upgrade stops it and starts it again on the same URLs), so the port is picked below the kernel's
 * ephemeral range: the one a stopped member frees is then never handed to another program's outgoing
 * connection or port-0 listener before the member binds it again. Falls back to a port the OS picks.
 */
export async function freePort(): Promise<number> {
  const low = ephemeralLow();
  for (let i = 0; low > FIXED_PORTS_FROM + 1000 && i < 20; i++) {
    const port = FIXED_PORTS_FROM + randomInt(low - FIXED_PORTS_FROM);
    if ((await bindable(port)) !== undefined) return port;
  }
  return (await bindable(0))!;
}

const FIXED_PORTS_FROM = 10_000;

/** The low end of the kernel's ephemeral port range (Linux), else the IANA one. */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 0) return low;
  } catch {
    // not Linux
  }
  return 49_152;
}

/** Binds the port on 127.0.0.1 and frees it again: the port bound, or undefined when it is taken. */
function bindable(port: number): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' || err.code === 'EACCES' ? resolve(undefined) : reject(err)));
    srv.listen(port, '127.0.0.1', () => {
      const bound = (srv.address() as { port: number }).port;
      srv.close(() => resolve(bound));
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
  await mkdir(dir, { recursive: true, mode: 0o700 });
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
