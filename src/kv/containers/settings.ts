/**
 * A member container's settings as its engine reports them (`podman inspect` / `docker inspect`): the
 * command line, environment, mounts, network, user, restart policy and limits; and the `create` arguments
 * that make the next container from another image with the same settings (pure: unit-tested).
 *
 * What the engine adds by itself is left out, so the next image's own defaults apply: the old image's
 * environment and labels (a PATH it set), podman's `container=podman` and `TERM=xterm`, a HOSTNAME, and a
 * hostname that is the container's short id. The command is kept whole (etcd's flags are the member's
 * settings); an entrypoint only where the container set one of its own.
 */

/** One mount of the member's container. */
export interface ContainerMount {
  type: 'volume' | 'bind' | 'tmpfs';
  /** A volume's name, a bind's host path (empty for tmpfs). */
  source: string;
  /** Where the engine keeps it on the host (a volume's _data directory; a bind's path). */
  hostPath: string;
  destination: string;
  readOnly: boolean;
}

export interface ContainerSettings {
  id: string;
  name: string;
  /** The image it was created from, as named at its create (`localhost/etcd:v3.5.35`). */
  image: string;
  /** The image's id (sha256 hex, no prefix). */
  imageId: string;
  running: boolean;
  /** Its process's PID on the engine's host, while it runs. */
  pid?: number;
  /** Between two starts of its restart policy (docker's back-off): it runs again soon. */
  restarting: boolean;
  /** Its process's last exit status (0 while it runs, or never ran). */
  exitCode?: number;
  /** How many times its restart policy started it again (RestartCount), where the engine says. */
  restarts?: number;
  /** When its process last started and last ended, as the engine's host's clock says (State.StartedAt, State.FinishedAt). */
  startedAt?: string;
  finishedAt?: string;
  /** When it was created (ISO, as the engine says it). */
  created: string;
  /** Its own entrypoint, where it set one (else the image's). */
  entrypoint: string[];
  /** Its command: the etcd program and flags, as the member starts. */
  cmd: string[];
  /** What the container runs, in order (entrypoint + cmd). */
  argv: string[];
  env: Record<string, string>;
  user?: string;
  workdir?: string;
  hostname?: string;
  labels: Record<string, string>;
  network: { mode: string; networks: Array<{ name: string; ip?: string; aliases: string[] }> };
  restart?: { name: string; retries: number };
  mounts: ContainerMount[];
  limits: { memory?: number; nanoCpus?: number; cpuShares?: number; pidsLimit?: number; ulimits: Array<{ name: string; soft: number; hard: number }> };
  ports: Array<{ container: string; hostIp?: string; hostPort?: string }>;
  stopSignal?: string;
  /** Labels opsctl put on a container it created or kept (io.opsctl.*). */
  opsctl: { member?: string; keptFrom?: string };
}

/** The image's own defaults, which a container inherits unless it sets its own. */
export interface ImageDefaults {
  env: string[];
  labels: Record<string, string>;
  entrypoint: string[];
  cmd: string[];
}

export class InspectError extends Error {}

const LABEL_MEMBER = 'io.opsctl.member';
const LABEL_KEPT_FROM = 'io.opsctl.kept-from';
export const LABELS = { member: LABEL_MEMBER, keptFrom: LABEL_KEPT_FROM } as const;

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : typeof v === 'string' && v ? [v] : []);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && v > 0 ? v : undefined);

/** An `inspect` answer (one container's object, podman's or docker's shape) read into its settings. */
export function parseInspect(raw: unknown): ContainerSettings {
  const c = obj(raw);
  const config = obj(c.Config);
  const host = obj(c.HostConfig);
  const state = obj(c.State);
  const id = str(c.Id);
  if (!id) throw new InspectError('the engine answered no container Id');
  const name = (str(c.Name) ?? id).replace(/^\//, '');
  const image = str(c.ImageName) ?? str(config.Image) ?? str(c.Image) ?? '';
  // (podman: Entrypoint a string, "" for none; docker: an array or null)
  const entrypoint = strs(config.Entrypoint);
  const cmd = strs(config.Cmd);
  const env: Record<string, string> = {};
  for (const e of strs(config.Env)) {
    const eq = e.indexOf('=');
    if (eq > 0) env[e.slice(0, eq)] = e.slice(eq + 1);
  }
  const labels = Object.fromEntries(Object.entries(obj(config.Labels)).filter((e): e is [string, string] => typeof e[1] === 'string'));
  const mounts: ContainerMount[] = (Array.isArray(c.Mounts) ? c.Mounts : []).map((x) => {
    const m = obj(x);
    const type = m.Type === 'volume' ? 'volume' : m.Type === 'tmpfs' ? 'tmpfs' : 'bind';
    const source = type === 'volume' ? (str(m.Name) ?? '') : (str(m.Source) ?? '');
    return { type, source, hostPath: str(m.Source) ?? '', destination: str(m.Destination) ?? '', readOnly: m.RW === false };
  });
  const rp = obj(host.RestartPolicy);
  const restartName = str(rp.Name);
  const ulimits = (Array.isArray(host.Ulimits) ? host.Ulimits : []).map((x) => {
    const u = obj(x);
    return {
      name: (str(u.Name) ?? '').replace(/^RLIMIT_/, '').toLowerCase(),
      soft: Number(u.Soft),
      hard: Number(u.Hard),
    };
  });
  const networks = Object.entries(obj(obj(c.NetworkSettings).Networks)).map(([n, v]) => {
    const x = obj(v);
    return { name: n, ...(str(x.IPAddress) ? { ip: str(x.IPAddress) } : {}), aliases: strs(x.Aliases).filter((a) => !id.startsWith(a)) };
  });
  const ports = Object.entries(obj(host.PortBindings)).flatMap(([container, list]) =>
    (Array.isArray(list) ? list : [undefined]).map((b) => {
      const p = obj(b);
      return { container, ...(str(p.HostIp) ? { hostIp: str(p.HostIp) } : {}), ...(str(p.HostPort) ? { hostPort: str(p.HostPort) } : {}) };
    }),
  );
  const stop = config.StopSignal;
  return {
    id,
    name,
    image,
    imageId: (str(c.Image) ?? '').replace(/^sha256:/, ''),
    running: state.Running === true,
    ...(state.Running === true && num(state.Pid) ? { pid: num(state.Pid) } : {}),
    restarting: state.Restarting === true,
    ...(typeof state.ExitCode === 'number' ? { exitCode: state.ExitCode } : {}),
    ...(typeof c.RestartCount === 'number' ? { restarts: c.RestartCount } : {}),
    ...(str(state.StartedAt) ? { startedAt: str(state.StartedAt) } : {}),
    ...(str(state.FinishedAt) ? { finishedAt: str(state.FinishedAt) } : {}),
    created: str(c.Created) ?? '',
    entrypoint,
    cmd,
    argv: [...entrypoint, ...cmd],
    env,
    ...(str(config.User) ? { user: str(config.User) } : {}),
    ...(str(config.WorkingDir) ? { workdir: str(config.WorkingDir) } : {}),
    ...(str(config.Hostname) ? { hostname: str(config.Hostname) } : {}),
    labels,
    network: { mode: str(host.NetworkMode) ?? 'default', networks },
    ...(restartName && restartName !== 'no' ? { restart: { name: restartName, retries: Number(rp.MaximumRetryCount ?? 0) } } : {}),
    mounts,
    limits: {
      ...(num(host.Memory) ? { memory: num(host.Memory) } : {}),
      ...(num(host.NanoCpus) ? { nanoCpus: num(host.NanoCpus) } : {}),
      ...(num(host.CpuShares) ? { cpuShares: num(host.CpuShares) } : {}),
      ...(num(host.PidsLimit) ? { pidsLimit: num(host.PidsLimit) } : {}),
      ulimits: ulimits.filter((u) => u.name && Number.isFinite(u.soft) && Number.isFinite(u.hard)),
    },
    ports,
    ...(typeof stop === 'string' && stop ? { stopSignal: stop } : typeof stop === 'number' && stop !== 15 ? { stopSignal: String(stop) } : {}),
    opsctl: { ...(labels[LABEL_MEMBER] ? { member: labels[LABEL_MEMBER] } : {}), ...(labels[LABEL_KEPT_FROM] ? { keptFrom: labels[LABEL_KEPT_FROM] } : {}) },
  };
}

/**
 * Whether the engine will start a container that does not run again by itself: its restart policy (always,
 * unless-stopped, on-failure) after an exit that was not 0 (a start that fails; podman restarts at once and
 * reports it stopped in between, docker reports it restarting through its back-off). A stop by hand (etcd exits
 * 0 on SIGTERM) is never restarted; the engines do not report who stopped one that exited otherwise, so the
 * driver remembers the containers it stopped itself (driver.ts).
 */
export function policyRestarts(c: Pick<ContainerSettings, 'running' | 'restarting' | 'restart' | 'exitCode'>): boolean {
  if (c.running || c.restarting) return true;
  return Boolean(c.restart) && c.exitCode !== undefined && c.exitCode !== 0;
}

/** An image's `inspect` answer: the defaults a container of it inherits. */
export function parseImageDefaults(raw: unknown): ImageDefaults {
  const config = obj(obj(raw).Config);
  return {
    env: strs(config.Env),
    labels: Object.fromEntries(Object.entries(obj(config.Labels)).filter((e): e is [string, string] => typeof e[1] === 'string')),
    entrypoint: strs(config.Entrypoint),
    cmd: strs(config.Cmd),
  };
}

/** Variables an engine sets in every container by itself: never carried to the next one. */
const ENGINE_ENV = new Set(['HOSTNAME', 'container']);
const ENGINE_ENV_VALUES: Record<string, string> = { TERM: 'xterm' };

/** The container's own environment: what it set beyond its image's (and the engine's) defaults. */
export function ownEnv(s: ContainerSettings, image: ImageDefaults | undefined): Record<string, string> {
  const inherited = new Set(image?.env ?? []);
  return Object.fromEntries(Object.entries(s.env).filter(([k, v]) => !ENGINE_ENV.has(k) && ENGINE_ENV_VALUES[k] !== v && !inherited.has(`${k}=${v}`)));
}

/** The container's own labels (not its image's), opsctl's own left out (the next container gets its own). */
export function ownLabels(s: ContainerSettings, image: ImageDefaults | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(s.labels).filter(([k, v]) => image?.labels[k] !== v && !k.startsWith('io.opsctl.') && !k.startsWith('io.buildah.')));
}

export interface CreateFrom {
  /** The settings to carry (the container the member ran in). */
  settings: ContainerSettings;
  /** Its image's defaults (what to leave out), when the engine still has that image. */
  oldImage?: ImageDefaults;
  /** The new container's name and image. */
  name: string;
  image: string;
  member: string;
}

/**
 * `create` arguments (after the engine's name) for a container of `image` with the settings of
 * `settings`: every setting the engine reported that the member set, in the engine's own flags.
 */
export function createArgs(f: CreateFrom): string[] {
  const s = f.settings;
  const a: string[] = ['create', '--name', f.name];
  // (a hostname the engine made up is the short id: the next container gets its own)
  if (s.hostname && !s.id.startsWith(s.hostname) && s.network.mode !== 'host') a.push('--hostname', s.hostname);
  if (s.user) a.push('--user', s.user);
  if (s.workdir && s.workdir !== '/') a.push('--workdir', s.workdir);
  for (const [k, v] of Object.entries(ownEnv(s, f.oldImage))) a.push('--env', `${k}=${v}`);
  for (const [k, v] of Object.entries(ownLabels(s, f.oldImage))) a.push('--label', `${k}=${v}`);
  a.push('--label', `${LABEL_MEMBER}=${f.member}`);
  a.push(...networkArgs(s));
  if (s.restart) a.push('--restart', s.restart.name === 'on-failure' && s.restart.retries > 0 ? `on-failure:${s.restart.retries}` : s.restart.name);
  if (s.limits.memory) a.push('--memory', String(s.limits.memory));
  if (s.limits.nanoCpus) a.push('--cpus', String(s.limits.nanoCpus / 1e9));
  if (s.limits.cpuShares) a.push('--cpu-shares', String(s.limits.cpuShares));
  if (s.limits.pidsLimit) a.push('--pids-limit', String(s.limits.pidsLimit));
  for (const u of s.limits.ulimits) a.push('--ulimit', `${u.name}=${u.soft}:${u.hard}`);
  for (const m of s.mounts) a.push('--mount', mountArg(m));
  for (const p of s.ports) a.push('--publish', [p.hostIp, p.hostPort ?? '', p.container].filter((x) => x !== undefined).join(':'));
  if (s.stopSignal) a.push('--stop-signal', s.stopSignal);
  const sameEntrypoint = f.oldImage && s.entrypoint.join('\0') === f.oldImage.entrypoint.join('\0');
  if (s.entrypoint.length && !sameEntrypoint) a.push('--entrypoint', JSON.stringify(s.entrypoint));
  a.push(f.image, ...s.cmd);
  return a;
}

function networkArgs(s: ContainerSettings): string[] {
  const mode = s.network.mode;
  // podman names a user network's container "bridge" mode; docker names the network itself
  const named = s.network.networks.filter((n) => !['podman', 'bridge', 'host', 'none'].includes(n.name));
  if (named.length) {
    return named.flatMap((n, i) => [
      '--network',
      n.name,
      ...(i === 0 && n.ip ? ['--ip', n.ip] : []),
      ...n.aliases.filter((x) => x !== s.name).flatMap((x) => ['--network-alias', x]),
    ]);
  }
  if (mode === 'default' || mode === '') return [];
  return ['--network', mode];
}

function mountArg(m: ContainerMount): string {
  const parts = [`type=${m.type}`];
  if (m.type !== 'tmpfs') parts.push(`source=${m.source}`);
  parts.push(`destination=${m.destination}`);
  if (m.readOnly) parts.push('readonly');
  // (a value with a comma cannot be one field of --mount: quoted as CSV)
  return parts.map((p) => (p.includes(',') || p.includes('"') ? `"${p.replace(/"/g, '""')}"` : p)).join(',');
}

/** The flag's value in a command line (`--data-dir=X`, `--data-dir X`), else the ETCD_* variable's. */
export function settingOf(s: Pick<ContainerSettings, 'argv' | 'env'>, key: string): string | undefined {
  for (let i = 0; i < s.argv.length; i++) {
    const w = s.argv[i]!;
    const m = /^--?([A-Za-z0-9-]+)(?:=([\s\S]*))?$/.exec(w);
    if (m?.[1] !== key) continue;
    if (m[2] !== undefined) return m[2];
    const next = s.argv[i + 1];
    return next !== undefined && !next.startsWith('-') ? next : 'true';
  }
  return s.env[`ETCD_${key.toUpperCase().replace(/-/g, '_')}`];
}

/** The mount that holds `path` inside the container (the longest destination that is it or a parent), and the path under it. */
export function mountOf(s: Pick<ContainerSettings, 'mounts'>, path: string): { mount: ContainerMount; rest: string } | undefined {
  const hits = s.mounts
    .filter((m) => m.type !== 'tmpfs' && (path === m.destination || path.startsWith(`${m.destination.replace(/\/$/, '')}/`)))
    .sort((a, b) => b.destination.length - a.destination.length);
  const mount = hits[0];
  return mount ? { mount, rest: path.slice(mount.destination.replace(/\/$/, '').length).replace(/^\//, '') } : undefined;
}
