/**
 * kv restore onto container members (issue 61, item 3): every member's data built anew from one snapshot, on
 * its engine's host, by the restore tool of the target's own image, while the cluster still runs; then, with
 * the members stopped, each data dir's contents kept and the restored data put in their place; the members
 * then start as kv restore starts any (the container of the target's image, or one made from it: driver.ts).
 *
 * - Before any stop (prepare): a place of the member's own, named by its container and the restore's {run}
 *   as the backups' are (backup.ts copyPlace): a volume CONTAINER.opsctl-restore-RUN where the data is on a
 *   volume, a directory DIR.opsctl-restore-RUN beside a bind-mounted one. The snapshot is streamed into it
 *   through the engine's host (so an engine behind `ssh {host}` gets it too), and a container of the target's
 *   image with no network runs `etcdutl snapshot restore` (etcdctl before 3.5) into it, as root, its output
 *   then owned as the member's data is. A declined or refused restore removes the place (abandon).
 * - The members stopped (restore): the put-back of backup.ts (RESTORE_SCRIPT): the data dir's contents moved
 *   into CONTAINER.opsctl-before-restore-RUN (or DIR.opsctl-before-restore-RUN), never deleted, the restored
 *   contents copied into the data dir (which stays where the container mounts it), a WAL dir apart given the
 *   restored member/wal. Run again after a kill, it finds the kept data there and puts the restored data back again.
 */
import { posix } from 'node:path';
import type { MemberSpec } from '../cluster/cluster-file.js';
import { compareMinor, minor } from '../cluster/parse.js';
import type { RestoreRequest } from '../drivers/driver.js';
import { restoreArgs } from '../drivers/restore-data.js';
import { EngineError, failure } from './engine.js';
import {
  copyPlace,
  makePlace,
  memberData,
  mountText,
  mustBeStopped,
  placeText,
  RESTORE_SCRIPT,
  RESTORED,
  script,
  stopForGood,
  volumeMountpoint,
  walApart,
  type BackupDriver,
  type CopyPlace,
  type MemberData,
} from './backup.js';

/** What a restore asks of the container driver (driver.ts). */
export interface RestoreDriver extends BackupDriver {
  imageOf(version: string): string | undefined;
}

const RESTORE_MS = 600_000;
/** Where the place is mounted in the container of the restore tool. */
const AT = '/opsctl-restore';

/**
 * Made ready for the restore tool (`sh -c SCRIPT sh PLACE`): the place emptied (a restore begun again), the
 * snapshot written into it from the standard input.
 */
const RECEIVE_SCRIPT = ['set -eu', 'p=$1', 'find "$p" -mindepth 1 -maxdepth 1 -exec rm -rf -- {} +', 'umask 077', 'cat > "$p/snapshot.db"'].join('\n');

/** After the restore tool (`sh -c SCRIPT sh PLACE DATA`): the snapshot dropped, the restored data owned as the member's data is. */
const OWN_SCRIPT = [
  'set -eu',
  'p=$1 data=$2',
  'rm -f -- "$p/snapshot.db"',
  '[ -d "$p/data/member" ] || { echo "opsctl: the restore tool left no $p/data/member" >&2; exit 3; }',
  'ref=$data; [ -d "$data/member" ] && ref=$data/member',
  'chown -R --reference="$ref" -- "$p/data"',
].join('\n');

/** The image of the restore's target and the restore tool in it (beside the member's own etcd: etcdutl from 3.5, etcdctl before). */
async function toolOf(d: RestoreDriver, m: MemberSpec, r: RestoreRequest): Promise<{ image: string; tool: string; name: 'etcdutl' | 'etcdctl' }> {
  const image = d.imageOf(r.target.version);
  if (!image)
    throw new EngineError(`member ${m.name}: no image for ${r.target.version} in driver.images of the cluster file: add "${r.target.version}": IMAGE`);
  const etcd = (await d.settingsSource(m))?.argv[0] ?? '/usr/local/bin/etcd';
  const name = compareMinor(minor(r.target.version) ?? r.target.version, '3.5') >= 0 ? 'etcdutl' : 'etcdctl';
  return { image, tool: posix.join(posix.dirname(etcd.startsWith('/') ? etcd : '/usr/local/bin/etcd'), name), name };
}

/** The place {run} builds the member's restored data in. */
function restoredPlace(d: RestoreDriver, m: MemberSpec, data: MemberData, run: string): CopyPlace {
  return copyPlace({ container: d.containerOf(m), data, run, what: 'restored' });
}

/** Before any stop: the member's data dir is found on its host, and the target's image is named. Its words for the plan. */
export async function checkRestore(d: RestoreDriver, m: MemberSpec, r: RestoreRequest): Promise<string> {
  const { image, tool } = await toolOf(d, m, r);
  const data = await memberData(d, m);
  return `data dir ${data.dataDir} (${mountText(data.mount)}: ${data.source}); restored by ${tool} of ${image} beside it, its contents then kept in ${placeText(copyPlace({ container: d.containerOf(m), data, run: r.run, what: 'before-restore' }))}`;
}

/** Before any stop: the member's restored data built in its place, by the target image's restore tool. */
export async function prepareRestore(d: RestoreDriver, m: MemberSpec, r: RestoreRequest): Promise<void> {
  const { image, tool, name } = await toolOf(d, m, r);
  const data = await memberData(d, m);
  const place = restoredPlace(d, m, data, r.run);
  const dir = await makePlace(d, m, place, `${data.source} (kv restore ${r.run})`);
  const got = await d.engine.host(m, ['sh', '-c', RECEIVE_SCRIPT, 'sh', dir], RESTORE_MS, { file: r.snapshot });
  if (got.exitCode !== 0) throw new EngineError(`the snapshot could not be written into ${placeText(place)}: ${failure(got, RESTORE_MS)}`);
  const made = await d.engine.run(
    m,
    [
      'run',
      '--rm',
      '--network',
      'none',
      '--user',
      '0:0',
      ...(name === 'etcdctl' ? ['--env', 'ETCDCTL_API=3'] : []),
      '--volume',
      `${place.kind === 'volume' ? place.name : dir}:${AT}`,
      '--entrypoint',
      tool,
      image,
      ...restoreArgs(r, { snapshot: `${AT}/snapshot.db`, dataDir: `${AT}/data` }),
    ],
    RESTORE_MS,
  );
  if (made.exitCode !== 0) throw new EngineError(`${tool} snapshot restore in ${image} failed for ${m.name}: ${failure(made, RESTORE_MS)}`);
  const owned = await script(d, m, OWN_SCRIPT, [dir, data.source], RESTORE_MS);
  if (owned.exitCode !== 0) throw new EngineError(`${m.name}'s restored data in ${placeText(place)}: ${failure(owned, RESTORE_MS)}`);
}

/** The member stopped: its data dir's contents kept, the restored data in their place. The journal's detail. */
export async function restoreData(d: RestoreDriver, m: MemberSpec, r: RestoreRequest): Promise<string> {
  await stopForGood(d, m);
  const data = await memberData(d, m);
  mustBeStopped(data, 'restored');
  const place = restoredPlace(d, m, data, r.run);
  const dir = await placeDir(d, m, place);
  const kept = copyPlace({ container: d.containerOf(m), data, run: r.run, what: 'before-restore' });
  const walSaid = walApart(data) ? ` and WAL dir ${walApart(data)!.source} (its member/wal)` : '';
  if (!dir) {
    // (resumed after its put-back and the place's removal: the kept data in its place, the restored data in the data dir)
    const keptAt = await placeDir(d, m, kept);
    const both = keptAt && (await d.engine.host(m, ['test', '-d', `${keptAt}/member`, '-a', '-d', `${data.source}/member`])).exitCode === 0;
    if (both) return `data dir ${data.source}${walSaid} restored already (a resumed restore), the data it had kept in ${placeText(kept)}`;
    throw new EngineError(`${m.name}'s restored data ({run} ${r.run}) is not there: no ${placeText(place)}; run the same command to build it again`);
  }
  const keptDir = await makePlace(d, m, kept, `${data.source} (before kv restore ${r.run})`);
  const wal = walApart(data);
  const put = await script(d, m, RESTORE_SCRIPT, [data.source, `${dir}/data`, keptDir, ...(wal ? [wal.source] : [])], RESTORE_MS);
  if (put.exitCode !== 0) throw new EngineError(`putting ${m.name}'s restored data into ${data.source} failed: ${failure(put, RESTORE_MS)}`);
  // the restored data is in the data dir now: its place goes (the data the member had stays kept)
  await dropPlace(d, m, place);
  return `data dir ${data.source}${walSaid} restored from ${placeText(place)} (removed after), the data it had kept in ${placeText(kept)}`;
}

/** A place's directory on the host, or undefined when it is not there. */
async function placeDir(d: RestoreDriver, m: MemberSpec, p: CopyPlace): Promise<string | undefined> {
  if (p.kind === 'volume') return volumeMountpoint(d, m, p.name);
  return (await d.engine.host(m, ['test', '-d', p.path])).exitCode === 0 ? p.path : undefined;
}

async function dropPlace(d: RestoreDriver, m: MemberSpec, p: CopyPlace): Promise<void> {
  if (p.kind === 'volume') {
    if (await volumeMountpoint(d, m, p.name)) await d.engine.must(m, ['volume', 'rm', p.name]);
    return;
  }
  const r = await d.engine.host(m, ['rm', '-rf', '--', p.path]);
  if (r.exitCode !== 0) throw new EngineError(failure(r, RESTORE_MS));
}

/** A restore that does not go ahead (declined, refused, superseded): the place its data was built in removed. */
export async function abandonRestore(d: RestoreDriver, m: MemberSpec, r: RestoreRequest): Promise<void> {
  const data = await memberData(d, m).catch(() => undefined);
  // (a member whose data cannot be found now: its place, where one was made, is a volume of its container's name)
  await dropPlace(d, m, data ? restoredPlace(d, m, data, r.run) : { kind: 'volume', name: `${d.containerOf(m)}${RESTORED}${r.run}` });
}
