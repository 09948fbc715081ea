import type { Context } from '../../../context.js';
import type { BackupFate, DataCopy, JournalStep } from '../../../kv/journal/journal.js';
import type { LadderReport } from '../../../kv/ladder/record.js';
import type { BackupsDoc } from '../../../kv/report/report.js';

/**
 * The backups an upgrade made (its snapshots, its data-dir copies), for the summary and --json: the
 * total size and the directories that hold them; the ones on the members' hosts are named, not measured.
 */
export async function backupsOfRuns(
  ctx: Context,
  cluster: string,
  ids: string[],
  steps: JournalStep[],
  fates: BackupFate[] = [],
  copies: DataCopy[] = [],
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
  );
  const kinds = new Map<string, number>();
  for (const i of doc.items) kinds.set(i.kind, (kinds.get(i.kind) ?? 0) + 1);
  const words: Record<string, [string, string]> = {
    snapshot: ['snapshot', 'snapshots'],
    'data-dir': ['data-dir copy', 'data-dir copies'],
    'failed-data-dir': ['failed data dir kept', 'failed data dirs kept'],
    'before-restore': ['data dir kept before a restore', 'data dirs kept before a restore'],
  };
  const what = [...kinds]
    .sort(([a], [b]) => (a === 'snapshot' ? -1 : b === 'snapshot' ? 1 : a.localeCompare(b)))
    .map(([k, n]) => `${n} ${(words[k] ?? [k, k])[n === 1 ? 0 : 1]}`)
    .join(', ');
  // (the copies on the members' hosts are counted too, by number: their size is not measured from here)
  const remote = Number(/^(\d+) data-dir backup/.exec(doc.remote ?? '')?.[1] ?? 0);
  const there = remote ? `${remote} data-dir cop${remote === 1 ? 'y' : 'ies'} on the members' hosts (not measured from here)` : '';
  const line = doc.items.length
    ? `backups made: ${humanBytes(doc.bytes)} (${what}) in ${doc.dirs.join(', ')}${there ? `, and ${there}` : ''}; see them with opsctl kv backups list, remove old ones with opsctl kv backups prune --keep N`
    : there
      ? `backups made: ${there}; see them with opsctl kv backups list`
      : 'backups made: none on this machine';
  return { doc, line: [line, describeFates(fates), doc.remote].filter(Boolean).join('\n') };
}

/** The run ids of a ladder's hops: the ones this run ran, and the hops done before it (their kept journals). */
export async function ladderRunIds(r: LadderReport): Promise<{ ids: string[]; steps: JournalStep[]; fates: BackupFate[]; copies: DataCopy[] }> {
  const { readJournal } = await import('../../../kv/journal/read.js');
  const ids: string[] = [];
  const steps: JournalStep[] = [];
  const fates: BackupFate[] = [];
  const copies: DataCopy[] = [];
  for (const h of r.hops) {
    if (h.report?.run) {
      ids.push(h.report.run);
      steps.push(...h.report.steps);
      fates.push(...(h.report.copies ?? []));
      copies.push(...(h.report.dataCopies ?? []));
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
      }
    } catch {
      // (a kept journal that cannot be read: its backups are not counted here; kv backups list shows them)
    }
  }
  return { ids, steps, fates, copies };
}
