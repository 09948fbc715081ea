import { journalPath, type Journal } from '../journal/journal.js';
import { readJournal } from '../journal/read.js';
import { snapshotStatus, type SnapshotStatus } from '../snapshot/status.js';

/** The snapshot taken before an upgrade's first stop: what `kv restore --snapshot` rebuilds from. */
export interface RestorePoint {
  file: string;
  sha256: string;
  revision: string;
  keys: number;
  /** Keys alive at the snapshot's revision (read from the file). */
  liveKeys?: number;
  /** The member it was taken for (the first one the upgrade stopped) and when. */
  member: string;
  takenAt: string;
  /** How the file was verified (pages walked, etcd's tool), and the member's own figures it matched. */
  verified?: string;
  memberRevision?: string;
  memberKeys?: number;
}

/** A journal with the restore point (journal.ts's shape plus this one optional field). */
export type WithRestorePoint = Journal & { restorePoint?: RestorePoint };

/**
 * Called after each verified snapshot of an upgrade: the first one (before any member was stopped)
 * becomes the journal's restore point, with its SHA-256 and figures read from the file (walked page
 * by page: snapshot-status.ts) and the member's own figures at the time (revision after the snapshot,
 * live keys at its revision), which saveSnapshot compared. `snap.status` is the verification
 * saveSnapshot already did (the file is not read again); without it the file is verified here. A
 * resumed run keeps the one it has. Returns a detail for the step line, or undefined when nothing changed.
 */
export async function recordRestorePoint(
  j: { restorePoint?: RestorePoint },
  snap: { member: string; file: string; status?: SnapshotStatus; memberFigures?: { revisionAfter?: string; keys?: number; note?: string } },
  now: number,
): Promise<string | undefined> {
  if (j.restorePoint) return undefined;
  const s = snap.status ?? (await snapshotStatus(snap.file));
  const mf = snap.memberFigures;
  j.restorePoint = {
    file: s.file,
    sha256: s.sha256,
    revision: s.revision,
    keys: s.totalKey,
    liveKeys: s.liveKeys,
    member: snap.member,
    takenAt: new Date(now).toISOString(),
    verified: s.verified,
    ...(mf?.revisionAfter !== undefined ? { memberRevision: mf.revisionAfter } : {}),
    ...(mf?.keys !== undefined ? { memberKeys: mf.keys } : {}),
  };
  const matched = mf?.keys !== undefined ? ` (the member counts ${mf.keys} at that revision)` : mf?.note ? ` (${mf.note})` : '';
  return `restore point: revision ${s.revision}, ${s.liveKeys} keys${matched}`;
}

/** The restore point of a journal: the recorded one, else (older journals) the first snapshot. */
export function restorePointOf(j: Journal | undefined): { file: string; revision: string; keys?: number; sha256?: string } | undefined {
  if (!j) return undefined;
  const rp = (j as WithRestorePoint).restorePoint;
  if (rp) return { ...rp, keys: rp.liveKeys ?? rp.keys };
  const first = j.snapshots?.[0];
  return first ? { file: first.file, revision: first.revision } : undefined;
}

/** The restore point the cluster's journal records, if any (a journal that cannot be read has none). */
export function lastRestorePoint(dataDir: string, clusterKey: string): RestorePoint | undefined {
  try {
    const j: WithRestorePoint | undefined = readJournal(journalPath(dataDir, clusterKey));
    return j?.restorePoint;
  } catch {
    return undefined;
  }
}
