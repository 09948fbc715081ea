/**
 * Where a container member keeps its data: its data dir (and its WAL dir, where it sets one: --wal-dir,
 * ETCD_WAL_DIR or its config file's wal-dir) inside the container, the mount that holds each, and the path on
 * the engine's host. The backups, the put-back and the proof copy them there (backup.ts, proof.ts); where the
 * engine runs on this machine, MemberDriver.dataDirs gives the host paths to the tools opsctl runs here on
 * the member's data (the just-in-time WAL check before a start, kv/wal).
 *
 * A WAL dir is *apart* when the data dir's copy does not hold it: outside the data dir, or on a mount of its
 * own under it. A copy then holds it as its member/wal (as the local driver's copies do, backup-copy.ts), and
 * the put-back puts that back into the WAL dir.
 */
import { posix } from 'node:path';
import type { MemberSpec } from '../cluster/cluster-file.js';
import type { MemberDirs } from '../drivers/driver.js';
import { configFileOf } from '../drivers/start-settings.js';
import { NoTrial, parseConfigDoc } from '../trial/rewrite.js';
import { EngineError, failure, type Engine } from './engine.js';
import { mountOf, ownEnv, settingOf, type ContainerMount, type ContainerSettings } from './settings.js';

/** What reading a member's dirs asks of the container driver (driver.ts). */
export interface DirsDriver {
  readonly engine: Engine;
  containerOf(m: MemberSpec): string;
  settingsSource(m: MemberSpec): Promise<ContainerSettings | undefined>;
}

/** One dir of the member: where it is inside the container, the mount that holds it, and where it is on the host. */
export interface DirOnMount {
  /** Inside the container. */
  dir: string;
  mount: ContainerMount;
  /** On the host: the mount's host path, and the part under it. */
  source: string;
}

/** Where a member's data dir (and WAL dir) is, inside its container and on its host. */
export interface MemberData extends DirOnMount {
  container: ContainerSettings;
  /** The data dir inside the container (= dir). */
  dataDir: string;
  /** Its WAL dir, where it sets one; `apart`: the data dir's copy does not hold it (outside it, or on a mount of its own). */
  wal?: DirOnMount & { apart: boolean };
}

/** The data dir inside the container: its config file's data-dir, else its command's or ETCD_DATA_DIR, else NAME.etcd in its working dir. */
export function dataDirIn(c: Pick<ContainerSettings, 'argv' | 'env' | 'workdir'>, fromConfig: string | undefined): string {
  const given = fromConfig ?? settingOf(c, 'data-dir');
  return posix.resolve(c.workdir ?? '/', given ?? `${settingOf(c, 'name') ?? 'default'}.etcd`);
}

/** The WAL dir inside the container, where it sets one (its config file's wal-dir, else its command's or ETCD_WAL_DIR). */
export function walDirIn(c: Pick<ContainerSettings, 'argv' | 'env' | 'workdir'>, fromConfig: string | undefined): string | undefined {
  const given = fromConfig ?? settingOf(c, 'wal-dir');
  return given ? posix.resolve(c.workdir ?? '/', given) : undefined;
}

function onMount(c: Pick<ContainerSettings, 'mounts'>, dir: string): DirOnMount | undefined {
  const at = mountOf(c, dir);
  return at && { dir, mount: at.mount, source: at.rest ? `${at.mount.hostPath.replace(/\/+$/, '')}/${at.rest}` : at.mount.hostPath };
}

/**
 * The member's dirs from its container's settings and the values its config file gives (pure): each on the
 * mount that holds it, or why not (a dir on no mount lives in the container's own layer: the next container,
 * from the hop's image, would not have it, and the host has no path for it).
 */
export function placeDirs(c: ContainerSettings, fromConfig: { dataDir?: string; walDir?: string } = {}): Omit<MemberData, 'container'> | { why: string } {
  const dataDir = dataDirIn(c, fromConfig.dataDir);
  const data = onMount(c, dataDir);
  if (!data) return { why: `${c.name}'s data dir ${dataDir} is on no volume or bind mount` };
  const walDir = walDirIn(c, fromConfig.walDir);
  if (!walDir) return { ...data, dataDir };
  const wal = onMount(c, walDir);
  if (!wal) return { why: `${c.name}'s WAL dir ${walDir} (its wal-dir) is on no volume or bind mount` };
  const under = walDir.startsWith(`${dataDir.replace(/\/+$/, '')}/`);
  return { ...data, dataDir, wal: { ...wal, apart: !under || wal.mount !== data.mount } };
}

/** The data-dir and wal-dir its config file names, read from the mount that holds the file on its host (none: no config file). */
async function configDirs(d: DirsDriver, m: MemberSpec, c: ContainerSettings): Promise<{ dataDir?: string; walDir?: string }> {
  const env = Object.fromEntries(Object.entries(ownEnv(c, undefined)).filter(([k]) => /^ETCD_/.test(k)));
  const file = configFileOf(c.argv.slice(1), env);
  if (!file) return {};
  const at = mountOf(c, file);
  if (!at) throw new EngineError(`${c.name}'s config file ${file} is on no mount: its data dir cannot be told from the host`);
  const path = at.rest ? `${at.mount.hostPath}/${at.rest}` : at.mount.hostPath;
  const r = await d.engine.host(m, ['cat', '--', path]);
  if (r.exitCode !== 0) throw new EngineError(`${c.name}'s config file ${file} (${path} on its host) cannot be read: ${failure(r, 120_000)}`);
  try {
    const doc = await parseConfigDoc(r.stdout, `${file} in ${c.name}`);
    const text = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
    const dataDir = text(doc.get('data-dir'));
    const walDir = text(doc.get('wal-dir'));
    return { ...(dataDir ? { dataDir } : {}), ...(walDir ? { walDir } : {}) };
  } catch (err) {
    if (err instanceof NoTrial) throw new EngineError(err.message);
    throw err;
  }
}

/**
 * The member's data dir and WAL dir, read from the container the driver starts next (the member's container,
 * else, after a kill between its keep and the next one's create, its newest kept one: the same mounts) and the
 * config file it names. Throws naming what is wrong.
 */
export async function memberData(d: DirsDriver, m: MemberSpec): Promise<MemberData> {
  const c = await d.settingsSource(m);
  if (!c) throw new EngineError(`the engine has no container ${d.containerOf(m)} (member ${m.name}; driver.container in the cluster file names it)`);
  const placed = placeDirs(c, await configDirs(d, m, c));
  if ('why' in placed) throw new EngineError(`${placed.why}: there is nothing on the host to copy`);
  return { container: c, ...placed };
}

const NO_VOLUME = /no such volume|volume not found|not found/i;

/** A volume's directory on its host, or undefined when the engine has no volume of that name. */
export async function volumeMountpoint(d: Pick<DirsDriver, 'engine'>, m: MemberSpec, name: string): Promise<string | undefined> {
  const r = await d.engine.run(m, ['volume', 'inspect', name]);
  if (r.exitCode !== 0) {
    if (NO_VOLUME.test(r.stderr)) return undefined;
    throw new EngineError(failure(r, 120_000));
  }
  const v = (JSON.parse(r.stdout) as Array<{ Mountpoint?: string }>)[0];
  if (!v?.Mountpoint) throw new EngineError(`\`${d.engine.program} volume inspect ${name}\` names no Mountpoint`);
  return v.Mountpoint;
}

/** A dir's path on the host as the engine has it now: a volume's Mountpoint (asked: `volume inspect`), a bind's source. */
async function hostPath(d: DirsDriver, m: MemberSpec, at: DirOnMount): Promise<string | { why: string }> {
  if (at.mount.type !== 'volume') return at.source;
  const mp = await volumeMountpoint(d, m, at.mount.source);
  if (!mp) return { why: `the engine has no volume ${at.mount.source} (the mount of ${at.dir})` };
  const rest = posix.relative(at.mount.destination, at.dir);
  return rest ? `${mp.replace(/\/+$/, '')}/${rest}` : mp;
}

/**
 * MemberDriver.dataDirs for containers: the member's data dir and WAL dir as paths on this machine, where the
 * engine runs here; else why not (an engine on another host, a dir on no mount, a container the engine does
 * not have, a config file that cannot be read). Never throws.
 */
export async function hostDirs(d: DirsDriver, m: MemberSpec): Promise<MemberDirs | { why: string }> {
  const elsewhere = d.engine.elsewhere();
  if (elsewhere) return { why: `its container's engine may not run on this machine: ${elsewhere}` };
  return engineDirs(d, m);
}

/**
 * The member's data dir and WAL dir as paths on its engine's host, wherever that is (this machine, or behind
 * driver.onHost): what a script run there reads (the WAL mark on its host). Never throws.
 */
export async function engineDirs(d: DirsDriver, m: MemberSpec): Promise<MemberDirs | { why: string }> {
  try {
    const data = await memberData(d, m);
    const dataDir = await hostPath(d, m, data);
    if (typeof dataDir !== 'string') return dataDir;
    if (!data.wal) return { dataDir };
    const walDir = await hostPath(d, m, data.wal);
    if (typeof walDir !== 'string') return walDir;
    return { dataDir, walDir };
  } catch (err) {
    return { why: (err as Error).message };
  }
}
