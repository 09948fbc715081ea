/**
 * What a `kv restore` finds recorded for its cluster before it plans (journal/restore-record.ts), and what
 * it does with it: the identical command resumes a half-done restore (the same run id, token, version and
 * binaries; never a second swap over members already swapped); a restore of this snapshot already done is
 * not done twice over the writes the cluster has served since (unless --again); another snapshot, version or
 * release while a restore is half done is refused naming both; a restore that never stopped a member is
 * given up for the new one.
 */
import { readRestore, restorePath, restoreProgress, stopsBegun, type RestoreRecord } from '../journal/restore-record.js';
import { OpsError } from '../../core/errors.js';
import type { SnapshotStatus } from '../snapshot/status.js';
import type { ClusterSpec } from '../cluster/cluster-file.js';

export interface Recorded {
  resume?: RestoreRecord;
  done?: RestoreRecord;
  supersedes?: RestoreRecord;
  /** The record's last write as read (none: no record). */
  recordAt?: string;
}

const short = (sha: string) => `${sha.slice(0, 16)}…`;

/** What of a `kv restore` command decides: its cluster, opsctl's data dir, and the restore it asks for. */
export interface Asked {
  dataDir: string;
  cluster: Pick<ClusterSpec, 'key'>;
  snapshot: string;
  toVersion?: string;
  targetBin?: string;
  again?: boolean;
}

export function recordedRestore(o: Asked, snap: SnapshotStatus, notes: string[]): Recorded {
  const file = restorePath(o.dataDir, o.cluster.key);
  const prior = readRestore(file);
  if (!prior) return {};
  const recordAt = prior.updatedAt;
  const sameVersion = !o.toVersion || o.toVersion === prior.to;
  if (prior.status === 'done') {
    if (prior.snapshot.sha256 !== snap.sha256 || !sameVersion) return { recordAt };
    if (o.again) {
      notes.push(`--again: ${prior.snapshot.file} was restored already (run ${prior.id}, ${prior.updatedAt}); restored again, every write since lost`);
      return { recordAt };
    }
    return { done: prior, recordAt };
  }
  if (prior.status !== 'running') return { recordAt };
  const differs: string[] = [];
  if (prior.snapshot.sha256 !== snap.sha256)
    differs.push(
      `this command restores ${o.snapshot} (sha256 ${short(snap.sha256)}), that one ${prior.snapshot.file} (sha256 ${short(prior.snapshot.sha256)})`,
    );
  if (!sameVersion) differs.push(`this command starts the members on ${o.toVersion}, that one on ${prior.to}`);
  const bins = [...new Set(prior.members.map((m) => m.target.binDir ?? '(the driver’s own)'))];
  if (o.targetBin && (bins.length !== 1 || bins[0] !== o.targetBin)) differs.push(`this command starts ${o.targetBin}/etcd, that one ${bins.join(', ')}`);
  if (!differs.length) {
    notes.push(`resuming the restore ${prior.id} begun ${prior.createdAt} (${restoreProgress(prior)})`);
    return { resume: prior, recordAt };
  }
  if (!stopsBegun(prior)) {
    notes.push(
      `the restore ${prior.id} of ${prior.snapshot.file} (begun ${prior.createdAt}) never stopped a member: given up for this one, its staged data dropped`,
    );
    return { supersedes: prior, recordAt };
  }
  throw new OpsError(
    `kv restore refused before any change: a restore of ${prior.snapshot.file} (run ${prior.id}, begun ${prior.createdAt}) is half done: ${restoreProgress(prior)}; ${differs.join('; ')}`,
    1,
    {
      code: 'restore_half_done',
      hint: `finish it first with the command that began it (opsctl kv restore --snapshot ${prior.snapshot.file} --to-version ${prior.to}, and the cluster flags given then), then restore the other; or, to give it up as it stands, move ${file} aside (the members' data dirs and DIR.before-restore-${prior.id} stay as they are)`,
    },
  );
}

/** The human words for a restore already done (the plan of the identical command run again). */
export function doneWords(r: RestoreRecord): string {
  const res = r.result;
  return `${r.snapshot.file} (sha256 ${short(r.snapshot.sha256)}) was restored by run ${r.id} (${r.updatedAt}): every member on ${r.to}${res ? `, revision ${res.revision}, ${res.keys} keys, cluster version ${res.clusterVersion}` : ''}; nothing to do (to restore it again, every write since lost: add --again)`;
}
