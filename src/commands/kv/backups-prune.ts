import type { Context } from '../../context.js';
import { notDone, confirmDestructive } from '../../core/confirm.js';
import { OpsError, UsageError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { BackupsLockedError, findBackups, humanBytes, planPrune, removeRuns, type BackupRun } from '../../kv/backups/backups.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './backups-prune.spec.js';
import { readOffsite, s3Settings } from './lib/offsite.js';
import type { S3Settings } from '../../kv/offsite/target.js';
import type { OffsiteLeftover } from '../../kv/offsite/store.js';
import { durationFlag } from '../../core/duration.js';

export type BackupsPruneOptions = OptionsOf<typeof spec>;

const describe = (r: BackupRun) =>
  `${r.cluster}/${r.run} (${r.kind}, ${r.items.length} item(s), ${humanBytes(r.bytes)}): ${r.items.map((i) => `${i.kind} ${i.member}`).join(', ')}`;

/** `kv backups prune`: keeps each cluster's N newest runs of backups; never those a journal in progress needs. */
export async function run(opts: BackupsPruneOptions, ctx: Context): Promise<CommandResult> {
  const keepText = opts.keep ?? '1';
  if (!/^\d+$/.test(keepText))
    throw new UsageError(`--keep: ${JSON.stringify(keepText)} is not a whole number of runs`, {
      field: 'keep',
      hint: 'e.g. --keep 1 (the default: the newest run of each cluster)',
    });
  const keep = Number(keepText);
  if (opts.staleAfter !== undefined && !opts.from)
    throw new UsageError('--stale-after applies to a bucket (--from s3://BUCKET/PREFIX)', {
      field: '--stale-after',
      hint: 'local backups have no interrupted uploads: drop --stale-after, or add --from',
    });
  if (opts.from) return pruneOffsite(opts.from, s3Settings(opts), keep, opts, ctx);
  const plan = planPrune(findBackups(ctx.paths.data), keep);
  if (plan.blocked.length) {
    throw new OpsError(`not pruning: ${plan.blocked.map((r) => `${r.cluster}/${r.run} is needed by ${r.neededBy}`).join('; ')}`, 1, {
      code: 'backups_needed',
      hint: 'finish that upgrade first (run kv upgrade again to resume it, or kv rollback), or keep more runs (--keep); nothing was removed',
    });
  }
  const bytes = plan.remove.reduce((n, r) => n + r.bytes, 0);
  if (!plan.remove.length) {
    return {
      data: { removed: [], bytes: 0, kept: plan.keep.map((r) => r.run) },
      message: `nothing to prune: ${plan.keep.length} run(s) kept (--keep ${keep})`,
    };
  }
  const what = { action: `remove the backups of ${plan.remove.length} run(s), ${humanBytes(bytes)}`, items: plan.remove.map(describe), dryRun: opts.dryRun };
  const decision = await confirmDestructive(ctx, what);
  if (decision !== 'proceed') return notDone(decision, what);
  let freed: number;
  try {
    freed = await removeRuns(ctx.paths.data, plan.remove, (text) => ctx.io.info(`${ctx.io.colorErr.yellow('!')} ${text}`));
  } catch (err) {
    if (err instanceof BackupsLockedError)
      throw new OpsError(`not pruning: ${err.message}`, 1, { code: 'locked', hint: 'wait for it to finish, then prune again' });
    throw err;
  }
  return {
    data: {
      removed: plan.remove.map((r) => ({ cluster: r.cluster, run: r.run, bytes: r.bytes, paths: r.items.map((i) => i.path) })),
      bytes: freed,
      kept: plan.keep.map((r) => r.run),
    },
    message: [
      `pruned ${plan.remove.length} run(s): ${humanBytes(freed)} (${freed} bytes) freed; ${plan.keep.length} run(s) kept`,
      ...onHosts(plan.remove),
    ].join('\n'),
  };
}

/**
 * The pruned runs' copies on the members' hosts (a backup template's, with no drop-backup template to remove
 * them): not this machine's to remove; each named with where it is and what removes it.
 */
function onHosts(runs: BackupRun[]): string[] {
  return runs.flatMap((r) =>
    r.items
      .filter((i) => i.kind === 'host-copy')
      .map((i) => {
        const run = /\{run\} (\S+)/.exec(i.path)?.[1] ?? r.run;
        return `! ${i.member}: the data-dir copy its backup template made ({run} ${run}) is on ${i.host ?? 'its host'}, not removed from here: remove it there (the backup template's destination for {run} ${run}); with a drop-backup template (driver.dropBackup or --drop-backup-cmd) each run removes its copies once its hop is done`;
      }),
  );
}

/** Off-host: the N newest backups under the prefix kept, the rest removed (each manifest first: never a listed backup without its snapshot). */
async function pruneOffsite(from: string, settings: S3Settings, keep: number, opts: BackupsPruneOptions, ctx: Context): Promise<CommandResult> {
  const staleMs = durationFlag('--stale-after', opts.staleAfter ?? '24h');
  const { store, target } = await readOffsite(from, '--from', settings);
  // what interrupted saves left (never listed as backups) too: an upload begun since may be one under way
  const { backups: all, leftovers } = await store.scan(target, new Date(Date.now() - staleMs));
  const remove = all.slice(keep);
  const url = (key: string) => `s3://${target.bucket}/${key}`;
  const leftoverBytes = leftovers.reduce((n, l) => n + (l.kind === 'object' ? l.bytes : 0), 0);
  if (!remove.length && !leftovers.length)
    return {
      data: { removed: [], leftovers: [], bytes: 0, kept: all.map((m) => url(m.key)) },
      message: `nothing to prune: ${all.length} backup(s) under ${from} (--keep ${keep})`,
    };
  const bytes = remove.reduce((n, m) => n + m.bytes, 0) + leftoverBytes;
  const described = (l: OffsiteLeftover) =>
    l.kind === 'upload'
      ? `${url(l.key)}: an upload begun ${l.since}, never completed (its parts are aborted)`
      : `${url(l.key)}: ${humanBytes(l.bytes)} without a manifest since ${l.since} (not a backup)`;
  const what = {
    action: `remove ${remove.length} backup(s)${leftovers.length ? ` and ${leftovers.length} leftover(s) of interrupted saves` : ''} under ${from}, ${humanBytes(bytes)}`,
    items: [...remove.map((m) => `${url(m.key)} (${m.createdAt}, ${humanBytes(m.bytes)})`), ...leftovers.map(described)],
    dryRun: opts.dryRun,
  };
  const decision = await confirmDestructive(ctx, what);
  if (decision !== 'proceed') return notDone(decision, what);
  for (const m of remove) await store.remove(target.bucket, m);
  for (const l of leftovers) await store.removeLeftover(target.bucket, l);
  return {
    data: {
      removed: remove.map((m) => ({ url: url(m.key), bytes: m.bytes })),
      leftovers: leftovers.map((l) => ({ url: url(l.key), kind: l.kind, since: l.since, ...(l.kind === 'object' ? { bytes: l.bytes } : {}) })),
      bytes,
      kept: all.slice(0, keep).map((m) => url(m.key)),
    },
    message: `pruned ${remove.length} backup(s)${leftovers.length ? ` and ${leftovers.length} leftover(s) of interrupted saves` : ''} under ${from}: ${humanBytes(bytes)} (${bytes} bytes); ${Math.min(keep, all.length)} kept`,
  };
}
