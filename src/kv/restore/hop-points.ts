/**
 * The restore point of each hop: the verified snapshot every hop's executor takes before its first
 * stop, kept in the hop's journal (copied beside the ladder file when the hop is done; the hop in
 * flight, or a one-hop upgrade, in the cluster's journal). `kv restore --from-hop 3.3` rebuilds the
 * cluster on 3.3 from the point taken while it still ran 3.3 (before the hop 3.3 → 3.4).
 */
import { existsSync } from 'node:fs';
import { OpsError } from '../../core/errors.js';
import { journalPath, type Journal } from '../journal/journal.js';
import { readJournal } from '../journal/read.js';
import { ladderPath, readLadder } from '../ladder/record.js';
import { restorePointOf } from '../upgrade/restore-point.js';

export interface HopPoint {
  /** The minor the cluster ran when the point was taken (the hop's source), which the restore starts on. */
  version: string;
  hop: string;
  /** The journal that records it (its `previous` binaries are the source release's). */
  journalFile: string;
  file: string;
  revision: string;
  keys?: number;
}

/** Every restore point recorded for the cluster, oldest hop first (one per hop; the in-flight hop's too). */
export function hopPoints(dataDir: string, clusterKey: string): HopPoint[] {
  const out: HopPoint[] = [];
  const seen = new Set<string>();
  const add = (journalFile: string, j: Journal | undefined) => {
    const rp = restorePointOf(j);
    if (!j || !rp || seen.has(rp.file)) return;
    seen.add(rp.file);
    out.push({
      version: j.source,
      hop: j.source === j.target ? `${j.source} → ${j.target} (patch)` : `${j.source} → ${j.target}`,
      journalFile,
      file: rp.file,
      revision: rp.revision,
      keys: rp.keys,
    });
  };
  const ladder = readLadder(ladderPath(dataDir, clusterKey));
  for (const h of ladder?.hops ?? []) if (h.journal && existsSync(h.journal)) add(h.journal, readJournal(h.journal));
  const current = journalPath(dataDir, clusterKey);
  if (existsSync(current)) add(current, readJournal(current));
  return out;
}

/**
 * The restore point of the hop that started from `version` (a minor): the one a rolling upgrade off
 * that minor took; among a patch hop and the minor's hop, the later (closer to the upgrade off it).
 * Refused, naming the points there are, when none was recorded.
 */
export function hopPoint(dataDir: string, clusterKey: string, version: string): HopPoint {
  const all = hopPoints(dataDir, clusterKey);
  const hit = all.filter((p) => p.version === version).at(-1);
  if (hit) {
    if (!existsSync(hit.file)) {
      throw new OpsError(`--from-hop ${version}: the restore point of the hop ${hit.hop} (${hit.file}) is gone`, 1, {
        code: 'restore_point_missing',
        field: '--from-hop',
        hint: 'was it pruned (kv backups prune)? restore another snapshot with --snapshot FILE; nothing was changed',
      });
    }
    return hit;
  }
  const known = all.map((p) => `${p.version} (hop ${p.hop}, revision ${p.revision})`);
  throw new OpsError(`--from-hop ${version}: no restore point of a hop from ${version} is recorded for this cluster`, 2, {
    code: 'usage',
    field: '--from-hop',
    hint: known.length
      ? `the recorded restore points: ${known.join(', ')}; nothing was changed`
      : 'no upgrade of this cluster recorded a restore point (kv upgrade takes one before each hop); restore a snapshot with --snapshot FILE',
  });
}
