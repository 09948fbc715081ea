import { randomBytes, randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import type { ClusterSpec, MemberSpec, SandboxSpec } from '../cluster/cluster-file.js';
import { LocalDriver, memberProcesses } from '../drivers/local.js';
import { clusterKey } from '../journal/journal.js';
import { loadSandbox, sandboxDir, sandboxFile } from './file.js';
import { sandboxKind, sandboxProgram } from './members.js';

export { loadSandbox, sandboxDir, sandboxFile };

type Exec = typeof import('execa').execa;

export async function saveSandbox(dataDir: string, spec: SandboxSpec): Promise<void> {
  await mkdir(sandboxDir(dataDir), { recursive: true, mode: 0o700 });
  await writeFileAtomic(sandboxFile(dataDir), `${JSON.stringify(spec, null, 2)}\n`);
}

export function sandboxCluster(spec: SandboxSpec): ClusterSpec {
  return { source: 'sandbox', key: clusterKey(spec.members.map((m) => m.endpoint)), members: spec.members, driver: { type: 'local' }, sandbox: spec };
}

export function localDriver(
  dataDir: string,
  spec: SandboxSpec,
  exec: Exec,
  env: NodeJS.ProcessEnv,
  notice?: (text: string) => void,
  trace?: (line: string) => void,
): LocalDriver {
  return new LocalDriver(spec, { program: sandboxProgram(spec, exec, env), exec, save: (s) => saveSandbox(dataDir, s), env, notice, trace });
}

/**
 * A free TCP port on 127.0.0.1 for a sandbox member. A member keeps its port across restarts (an
 * upgrade stops it and starts it again on the same URLs), so the port is picked below the kernel's
 * ephemeral range: the one a stopped member frees is then never handed to another program's outgoing
 * connection or port-0 listener before the member binds it again. Falls back to a port the OS picks.
 */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port!;
}

/**
 * `n` distinct free ports (freePort's rule), each held bound until all are picked: two members of one
 * sandbox never get the same port (one bound and freed at a time, two picks may meet).
 */
export async function freePorts(n: number): Promise<number[]> {
  const low = ephemeralLow();
  const held: Array<{ port: number; close: () => Promise<void> }> = [];
  try {
    while (held.length < n) {
      let got: { port: number; close: () => Promise<void> } | undefined;
      for (let i = 0; !got && low > FIXED_PORTS_FROM + 1000 && i < 20; i++) {
        const port = FIXED_PORTS_FROM + randomInt(low - FIXED_PORTS_FROM);
        if (!held.some((h) => h.port === port)) got = await hold(port);
      }
      held.push(got ?? (await hold(0))!);
    }
    return held.map((h) => h.port);
  } finally {
    await Promise.all(held.map((h) => h.close()));
  }
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

/** Binds the port on 127.0.0.1 and keeps it until `close`: undefined when it is taken. */
function hold(port: number): Promise<{ port: number; close: () => Promise<void> } | undefined> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' || err.code === 'EACCES' ? resolve(undefined) : reject(err)));
    srv.listen(port, '127.0.0.1', () => {
      const bound = (srv.address() as { port: number }).port;
      resolve({ port: bound, close: () => new Promise<void>((done) => srv.close(() => done())) });
    });
  });
}

export interface SandboxUpOptions {
  members: number;
  version: string;
  /** Real etcd: the directory with `etcd`. */
  etcdBin?: string;
  heartbeatMs: number;
  /** Settings for the members' config files (kv sandbox up --config). */
  config?: ConfigSetting[];
  /** The members' ports (client then peer, member by member); default: free ones (freePorts). */
  ports?: number[];
}

/** One `--config [MEMBER:]KEY=VALUE`: VALUE is YAML as written (`1` is a number, `"1"` a string). */
export interface ConfigSetting {
  member?: string;
  key: string;
  value: string;
}

/** Keys the sandbox writes itself: where a member listens and which cluster it joins. */
export const SANDBOX_CONFIG_KEYS = new Set([
  'name',
  'data-dir',
  'listen-client-urls',
  'advertise-client-urls',
  'listen-peer-urls',
  'initial-advertise-peer-urls',
  'initial-cluster',
  'initial-cluster-token',
  'initial-cluster-state',
  'heartbeat-interval',
  'election-timeout',
  'enable-grpc-gateway',
  'config-file',
]);

/**
 * A member's etcd config file (YAML, as etcd --config-file reads it; etcd then ignores its flags):
 * the sandbox's own keys, then the --config settings for every member or for this one.
 */
export function memberConfigText(spec: SandboxSpec, m: MemberSpec, settings: ConfigSetting[] = []): string {
  const cluster = spec.members.map((x) => `${x.name}=${x.peerUrl}`).join(',');
  const lines = [
    '# written by opsctl kv sandbox up; the member starts with --config-file pointing here',
    `name: ${m.name}`,
    `data-dir: ${m.dataDir}`,
    `listen-client-urls: ${m.endpoint}`,
    `advertise-client-urls: ${m.endpoint}`,
    `listen-peer-urls: ${m.peerUrl}`,
    `initial-advertise-peer-urls: ${m.peerUrl}`,
    `initial-cluster: ${cluster}`,
    `initial-cluster-token: ${spec.token}`,
    'initial-cluster-state: new',
    `heartbeat-interval: ${spec.heartbeatMs}`,
    `election-timeout: ${spec.heartbeatMs * 10}`,
    // etcd 3.4 serves the JSON gateway from a config file only when asked; 3.2/3.3 ignore the key.
    'enable-grpc-gateway: true',
  ];
  const mine = settings.filter((c) => !c.member || c.member === m.name);
  // A later setting of the same key wins, as it would on a command line.
  const last = new Map(mine.map((c) => [c.key, c.value]));
  if (last.size) lines.push('# kv sandbox up --config', ...[...last].map(([k, v]) => `${k}: ${v}`));
  return `${lines.join('\n')}\n`;
}

/** Lays out a new sandbox (ports, data dirs, PID files); the caller starts the members. */
export async function createSandbox(dataDir: string, opts: SandboxUpOptions): Promise<SandboxSpec> {
  const dir = sandboxDir(dataDir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const members: MemberSpec[] = [];
  const ports = opts.ports ?? (await freePorts(opts.members * 2));
  for (let i = 1; i <= opts.members; i++) {
    const name = `kv${i}`;
    const [client, peer] = [ports[2 * i - 2]!, ports[2 * i - 1]!];
    members.push({
      name,
      endpoint: `http://127.0.0.1:${client}`,
      peerUrl: `http://127.0.0.1:${peer}`,
      dataDir: join(dir, name, 'data'),
      pidFile: join(dir, name, `${name}.pid`),
      logFile: join(dir, name, `${name}.log`),
      version: opts.version,
      binDir: opts.etcdBin,
      configFile: join(dir, name, `${name}.conf.yml`),
    });
    await mkdir(join(dir, name), { recursive: true });
  }
  const spec: SandboxSpec = {
    kind: sandboxKind(opts.etcdBin),
    dir,
    token: `opsctl-sandbox-${randomBytes(4).toString('hex')}`,
    heartbeatMs: opts.heartbeatMs,
    members,
    createdAt: new Date().toISOString(),
  };
  for (const m of members) await writeFile(m.configFile!, memberConfigText(spec, m, opts.config), { mode: 0o600 });
  await saveSandbox(dataDir, spec);
  return spec;
}

/** Which sandbox members still have a live process (by PID file, data dir, config file or ports). */
export function liveMembers(spec: SandboxSpec): MemberSpec[] {
  return spec.members.filter((m) => memberProcesses(m).member.length > 0);
}

export async function removeSandbox(dataDir: string): Promise<void> {
  await rm(sandboxDir(dataDir), { recursive: true, force: true });
}
