import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { findBackups, humanBytes } from '../../kv/local/backups.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './backups-list.spec.js';

export type BackupsListOptions = OptionsOf<typeof spec>;

/** `kv backups list`: every data-dir backup, snapshot and kept data dir opsctl made here, by run. */
export function run(_opts: BackupsListOptions, ctx: Context): Promise<CommandResult> {
  const runs = findBackups(ctx.paths.data);
  const rows = runs.flatMap((r) =>
    r.items.map((i) => ({
      cluster: r.cluster,
      run: r.run,
      runKind: r.kind,
      kind: i.kind,
      member: i.member,
      bytes: i.bytes,
      size: humanBytes(i.bytes),
      date: i.date,
      path: i.path,
      journal: r.journal?.file ?? null,
      journalStatus: r.journal?.status ?? null,
      neededBy: r.neededBy ?? null,
    })),
  );
  const total = runs.reduce((n, r) => n + r.bytes, 0);
  return Promise.resolve({
    data: rows,
    columns: [
      { key: 'run' },
      { key: 'kind' },
      { key: 'member' },
      { key: 'size' },
      { key: 'date' },
      { key: 'journalStatus', header: 'journal' },
      { key: 'path' },
    ],
    message: runs.length
      ? `${runs.length} run(s), ${rows.length} backup(s), ${humanBytes(total)} (${total} bytes) under ${ctx.paths.data}; opsctl kv backups prune --keep N removes older runs`
      : `no backups under ${ctx.paths.data}`,
  });
}
