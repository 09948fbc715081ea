import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Journal } from '../journal/journal.js';
import { readJournal } from '../journal/read.js';
import { readLadder } from '../ladder/record.js';
import { hopName } from '../ladder/plan.js';
import type { BackupsDoc, LadderDoc, UpgradeReportDoc } from './report.js';
import { addTally } from './backups.js';

/**
 * The report of a ladder run (`kv upgrade --to 3.6`): the journal a report is asked for is the hop in
 * flight (or the last hop); the ladder file beside it names every hop and keeps each finished hop's
 * journal. The page shows the ladder hop by hop: each finished hop's own report nested, and the
 * interruptions, restore points and backups of every hop gathered at the top.
 */
export function withLadder(doc: UpgradeReportDoc, j: Journal, journalFile: string, build: (j: Journal, file: string) => UpgradeReportDoc): UpgradeReportDoc {
  const key = basename(journalFile).replace(/\.json$/, '');
  const file = join(dirname(journalFile), `${key}.ladder`, 'ladder.json');
  if (!existsSync(file)) return doc;
  let lf;
  try {
    lf = readLadder(file);
  } catch {
    return doc;
  }
  // (A journal older than the ladder is a run before it, not one of its hops.)
  if (!lf || j.createdAt < lf.createdAt) return doc;
  const hops: LadderDoc['hops'] = lf.hops.map((h) => {
    const name = hopName(h);
    const kept = h.journal && existsSync(h.journal) ? safe(h.journal) : undefined;
    if (kept && kept.id !== j.id) {
      const report = build(kept, h.journal!);
      return { name, status: h.status, run: kept.id, journal: h.journal, startedAt: kept.createdAt, updatedAt: kept.updatedAt, report };
    }
    const isMain = kept?.id === j.id || (j.target === h.to && j.source === h.from && (h.status !== 'pending' || lf.current === lf.hops.indexOf(h)));
    return isMain ? { name, status: h.status, run: j.id, journal: journalFile, startedAt: j.createdAt, updatedAt: j.updatedAt } : { name, status: h.status };
  });
  const all = [...hops.map((h) => h.report).filter((r): r is UpgradeReportDoc => Boolean(r)), doc];
  const items = all.flatMap((r) => r.backups.items);
  const backups: BackupsDoc = {
    bytes: items.reduce((n, i) => n + i.bytes, 0),
    dirs: [...new Set(all.flatMap((r) => r.backups.dirs))],
    items,
    ...(all.some((r) => r.backups.remote)
      ? {
          remote: all
            .map((r) => r.backups.remote)
            .filter(Boolean)
            .join('; '),
        }
      : {}),
    ...(all.some((r) => r.backups.copies?.length) ? { copies: all.flatMap((r) => r.backups.copies ?? []) } : {}),
    made: all.map((r) => r.backups.made).reduce(addTally),
    held: all.map((r) => r.backups.held).reduce(addTally),
    keeps: doc.backups.keeps,
  };
  return {
    ...doc,
    ladder: { file, from: lf.from, to: lf.to, status: lf.status, hops },
    interruptions: all.flatMap((r) => r.interruptions.map((i) => ({ ...i, hop: r.hop }))),
    restorePoints: all.flatMap((r) => r.restorePoints),
    backups,
  };
}

function safe(file: string): Journal | undefined {
  try {
    return readJournal(file);
  } catch {
    return undefined;
  }
}
