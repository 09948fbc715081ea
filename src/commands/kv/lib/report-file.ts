import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Context } from '../../../context.js';
import { OpsError, UsageError } from '../../../core/errors.js';
import { readJournal } from '../../../kv/journal/read.js';
import { buildReport, type UpgradeReportDoc } from '../../../kv/report/report.js';

/** --report FILE: the absolute path, checked before anything runs (its directory must exist; never created). */
export function reportPath(ctx: Context, file: string): string {
  const path = resolve(ctx.cwd, file);
  const dir = dirname(path);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new UsageError(`--report: the directory ${dir} does not exist`, {
      field: '--report',
      hint: 'create it first, or give a path in an existing directory (e.g. --report upgrade.html)',
    });
  }
  if (existsSync(path) && statSync(path).isDirectory())
    throw new UsageError(`--report: ${path} is a directory`, { field: '--report', hint: 'give a file name, e.g. upgrade.html' });
  return path;
}

/** Builds the report from the journal on disk (after the fact) and writes the page atomically. */
export async function writeReport(path: string, journalFile: string): Promise<UpgradeReportDoc> {
  let j: ReturnType<typeof readJournal>;
  try {
    j = readJournal(journalFile);
  } catch (err) {
    if (err instanceof OpsError) throw err;
    throw new OpsError(`the upgrade journal ${journalFile} cannot be read: ${(err as Error).message}`, 1, {
      code: 'journal_unreadable',
      hint: 'the report is built from the journal: check the file (it is JSON), or run the upgrade again',
    });
  }
  if (!j)
    throw new OpsError(`no kv upgrade is recorded for this cluster (no journal at ${journalFile})`, 1, {
      code: 'no_journal',
      hint: 'run opsctl kv upgrade first (the report is built from its journal); check --cluster/--endpoints name the upgraded cluster',
    });
  const [{ reportHtml }, { default: writeFileAtomic }, { findBackups }, { withLadder }] = await Promise.all([
    import('../../../kv/report/html.js'),
    import('write-file-atomic'),
    import('../../../kv/backups/backups.js'),
    import('../../../kv/report/ladder.js'),
  ]);
  // DATA/kv/journals/KEY.json: the backups are under DATA/kv/{backups,snapshots}/KEY
  const dataDir = dirname(dirname(dirname(journalFile)));
  const runs = findBackups(dataDir);
  const src = { backups: (cluster: string) => runs.filter((r) => r.cluster === cluster) };
  const doc = withLadder(buildReport(j, journalFile, src), j, journalFile, (hj, file) => buildReport(hj, file, src));
  await writeFileAtomic(path, reportHtml(doc), { mode: 0o644 });
  return doc;
}
