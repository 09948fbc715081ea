import { execa } from 'execa';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/kv/sandbox/sandbox.js';
import { PINNED_ETCD } from '../helpers/etcd-releases.js';
import { until } from '../helpers/kv.js';

/**
 * Members that are podman containers of a locally built etcd image (issue 61): `FROM scratch` and the
 * three static binaries of a release build (etcd, etcdctl, etcdutl in /usr/local/bin, as etcd's own images
 * have them), tagged localhost/opsctl-etcd:vX.Y.Z, built once per machine (an image already there is used:
 * the tag names the pinned build). No registry. Each member: `podman run -d --network host --restart
 * unless-stopped -v VOLUME:/var/lib/etcd IMAGE /usr/local/bin/etcd --name … --data-dir /var/lib/etcd …`, on
 * loopback ports of its own; every container and volume of a cluster carries the run's prefix and is removed
 * by destroy() (by name, never by a wider filter).
 */
export const PODMAN = 'podman';

export const imageOf = (version: string) => `localhost/opsctl-etcd:v${version}`;

/** Why podman cannot run containers here, or undefined when it can (a container of the 3.5 image started). */
export async function podmanProblem(): Promise<string | undefined> {
  const r = await execa(PODMAN, ['info', '--format', '{{.Host.OCIRuntime.Name}}'], { reject: false });
  if (r.exitCode !== 0)
    return `podman info failed (${String(r.stderr).trim().split('\n').pop() ?? r.exitCode}): apt-get install podman runc, and /etc/containers/containers.conf (scripts/test-prereqs.sh)`;
  return undefined;
}

/** The image of each pinned release, built where it is not there yet (each a `podman build` of a scratch context). */
export async function etcdImages(dirs: { v35: string; v36: string; v37: string }): Promise<Record<'3.5' | '3.6' | '3.7', string>> {
  const out = {} as Record<'3.5' | '3.6' | '3.7', string>;
  for (const [minor, dir] of [
    ['3.5', dirs.v35],
    ['3.6', dirs.v36],
    ['3.7', dirs.v37],
  ] as const) {
    const tag = imageOf(PINNED_ETCD[minor]);
    out[minor] = tag;
    if ((await execa(PODMAN, ['image', 'exists', tag], { reject: false })).exitCode === 0) continue;
    const ctx = mkdtempSync(join(tmpdir(), 'opsctl-etcd-image-'));
    try {
      for (const b of ['etcd', 'etcdctl', 'etcdutl']) copyFileSync(join(dir, b), join(ctx, b));
      writeFileSync(join(ctx, 'Containerfile'), 'FROM scratch\nCOPY etcd etcdctl etcdutl /usr/local/bin/\nCMD ["/usr/local/bin/etcd"]\n');
      await execa(PODMAN, ['build', '--quiet', '--tag', tag, ctx]);
    } finally {
      rmSync(ctx, { recursive: true, force: true });
    }
  }
  return out;
}

export interface ContainerMember {
  name: string;
  /** Loopback: every member runs on the host's network. */
  host: string;
  /** Inside the container, on its volume. */
  dataDir: string;
  container: string;
  volume: string;
  /** Its WAL volume (mounted at /var/lib/etcd-wal, --wal-dir=/var/lib/etcd-wal/wal), where the cluster was made with `wal`. */
  walVolume?: string;
  clientUrl: string;
  peerUrl: string;
}

export interface ContainerCluster {
  prefix: string;
  members: ContainerMember[];
  endpoints: string[];
  /** Every container and volume of the run (kept and proof containers included), by its prefix. */
  destroy(): Promise<void>;
  /** The member's container as podman reports it (undefined: none of that name). */
  inspect(name: string): Promise<{ Id: string; State: { Running: boolean; Pid: number }; ImageName: string } | undefined>;
  /** Every container name of the run. */
  names(): Promise<string[]>;
  /** Every volume name of the run (the members' and opsctl's copies of them). */
  volumes(): Promise<string[]>;
}

/** The engine's command line a cluster is made with: podman, or the docker CLI (with DOCKER_HOST in `env`). */
export interface EngineCli {
  program: string;
  env?: Record<string, string>;
}

/**
 * A cluster of `size` containers of `image`, each member's command its flags and `extra`, made with `engine` (podman by
 * default); `wal`: each member keeps its WAL on a volume of its own (PREFIX-NAME-wal at /var/lib/etcd-wal, --wal-dir its wal dir).
 */
export async function containerCluster(o: {
  size: number;
  image: string;
  extra?: (name: string) => string[];
  engine?: EngineCli;
  wal?: boolean;
}): Promise<ContainerCluster> {
  const program = o.engine?.program ?? PODMAN;
  const docker = /docker[^/]*$/.test(program);
  const cli = (args: string[], reject = true) => execa(program, args, { reject, env: o.engine?.env ?? {}, extendEnv: true });
  const prefix = `opsctl-e2e-${Math.random().toString(16).slice(2, 8)}`;
  const taken = new Set<number>();
  const port = async () => {
    for (;;) {
      const p = await freePort();
      if (!taken.has(p)) return (taken.add(p), p);
    }
  };
  const members: ContainerMember[] = [];
  for (let i = 1; i <= o.size; i++) {
    const name = `c${i}`;
    members.push({
      name,
      host: '127.0.0.1',
      dataDir: '/var/lib/etcd',
      container: `${prefix}-${name}`,
      volume: `${prefix}-${name}-data`,
      ...(o.wal ? { walVolume: `${prefix}-${name}-wal` } : {}),
      clientUrl: `http://127.0.0.1:${await port()}`,
      peerUrl: `http://127.0.0.1:${await port()}`,
    });
  }
  const initial = members.map((m) => `${m.name}=${m.peerUrl}`).join(',');
  const names = async () =>
    String((await cli(['ps', '--all', '--format', '{{.Names}}'])).stdout)
      .split('\n')
      .filter((n) => n.startsWith(`${prefix}-`));
  const c: ContainerCluster = {
    prefix,
    members,
    endpoints: members.map((m) => m.clientUrl),
    names,
    async volumes() {
      return String((await cli(['volume', 'ls', '--format', '{{.Name}}'])).stdout)
        .split('\n')
        .filter((n) => n.startsWith(`${prefix}-`));
    },
    async destroy() {
      const all = await names();
      if (all.length) await cli(['rm', '--force', ...(docker ? [] : ['--time', '2']), ...all], false);
      // the members' volumes, and the copies opsctl made of them (CONTAINER.opsctl-backup-RUN, CONTAINER.opsctl-failed-RUN): by the run's prefix
      const volumes = String((await cli(['volume', 'ls', '--format', '{{.Name}}'], false)).stdout)
        .split('\n')
        .filter((n) => n.startsWith(`${prefix}-`));
      const own = members.flatMap((m) => [m.volume, ...(m.walVolume ? [m.walVolume] : [])]);
      await cli(['volume', 'rm', '--force', ...new Set([...own, ...volumes])], false);
    },
    async inspect(name) {
      const r = await cli(['container', 'inspect', name], false);
      if (r.exitCode !== 0) return undefined;
      // (docker names the image in Config.Image only)
      const x = (JSON.parse(String(r.stdout)) as Array<NonNullable<Awaited<ReturnType<ContainerCluster['inspect']>>> & { Config?: { Image?: string } }>)[0];
      return x && { ...x, ImageName: x.ImageName ?? x.Config?.Image ?? '' };
    },
  };
  for (const m of members) {
    await cli([
      'run',
      '--detach',
      '--name',
      m.container,
      '--network',
      'host',
      '--restart',
      'unless-stopped',
      '--env',
      'ETCD_LOG_LEVEL=warn',
      '--volume',
      `${m.volume}:/var/lib/etcd`,
      ...(m.walVolume ? ['--volume', `${m.walVolume}:/var/lib/etcd-wal`] : []),
      o.image,
      '/usr/local/bin/etcd',
      `--name=${m.name}`,
      '--data-dir=/var/lib/etcd',
      `--listen-client-urls=${m.clientUrl}`,
      `--advertise-client-urls=${m.clientUrl}`,
      `--listen-peer-urls=${m.peerUrl}`,
      `--initial-advertise-peer-urls=${m.peerUrl}`,
      `--initial-cluster=${initial}`,
      `--initial-cluster-token=${prefix}`,
      '--initial-cluster-state=new',
      // (a dir under the mount: etcd makes the WAL dir as WAL.tmp and renames it, which a mount point refuses)
      ...(m.walVolume ? ['--wal-dir=/var/lib/etcd-wal/wal'] : []),
      ...(o.extra?.(m.name) ?? []),
    ]);
  }
  return c;
}

/** The cluster file of a container cluster: the container driver, its engine (podman by default), an image per minor. */
export function writeContainerClusterFile(path: string, c: ContainerCluster, images: Record<string, string>, engine = PODMAN): string {
  const lines = [
    'members:',
    ...c.members.map((m) => `  - { name: ${m.name}, endpoint: "${m.clientUrl}", container: ${m.container} }`),
    'driver:',
    '  type: container',
    `  engine: ${engine}`,
    '  images:',
    ...Object.entries(images).map(([v, i]) => `    "${v}": "${i}"`),
  ];
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

/** The docker CLI on PATH. */
export const DOCKER = 'docker';

/**
 * The docker CLI against podman's Docker-compatible API (`podman system service` on a unix socket of its own in
 * `dir`, DOCKER_HOST=unix://…): the engine the docker e2e drives, where no dockerd runs. The service is this
 * test's child, stopped by `stop()`. `problem`: why it cannot run here.
 */
export async function dockerViaPodman(dir: string): Promise<{ env: Record<string, string>; stop(): Promise<void> } | { problem: string }> {
  const v = await execa(DOCKER, ['--version'], { reject: false });
  if (v.exitCode !== 0) return { problem: `no docker CLI on PATH (${v.failed ? String(v.shortMessage) : `exit ${v.exitCode}`})` };
  const sock = join(dir, 'podman.sock');
  const service = execa(PODMAN, ['system', 'service', '--time', '0', `unix://${sock}`], { reject: false, stdin: 'ignore', stdout: 'ignore', stderr: 'pipe' });
  const env = { DOCKER_HOST: `unix://${sock}` };
  const stop = async () => {
    service.kill('SIGTERM');
    await service;
  };
  try {
    await until(
      async () => (await execa(DOCKER, ['version', '--format', '{{.Server.Version}}'], { reject: false, env, extendEnv: true })).exitCode === 0,
      30_000,
      "podman's Docker API service answering the docker CLI",
    );
  } catch (err) {
    await stop();
    return {
      problem: `${(err as Error).message}: ${
        String((await service).stderr)
          .trim()
          .split('\n')
          .pop() ?? ''
      }`,
    };
  }
  return { env, stop };
}
