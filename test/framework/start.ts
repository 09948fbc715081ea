import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { runCli, tempConfigDir } from '../helpers/cli.js';
import { makeTestCerts, type TestCerts } from '../helpers/etcd-certs.js';
import { until } from '../helpers/kv.js';
import type { NetnsHosts } from '../helpers/netns.js';
import { boundRunners, memberOf, type ClusterEnv, type TestCluster, type TestMember } from './cluster.js';
import { containerCluster, PODMAN, writeContainerClusterFile, type ContainerCluster, type ContainerMember, type EngineCli } from './container.js';
import {
  enableAuth,
  realCluster,
  writeCommandClusterFile,
  type CommandFileOptions,
  type RealCluster,
  type RealClusterOptions,
  type RealMember,
} from './real.js';
import { sandboxUp, type KvSandbox, type SandboxMember } from './simulated.js';

const execFileP = promisify(execFile);

/** What every bring-up takes: the config dir (default: a temp one of its own), more environment, opsctl's deadline. */
interface Common {
  size: number;
  /** An OPSCTL_CONFIG_DIR the test owns (destroy() leaves it); default: a temp one, removed by destroy(). */
  configDir?: string;
  env?: Record<string, string>;
  /** The deadline of each `opsctl(...)` run (default 300 s). */
  timeout?: number;
}

/**
 * When a bring-up is done: 'health' (default: `opsctl kv health --cluster FILE` exits 0), 'version' (every member's
 * /version says the cluster is at `version`.0), 'alive' (every member's process is up), 'etcdctl' (etcdctl of the start
 * binary reads a key), 'none', or a check of the test's own.
 */
export type Ready<C> = 'health' | 'version' | 'alive' | 'etcdctl' | 'none' | ((c: C) => unknown);

/** A command-driver cluster file's lines, and its name in the config dir (default cluster.yaml). */
export type FileOptions = CommandFileOptions & { name?: string };

export interface RealStart extends Common, Omit<RealClusterOptions, 'certs' | 'size' | 'hosts' | 'wrap'> {
  members: 'real';
  /** Member addresses (default 127.0.0.1 with free ports). */
  hosts?: string[];
  /**
   * Members on hosts of their own (test/helpers/netns.ts): member i at host i's address, its control commands run in
   * host i's namespace (`ip netns exec NS`); `opsctl(...)` and the 'version' and 'health' checks run in the hub, where
   * the members are reached ('etcdctl' and `cli`, in process, do not). The test makes the hosts and destroys them after the cluster.
   */
  netns?: NetnsHosts;
  /** The minor (a key of `bins`) or release folder every member starts on; omitted: none is started (the test starts them). */
  version?: string;
  /** Client-certificate TLS: the test's certificates, or ones made for it (removed by destroy()). */
  tls?: TestCerts | { clientCn?: string; ips?: string[] };
  /** The driver lines of the cluster file written at bring-up (`file`), as writeCommandClusterFile takes them (or made from the backend's cluster). */
  file?: FileOptions | ((real: RealCluster) => FileOptions);
  /** A `root` user of this password and auth enabled, once ready (through the start binary's etcdctl). */
  rootPassword?: string;
  ready?: Ready<RealTestCluster>;
}

export type SimulatedStart = Omit<Common, 'env'> & {
  members: 'simulated';
  /** More `kv sandbox up` flags. */
  extra?: string[];
} & (
    | {
        /** The simulator's version (`kv sandbox up --kv-version`); heartbeat 50 ms. */
        version: string;
      }
    | {
        /** Instead of the simulator, the sandbox's members run real etcd from this release directory (`kv sandbox up --etcd-bin`): the local driver on real etcd. */
        etcdBin: string;
      }
  );

export interface ContainerStart extends Common {
  members: 'container';
  /** The image every member starts on. */
  image: string;
  /** The cluster file's image per minor. */
  images: Record<string, string>;
  engine?: EngineCli;
  wal?: boolean;
  /** More etcd flags of a member. */
  extra?: (name: string) => string[];
  ready?: Ready<ContainerTestCluster>;
}

/** Real etcd processes: `real` reaches the backend (start/stop a member on a version, etcdctl, its folder). */
export interface RealTestCluster extends TestCluster<RealMember> {
  kind: 'real';
  real: RealCluster;
  certs?: TestCerts;
  /** Writes another command-driver cluster file into the config dir (`name`, default cluster.yaml), with the cluster's TLS. */
  clusterFile(o?: FileOptions): string;
}

/** The sandbox's simulated members: `sandbox` reaches its record, faults, logs and journal. */
export interface SimulatedTestCluster extends TestCluster<SimulatedMember> {
  kind: 'simulated';
  sandbox: KvSandbox;
}

/** A simulated member: the sandbox's record of it, with its client URL and host. */
export type SimulatedMember = SandboxMember & TestMember;

/** podman (or docker) containers: `container` reaches names, volumes and inspect. */
export interface ContainerTestCluster extends TestCluster<ContainerMember> {
  kind: 'container';
  container: ContainerCluster;
}

/** One bring-up for every kind of member (test/framework/README in docs/development.md). */
export function startCluster(o: RealStart): Promise<RealTestCluster>;
export function startCluster(o: SimulatedStart): Promise<SimulatedTestCluster>;
export function startCluster(o: ContainerStart): Promise<ContainerTestCluster>;
export async function startCluster(o: RealStart | SimulatedStart | ContainerStart): Promise<TestCluster<any>> {
  if (o.members === 'real') return startReal(o);
  if (o.members === 'simulated') return startSimulated(o);
  return startContainer(o);
}

function configDirOf(o: Common): { dir: string; cleanup: () => void } {
  return o.configDir ? { dir: o.configDir, cleanup: () => undefined } : tempConfigDir('opsctl-cluster-');
}

async function waitReady<C extends TestCluster<any>>(c: C, ready: Ready<C>, checks: { version: () => Promise<boolean>; etcdctl: () => boolean }) {
  const size = `${c.members.length} ${c.kind} member${c.members.length === 1 ? '' : 's'}`;
  if (ready === 'none') return;
  if (typeof ready === 'function') return void (await until(async () => ready(c), 60_000, `${size} ready`));
  if (ready === 'alive') return void (await until(() => c.members.every((m) => c.alive(m)), 30_000, `${size} running`));
  if (ready === 'version') return void (await until(checks.version, 60_000, `${size} at the cluster version`));
  if (ready === 'etcdctl') return void (await until(checks.etcdctl, 30_000, `${size} answering etcdctl`));
  await until(async () => (await c.opsctl('kv', 'health', '--cluster', c.file)).exitCode === 0, 60_000, `${size} healthy`);
}

async function startReal(o: RealStart): Promise<RealTestCluster> {
  const { members: _kind, version, tls, file: fileOptions, rootPassword, ready, configDir: _dir, env: extraEnv, timeout, netns, ...rest } = o;
  const cfg = configDirOf(o);
  const made = tls && !('ca' in tls) ? makeTestCerts({ ips: tls.ips ?? ['127.0.0.1'] }, tls.clientCn ?? 'opsctl-client') : undefined;
  const certs = made ?? (tls && 'ca' in tls ? tls : undefined);
  const onHosts = netns ? { hosts: netns.addrs, wrap: (m: { host: string }) => ['ip', 'netns', 'exec', netns.ns(netns.addrs.indexOf(m.host))] } : {};
  const real = await realCluster({ ...rest, ...onHosts, ...(certs ? { certs } : {}) });
  const via = netns ? ['ip', 'netns', 'exec', netns.hub] : [];
  const env: ClusterEnv = { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1', ...extraEnv };
  const clusterFile = (f: FileOptions = {}) => {
    const { name, ...lines } = f;
    return writeCommandClusterFile(join(cfg.dir, name ?? 'cluster.yaml'), real, { ...(certs ? { certs } : {}), ...lines });
  };
  const bin = version === undefined ? undefined : (o.bins?.[version] ?? version);
  const c: RealTestCluster = {
    kind: 'real',
    real,
    ...(certs ? { certs } : {}),
    members: real.members,
    endpoints: real.endpoints,
    configDir: cfg.dir,
    env,
    file: clusterFile(typeof fileOptions === 'function' ? fileOptions(real) : fileOptions),
    clusterFile,
    ...boundRunners(env, timeout, via),
    pid: (m) => real.pid(memberOf(real.members, m)),
    alive: (m) => real.alive(memberOf(real.members, m)),
    kill(m, signal = 'SIGKILL') {
      const p = c.alive(m) ? c.pid(m) : undefined;
      if (p !== undefined) process.kill(p, signal);
    },
    async destroy() {
      real.destroy();
      made?.cleanup();
      cfg.cleanup();
    },
  };
  try {
    if (version === undefined) return c;
    for (const m of real.members) real.start(m, version);
    const tlsArgs = certs ? ['--cacert', certs.ca, '--cert', certs.clientCert, '--key', certs.clientKey] : [];
    // (curl in the hub for members on hosts of their own)
    const curl = [...via, 'curl'];
    const clusterAt = async (e: string) =>
      execFileP(curl[0]!, [...curl.slice(1), '-sS', '--max-time', '2', ...tlsArgs, `${e}/version`]).then(
        (r) => (JSON.parse(r.stdout) as { etcdcluster?: string }).etcdcluster,
        () => undefined,
      );
    const etcdctl = () => {
      try {
        return (real.etcdctl(bin!, ['get', 'probe']), true);
      } catch {
        return false;
      }
    };
    const minor = /^\d+\.\d+$/.test(version) ? version : undefined;
    await waitReady(c, ready ?? 'health', {
      version: async () => (await Promise.all(real.endpoints.map(clusterAt))).every((v) => v === `${minor}.0`),
      etcdctl,
    });
    if (rootPassword !== undefined) enableAuth(real, bin!, rootPassword);
    return c;
  } catch (err) {
    await c.destroy();
    throw err;
  }
}

/** Whether process `p` exists (signal 0). */
function running(p: number | undefined): boolean {
  if (p === undefined) return false;
  try {
    process.kill(p, 0);
    return true;
  } catch {
    return false;
  }
}

async function startSimulated(o: SimulatedStart): Promise<SimulatedTestCluster> {
  const sandbox = await sandboxUp({
    ...('etcdBin' in o ? { etcdBin: o.etcdBin } : { version: o.version }),
    size: o.size,
    ...(o.extra ? { extra: o.extra } : {}),
    ...(o.configDir ? { configDir: o.configDir } : {}),
  });
  const members: SimulatedMember[] = sandbox.spec().members.map((m) => ({ ...m, clientUrl: m.endpoint, host: new URL(m.endpoint).hostname }));
  const env: ClusterEnv = { ...sandbox.env, NO_COLOR: '1', CI: '1' };
  const runners = boundRunners(env, o.timeout);
  const pid = (m: SimulatedMember | string) => {
    try {
      const n = Number(readFileSync(memberOf(members, m).pidFile, 'utf8').trim());
      return Number.isInteger(n) && n > 0 ? n : undefined;
    } catch {
      return undefined;
    }
  };
  return {
    kind: 'simulated',
    sandbox,
    members,
    endpoints: members.map((m) => m.clientUrl),
    configDir: sandbox.dir,
    env,
    file: sandbox.sandboxFile,
    ...runners,
    // in process, with the sandbox's own environment (the integration tier's runs, as kvSandbox's kv)
    cli: (...args: string[]) => runCli(args, { env: sandbox.env }),
    pid,
    alive: (m) => running(pid(m)),
    kill(m, signal = 'SIGKILL') {
      const p = pid(m);
      if (running(p)) process.kill(p!, signal);
    },
    destroy: () => sandbox.down(),
  };
}

async function startContainer(o: ContainerStart): Promise<ContainerTestCluster> {
  const cfg = configDirOf(o);
  const container = await containerCluster({
    size: o.size,
    image: o.image,
    ...(o.engine ? { engine: o.engine } : {}),
    ...(o.wal ? { wal: true } : {}),
    ...(o.extra ? { extra: o.extra } : {}),
  });
  const env: ClusterEnv = { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1', ...o.env };
  const pid = (m: ContainerMember | string) => {
    try {
      const argv = ['container', 'inspect', '--format', '{{.State.Pid}}', memberOf(container.members, m).container];
      const n = Number(
        execFileSync(o.engine?.program ?? PODMAN, argv, { stdio: 'pipe', env: { ...process.env, ...o.engine?.env } })
          .toString()
          .trim(),
      );
      return n > 0 ? n : undefined;
    } catch {
      return undefined;
    }
  };
  const c: ContainerTestCluster = {
    kind: 'container',
    container,
    members: container.members,
    endpoints: container.endpoints,
    configDir: cfg.dir,
    env,
    file: writeContainerClusterFile(join(cfg.dir, 'cluster.yaml'), container, o.images, o.engine?.program ?? PODMAN),
    ...boundRunners(env, o.timeout),
    pid,
    alive: (m) => pid(m) !== undefined,
    kill(m, signal = 'SIGKILL') {
      const argv = ['kill', '--signal', signal, memberOf(container.members, m).container];
      execFileSync(o.engine?.program ?? PODMAN, argv, { stdio: 'pipe', env: { ...process.env, ...o.engine?.env } });
    },
    async destroy() {
      await container.destroy();
      cfg.cleanup();
    },
  };
  // 'version': the cluster at the image's minor (its tag: localhost/opsctl-etcd:v3.5.35), as each member's /version says
  const minor = /:v(\d+\.\d+)\./.exec(o.image)?.[1];
  const clusterAt = (e: string) =>
    fetch(`${e}/version`, { signal: AbortSignal.timeout(2000) }).then(
      async (r) => ((await r.json()) as { etcdcluster?: string }).etcdcluster,
      () => undefined,
    );
  try {
    await waitReady(c, o.ready ?? 'health', {
      version: async () => Boolean(minor) && (await Promise.all(container.endpoints.map(clusterAt))).every((v) => v === `${minor}.0`),
      etcdctl: () => false,
    });
    return c;
  } catch (err) {
    await c.destroy();
    throw err;
  }
}
