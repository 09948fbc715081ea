import type { Context } from '../../../context.js';
import type { BackupFate, DataCopy, Journal, JournalStep } from '../../../kv/journal/journal.js';
import type { LadderReport } from '../../../kv/ladder/record.js';
import type { BackupsDoc } from '../../../kv/report/report.js';
import type { BackupTally } from '../../../kv/report/backups.js';

/** The runs of an upgrade (a hop's, or a ladder's hops'): their ids, steps, backup fates, data-dir copies and snapshots. */
export interface UpgradeRuns {
  ids: string[];
  steps: JournalStep[];
  fates?: BackupFate[];
  copies?: DataCopy[];
  snaps?: Journal['snapshots'];
}

/**
 * The backups an upgrade made (its snapshots, its data-dir copies here and on the members' hosts), for the
 * summary and --json: what they made and what they hold on disk now, and what the default keeps.
 */
export async function backupsOfRuns(
  ctx: Context,
  cluster: string,
  { ids, steps, fates = [], copies = [], snaps = [] }: UpgradeRuns,
): Promise<{ doc: BackupsDoc; line: string }> {
  const [{ findBackups, humanBytes }, { backupsMade, describeFates }] = await Promise.all([
    import('../../../kv/backups/backups.js'),
    import('../../../kv/report/report.js'),
  ]);
  const doc = backupsMade(
    findBackups(ctx.paths.data).filter((r) => r.cluster === cluster),
    ids,
    steps,
    fates,
    copies,
    snaps,
  );
  const n = (k: number, one: string, many: string) => `${k} ${k === 1 ? one : many}`;
  const unknown = (t: BackupTally) => (t.unknown ? `; ${n(t.unknown, 'size', 'sizes')} not known (see opsctl kv backups list)` : '');
  const what = (t: BackupTally) =>
    [
      t.snapshots ? n(t.snapshots, 'snapshot', 'snapshots') : '',
      t.copies - t.onHosts ? `${n(t.copies - t.onHosts, 'data-dir copy', 'data-dir copies')} here` : '',
      t.onHosts ? `${n(t.onHosts, 'data-dir copy', 'data-dir copies')} on the members' hosts` : '',
    ]
      .filter(Boolean)
      .join(', ');
  const { made, held } = doc;
  const madeLine =
    made.snapshots || made.copies
      ? `backups made: ${humanBytes(made.bytes)} (${what(made)}${unknown(made)})${doc.dirs.length ? ` in ${doc.dirs.join(', ')}` : ''}; see them with opsctl kv backups list`
      : 'backups made: none';
  const heldLine =
    held.snapshots || held.copies
      ? `backups held: ${humanBytes(held.bytes)} (${held.bytes} bytes) on disk in ${what(held)}${unknown(held)}; by default ${doc.keeps}`
      : `backups held: none; by default ${doc.keeps}`;
  return { doc, line: [madeLine, heldLine, describeFates(fates), doc.remote].filter(Boolean).join('\n') };
}

/** The run ids of a ladder's hops: the ones this run ran, and the hops done before it (their kept journals). */
export async function ladderRunIds(r: LadderReport): Promise<Required<UpgradeRuns>> {
  const { readJournal } = await import('../../../kv/journal/read.js');
  const ids: string[] = [];
  const steps: JournalStep[] = [];
  const fates: BackupFate[] = [];
  const copies: DataCopy[] = [];
  const snaps: Journal['snapshots'] = [];
  for (const h of r.hops) {
    if (h.report?.run) {
      ids.push(h.report.run);
      steps.push(...h.report.steps);
      fates.push(...(h.report.copies ?? []));
      copies.push(...(h.report.dataCopies ?? []));
      snaps.push(...h.report.snapshots);
      continue;
    }
    if (!h.journal) continue;
    try {
      const j = readJournal(h.journal);
      if (j) {
        ids.push(j.id);
        steps.push(...j.steps);
        fates.push(...(j.copies ?? []));
        copies.push(...(j.dataCopies ?? []));
        snaps.push(...j.snapshots);
      }
    } catch {
      // (a kept journal that cannot be read: its backups are not counted here; kv backups list shows them)
    }
  }
  return { ids, steps, fates, copies, snaps };
}
