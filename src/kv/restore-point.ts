import { journalPath, type Journal } from './journal.js';
import { readJournal } from './journal-read.js';
import { KvClient } from './client.js';
import { snapshotStatus } from './snapshot-status.js';

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
}

/** A journal with the restore point (journal.ts's shape plus this one optional field). */
export type WithRestorePoint = Journal & { restorePoint?: RestorePoint };

/**
 * Called after each verified snapshot of an upgrade: the first one (before any member was stopped)
 * becomes the journal's restore point, with its SHA-256 and key count read from the file. A resumed
 * run keeps the one it has. Returns a detail for the step line, or undefined when nothing changed.
 */
export async function recordRestorePoint(j: WithRestorePoint, snap: { member: string; file: string }, now: number): Promise<string | undefined> {
  if (j.restorePoint) return undefined;
  const s = await snapshotStatus(snap.file);
  j.restorePoint = {
    file: s.file,
    sha256: s.sha256,
    revision: s.revision,
    keys: s.totalKey,
    liveKeys: s.liveKeys,
    member: snap.member,
    takenAt: new Date(now).toISOString(),
  };
  return `restore point: revision ${s.revision}, ${s.liveKeys} keys`;
}

/** Live keys in the whole keyspace (a count-only range), optionally at a past revision. */
export async function countKeys(c: KvClient, revision?: string): Promise<number> {
  const all = Buffer.from([0]).toString('base64');
  const text = await c.gateway('/kv/range', { key: all, range_end: all, count_only: true, ...(revision ? { revision } : {}) });
  const body = JSON.parse(text) as { count?: string | number; kvs?: unknown[] };
  return Number(body.count ?? body.kvs?.length ?? 0);
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
