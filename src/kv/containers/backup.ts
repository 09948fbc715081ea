/**
 * The data-dir backups of container members (issue 61, item 3): after a member's container stops, the data
 * dir it runs on (on a named volume or a bind mount) is copied on its host with `cp -a --sparse=always` (runs
 * of zeros stay holes: a WAL segment preallocated to 64 MB costs what was written to it), as the proof copies
 * it (proof.ts):
 * - a named volume's data into a volume of its own, made by the engine (`volume create`):
 *   CONTAINER.opsctl-backup-RUN, labelled io.opsctl.member and io.opsctl.backup-of, so `podman volume ls`
 *   shows it and `volume rm` removes it;
 * - a bind mount's data into a directory beside it: DIR.opsctl-backup-RUN, on the same filesystem.
 * RUN is the copy's {run} (journal/copies.ts), recorded in the journal before the copy begins: the place is
 * named by the member's container and {run} alone, so a resume, the put-back (--on-failure rollback), the
 * measure and the removal (once the hop is done, or by `kv backups prune`) find it from the journal's record.
 * The put-back keeps the data the target ran on beside it (CONTAINER.opsctl-failed-RUN, a volume; or
 * DIR.opsctl-failed-RUN), then copies the backup into the data dir, which stays where the container mounts it.
 * A member whose WAL dir is apart (--wal-dir outside its data dir, or on a mount of its own: dirs.ts): the copy
 * holds that WAL as its member/wal, as the local driver's copies do (drivers/backup-copy.ts); the put-back keeps
 * the WAL the target ran on as the kept data's member/wal and puts the copy's member/wal back into the WAL dir.
 * Reading the host paths needs the engine's host (root, or `sudo` in onHost), as the proof does.
 */
import { posix } from 'node:path';
import type { MemberSpec } from '../cluster/cluster-file.js';
import type { CopySize } from '../drivers/driver.js';
import { backupNeeds, parseDu, parseSpaceReport, type BackupSpace } from '../drivers/space.js';
import { copySizeScript, parseCopySize } from '../drivers/host-copy.js';
import { EngineError, failure, type EngineResult } from './engine.js';
import { LABELS, type ContainerSettings } from './settings.js';
import { memberData, volumeMountpoint, type DirsDriver, type MemberData } from './dirs.js';

export { dataDirIn, memberData, volumeMountpoint, type MemberData } from './dirs.js';

/** The part of a copy's name after the container's name (a volume) or the data dir's path (a bind). */
export const BACKUP = '.opsctl-backup-';
/** Where the put-back keeps the data the target ran on. */
export const FAILED = '.opsctl-failed-';
const LABEL_BACKUP_OF = 'io.opsctl.backup-of';
const COPY_MS = 600_000;

/** What the backups ask of the container driver (driver.ts). */
export interface BackupDriver extends DirsDriver {
  /** A container found stopped by hand (its policy starts it no more): the driver's isRunning says so. */
  heldStopped(id: string): void;
}

/** Where a copy lives: a volume of its own (a volume's data), or a directory beside the data (a bind's). */
export type CopyPlace = { kind: 'volume'; name: string } | { kind: 'dir'; path: string };

/** Where kv restore builds a member's restored data (restore.ts), and where it keeps the data the member had. */
export const RESTORED = '.opsctl-restore-';
export const BEFORE_RESTORE = '.opsctl-before-restore-';
const PARTS = { backup: BACKUP, failed: FAILED, restored: RESTORED, 'before-restore': BEFORE_RESTORE } as const;

/**
 * The place of the member's copy {run} (`backup`), of the data the put-back of {run} keeps (`failed`), of the data
 * kv restore {run} builds from its snapshot (`restored`) and of the data that restore keeps (`before-restore`).
 */
export function copyPlace(o: { container: string; data: Pick<MemberData, 'mount' | 'source'>; run: string; what: keyof typeof PARTS }): CopyPlace {
  const part = PARTS[o.what];
  if (o.data.mount.type === 'volume') return { kind: 'volume', name: `${o.container}${part}${o.run}` };
  return { kind: 'dir', path: `${o.data.source.replace(/\/+$/, '')}${part}${o.run}` };
}

/** How a place is named in a message and the journal. */
export function placeText(p: CopyPlace): string {
  return p.kind === 'volume' ? `volume ${p.name}` : p.path;
}

/**
 * The copy script (`sh -c SCRIPT sh SRC DEST [WAL]`): DEST made (or emptied: a copy begun again), the data dir's
 * contents and its own mode, owner and times copied into it, sparse; a WAL dir apart (WAL) as the copy's
 * member/wal (a member/wal left in the data dir is not what etcd reads then: left out); then the bytes it
 * takes, as du counts them.
 */
export const COPY_SCRIPT = [
  'set -eu',
  'src=$1 dest=$2 wal=${3-}',
  '[ -d "$src" ] || { echo "opsctl: the data dir $src is not there" >&2; exit 3; }',
  '[ -z "$wal" ] || [ -d "$wal" ] || { echo "opsctl: the WAL dir $wal is not there" >&2; exit 3; }',
  'mkdir -p -- "$dest"',
  'find "$dest" -mindepth 1 -maxdepth 1 -exec rm -rf -- {} +',
  'cp -a --sparse=always -- "$src/." "$dest/"',
  'if [ -n "$wal" ]; then rm -rf -- "$dest/member/wal"; mkdir -p -- "$dest/member"; cp -a --sparse=always -- "$wal" "$dest/member/wal"; fi',
  'echo "opsctl-copied: $(du -sB1 -- "$dest" | cut -f1)"',
].join('\n');

/**
 * The put-back script (`sh -c SCRIPT sh DATA COPY FAILED [WAL]`): the data dir's contents moved into FAILED
 * (kept), the copy's contents copied into the data dir (sparse; the dir itself stays: the container mounts it).
 * Run again after a kill, it finds FAILED holding the moved data already, and empties the data dir instead.
 * A WAL dir apart (WAL): its contents kept as FAILED/member/wal (a member/wal in the data dir, which etcd did not
 * read, kept as member/wal.ignored), the copy's member/wal put back into it, the rest of the copy into the data dir.
 */
export const RESTORE_SCRIPT = [
  'set -eu',
  'data=$1 copy=$2 failed=$3 wal=${4-}',
  '[ -d "$copy" ] || { echo "opsctl: the copy $copy is not there" >&2; exit 3; }',
  '[ -z "$wal" ] || [ -d "$copy/member/wal" ] || { echo "opsctl: the copy $copy holds no member/wal for the WAL dir $wal" >&2; exit 3; }',
  'mkdir -p -- "$data" "$failed"',
  'if [ -n "$(ls -A -- "$failed")" ]; then find "$data" -mindepth 1 -maxdepth 1 -exec rm -rf -- {} +',
  'else',
  '  [ -z "$wal" ] || [ ! -e "$data/member/wal" ] || mv -- "$data/member/wal" "$data/member/wal.ignored"',
  '  find "$data" -mindepth 1 -maxdepth 1 -exec mv -t "$failed" -- {} +',
  'fi',
  'if [ -z "$wal" ]; then cp -a --sparse=always -- "$copy/." "$data/"; exit 0; fi',
  'mkdir -p -- "$wal" "$failed/member/wal"',
  'if [ -n "$(ls -A -- "$failed/member/wal")" ]; then find "$wal" -mindepth 1 -maxdepth 1 -exec rm -rf -- {} +',
  'else find "$wal" -mindepth 1 -maxdepth 1 -exec mv -t "$failed/member/wal" -- {} +; fi',
  'find "$copy" -mindepth 1 -maxdepth 1 ! -name member -exec cp -a --sparse=always -t "$data/" -- {} +',
  'if [ -d "$copy/member" ]; then',
  '  mkdir -p -- "$data/member"',
  '  find "$copy/member" -mindepth 1 -maxdepth 1 ! -name wal -exec cp -a --sparse=always -t "$data/member/" -- {} +',
  '  chown --reference="$copy/member" -- "$data/member"; chmod --reference="$copy/member" -- "$data/member"',
  'fi',
  'chown --reference="$copy" -- "$data"; chmod --reference="$copy" -- "$data"',
  'cp -a --sparse=always -- "$copy/member/wal/." "$wal/"',
].join('\n');

/** The space script (`sh -c SCRIPT sh DATA FS`): `du -sk DATA` then `df -Pk FS` (space.ts reads them). */
export const SPACE_SCRIPT = 'du -sk -- "$1" && df -Pk -- "$2"';

/** The bytes the copy script said it took, else undefined. */
export function copiedBytes(stdout: string): number | undefined {
  const n = /^opsctl-copied: (\d+)$/m.exec(stdout)?.[1];
  return n === undefined ? undefined : Number(n);
}

/** The directory whose filesystem a copy of `data` lands on: the volumes' directory (a volume's copy is a volume beside it), a bind's parent. */
export function copyFilesystem(data: Pick<MemberData, 'mount' | 'source'>): string {
  if (data.mount.type === 'volume') return posix.dirname(posix.dirname(data.mount.hostPath.replace(/\/+$/, '')));
  return posix.dirname(data.source.replace(/\/+$/, ''));
}

/** A script on the member's host, with its arguments (no shell quoting: each one argument of `sh -c`). */
export function script(d: BackupDriver, m: MemberSpec, text: string, args: string[], timeoutMs = 120_000): Promise<EngineResult> {
  return d.engine.host(m, ['sh', '-c', text, 'sh', ...args], timeoutMs);
}

/** The place's directory on the host, the volume made first where it is one (labelled with the member and what it holds). */
export async function makePlace(d: BackupDriver, m: MemberSpec, p: CopyPlace, of: string): Promise<string> {
  if (p.kind === 'dir') return p.path;
  const have = await volumeMountpoint(d, m, p.name);
  if (have) return have;
  await d.engine.must(m, ['volume', 'create', '--label', `${LABELS.member}=${m.name}`, '--label', `${LABEL_BACKUP_OF}=${of}`, p.name]);
  const made = await volumeMountpoint(d, m, p.name);
  if (!made) throw new EngineError(`the volume ${p.name} was created, and the engine does not have it`);
  return made;
}

/**
 * The member's container stopped and staying so, before its data is put back: a start that fails is started
 * again and again by a restart policy (podman at once, docker after a back-off), and the flow's stop may have
 * looked between two of them. One with a policy (or that runs) is stopped by hand (a stop then holds, even of
 * one between two starts: the engine restarts no container stopped by hand), and looked at again a moment later
 * (a restart the engine had begun before the stop may still land: it is stopped again).
 */
export async function stopForGood(d: BackupDriver, m: MemberSpec, graceS = 30): Promise<void> {
  const name = d.containerOf(m);
  for (let i = 0; i < 20; i++) {
    const c = await d.engine.inspect(m, name);
    if (!c) return;
    if (!c.running && !c.restarting && !c.restart) return d.heldStopped(c.id);
    // (a stop of one its policy would start again holds it, even between two of its starts)
    const stopped = await d.engine.run(m, d.engine.stopArgs(name, graceS), (graceS + 30) * 1000);
    // One seen running (not between two starts) and stopped without an error was stopped by hand while it ran: the
    // engine marks it so before its signal (podman's StoppedByUser, docker's manual stop) and its policy starts it no
    // more. One look confirms it: the same run (its start time) ended, at least RAN_LONG after it began (both times
    // of the engine's host's clock): a start that fails, which a policy starts again and again, ends sooner, and may
    // have ended by itself just before the stop (podman 4.3 marks no container that is not running, and its restart
    // may still land). Every other case is watched for 2 s.
    if (c.running && !c.restarting && stopped.exitCode === 0) {
      const after = await d.engine.inspect(m, name);
      if (!after) return;
      if (!after.running && !after.restarting && after.restarts === c.restarts && ranLong(c, after)) return d.heldStopped(c.id);
    }
    // held only when seen down, and not started again (its restart count still), on every look for 2 s: a stop that
    // reaches a start that fails between two of its policy's starts may not hold it (podman 4.3), and a look may
    // fall between two starts; a container started again may join its cluster again
    if (await staysDown(d, m, name)) return d.heldStopped(c.id);
  }
  throw new EngineError(
    `${name} keeps being started again (its restart policy): stop it by hand (\`${d.engine.program} stop ${name}\`), then run the same command`,
  );
}

/** How long a run must have lasted to be a member's, not a start that fails under a restart policy (these end within seconds). */
const RAN_LONG = 10_000;

/** Whether the run seen at `before` (its start time) is the one `after` says ended, and it lasted at least RAN_LONG. */
function ranLong(before: ContainerSettings, after: ContainerSettings): boolean {
  if (!before.startedAt || before.startedAt !== after.startedAt || !after.finishedAt) return false;
  const ran = Date.parse(after.finishedAt) - Date.parse(after.startedAt);
  return Number.isFinite(ran) && ran >= RAN_LONG;
}

/** Whether the container is seen not running, and not started again since the first look, on each of 4 looks 500 ms apart. */
async function staysDown(d: BackupDriver, m: MemberSpec, name: string): Promise<boolean> {
  const first = await d.engine.inspect(m, name);
  if (first?.running || first?.restarting) return false;
  for (let look = 0; look < 4; look++) {
    await new Promise((ok) => setTimeout(ok, 500));
    const again = await d.engine.inspect(m, name);
    if (again?.running || again?.restarting || again?.restarts !== first?.restarts) return false;
  }
  return true;
}

/** The member's WAL dir where the data dir's copy does not hold it (a copy holds it as member/wal then). */
export function walApart(data: MemberData): MemberData['wal'] {
  return data.wal?.apart ? data.wal : undefined;
}

export const mountText = (x: MemberData['mount']) => `${x.type === 'volume' ? 'volume' : 'bind'} ${x.source}`;

/** The container must be stopped: its data is copied (or put back) at one instant, with nothing writing. */
export function mustBeStopped(data: MemberData, what: string): void {
  if (data.container.running) throw new EngineError(`${data.container.name} runs: its data is ${what} only with the container stopped`);
}

/** After the member's stop: its data dir copied to the place of {run}. The journal's detail: what was copied, where, its size. */
export async function backupData(d: BackupDriver, m: MemberSpec, run: string): Promise<string> {
  const data = await memberData(d, m);
  mustBeStopped(data, 'copied');
  const place = copyPlace({ container: d.containerOf(m), data, run, what: 'backup' });
  const dest = await makePlace(d, m, place, `${data.mount.type === 'volume' ? data.mount.source : data.source}`);
  const wal = walApart(data);
  const r = await script(d, m, COPY_SCRIPT, [data.source, dest, ...(wal ? [wal.source] : [])], COPY_MS);
  if (r.exitCode !== 0) throw new EngineError(`the copy of ${m.name}'s data dir ${data.source} to ${placeText(place)} failed: ${failure(r, COPY_MS)}`);
  const bytes = copiedBytes(r.stdout);
  const walSaid = wal ? `, its WAL dir ${wal.dir} (${mountText(wal.mount)}: ${wal.source}) as member/wal,` : '';
  return `${data.container.name}'s data dir ${data.dataDir} (${mountText(data.mount)}: ${data.source})${walSaid} copied to ${placeText(place)}${place.kind === 'volume' ? ` (${dest})` : ''} with cp -a --sparse=always${bytes === undefined ? '' : `: ${bytes} bytes on disk`}`;
}

/** --on-failure rollback: the member's data dir put back from the copy {run}, the data the target ran on kept beside it. */
export async function putBackData(d: BackupDriver, m: MemberSpec, run: string): Promise<string> {
  await stopForGood(d, m);
  const data = await memberData(d, m);
  mustBeStopped(data, 'put back');
  const container = d.containerOf(m);
  const place = copyPlace({ container, data, run, what: 'backup' });
  const copy = place.kind === 'volume' ? await volumeMountpoint(d, m, place.name) : place.path;
  if (!copy) throw new EngineError(`the copy of ${m.name}'s data ({run} ${run}) is not there: no ${placeText(place)}`);
  const kept = copyPlace({ container, data, run, what: 'failed' });
  const failed = await makePlace(d, m, kept, `${data.source} (the data ${run}'s target ran on)`);
  const wal = walApart(data);
  const r = await script(d, m, RESTORE_SCRIPT, [data.source, copy, failed, ...(wal ? [wal.source] : [])], COPY_MS);
  if (r.exitCode !== 0) throw new EngineError(`putting ${m.name}'s data back from ${placeText(place)} failed: ${failure(r, COPY_MS)}`);
  if (!wal) return `data dir ${data.source} restored from ${placeText(place)}, the data the target ran on kept in ${placeText(kept)}`;
  return `data dir ${data.source} and WAL dir ${wal.source} (its member/wal) restored from ${placeText(place)}, the data and WAL the target ran on kept in ${placeText(kept)} (the WAL as member/wal)`;
}

/**
 * The copy {run}'s place, found from the journal's record alone where it can be: the volume of that name
 * (named by the member's container), else the directory beside the member's bind-mounted data.
 */
async function findCopy(d: BackupDriver, m: MemberSpec, run: string): Promise<{ place: CopyPlace; dir?: string } | { why: string }> {
  const volume: CopyPlace = { kind: 'volume', name: `${d.containerOf(m)}${BACKUP}${run}` };
  const mp = await volumeMountpoint(d, m, volume.name);
  if (mp) return { place: volume, dir: mp };
  let data: MemberData;
  try {
    data = await memberData(d, m);
  } catch (err) {
    return { why: `no ${placeText(volume)}, and where a bind's copy would be cannot be told: ${(err as Error).message}` };
  }
  if (data.mount.type === 'volume') return { place: volume };
  return { place: copyPlace({ container: d.containerOf(m), data, run, what: 'backup' }) };
}

/** Once the hop is done (or by `kv backups prune`): the copy {run} removed; a copy already gone is said, never an error. */
export async function dropData(d: BackupDriver, m: MemberSpec, run: string): Promise<string> {
  const found = await findCopy(d, m, run);
  if ('why' in found) throw new EngineError(found.why);
  const { place, dir } = found;
  if (place.kind === 'volume') {
    if (!dir) return `${placeText(place)} is gone already`;
    await d.engine.must(m, ['volume', 'rm', place.name]);
    return `${placeText(place)} removed (\`${d.engine.program} volume rm ${place.name}\`)`;
  }
  const r = await d.engine.host(m, ['rm', '-rf', '--', place.path]);
  if (r.exitCode !== 0) throw new EngineError(failure(r, 120_000));
  return `${place.path} removed`;
}

/** The copy {run} measured on its host as du counts it (its holes cost nothing), or why not. */
export async function copySize(d: BackupDriver, m: MemberSpec, run: string, host: string): Promise<CopySize & { path?: string }> {
  const found = await findCopy(d, m, run);
  if ('why' in found) return found;
  const path = found.place.kind === 'volume' ? found.dir : found.place.path;
  if (!path) return { why: `${placeText(found.place)} is not there (removed)` };
  const r = await d.engine.host(m, ['sh', '-c', copySizeScript(path)]);
  return {
    path,
    ...parseCopySize(
      { stdout: r.stdout, stderr: r.stderr, ...(r.exitCode === undefined ? { failed: failure(r, 120_000) } : { exitCode: r.exitCode }) },
      path,
      host,
    ),
  };
}

/** Before each stop: the copy fits where it lands (the data dir, and a WAL dir apart, as du counts them, plus 10% and 64 MiB). */
export async function backupSpace(d: BackupDriver, m: MemberSpec, host: string): Promise<BackupSpace & { host: string }> {
  const data = await memberData(d, m);
  const fs = copyFilesystem(data);
  const r = await script(d, m, SPACE_SCRIPT, [data.source, fs]);
  if (r.exitCode !== 0) throw new EngineError(`the space for ${m.name}'s copy could not be measured: ${failure(r, 120_000)}`);
  const got = parseSpaceReport(r.stdout);
  const wal = walApart(data);
  let walBytes = 0;
  if (wal) {
    const w = await d.engine.host(m, ['du', '-sk', '--', wal.source]);
    if (w.exitCode !== 0) throw new EngineError(`the space for ${m.name}'s copy could not be measured (its WAL dir): ${failure(w, 120_000)}`);
    walBytes = parseDu(w.stdout.trim().split('\n').pop() ?? '').bytes;
  }
  const dataBytes = got.dataBytes + walBytes;
  const needed = backupNeeds(dataBytes);
  const dataDir = `${host}:${got.dataDir}${wal ? ` and ${wal.source}` : ''}`;
  return { host, dest: `${host}:${got.mount}`, dataDir, dataBytes, needed, free: got.free, ok: got.free >= needed };
}
