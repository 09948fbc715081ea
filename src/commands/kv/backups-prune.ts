import type { Context } from '../../context.js';
import { notDone, confirmDestructive } from '../../core/confirm.js';
import { OpsError, UsageError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { BackupsLockedError, findBackups, humanBytes, planPrune, removeRuns, type BackupItem, type BackupRun } from '../../kv/backups/backups.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './backups-prune.spec.js';
import { readOffsite, s3Settings } from './lib/offsite.js';
import type { S3Settings } from '../../kv/offsite/target.js';
import type { OffsiteLeftover } from '../../kv/offsite/store.js';
import { durationFlag } from '../../core/duration.js';
import { keptLine, keptPrune } from './lib/prune-containers.js';

export type Options = OptionsOf<typeof spec>;

const describe = (r: BackupRun) =>
  `${r.cluster}/${r.run} (${r.kind}, ${r.items.length} item(s), ${humanBytes(r.bytes)}): ${r.items.map((i) => `${i.kind} ${i.member}`).join(', ')}`;

/** `kv backups prune`: keeps each cluster's N newest runs of backups; never those a journal in progress needs. */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
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
  const onHosts = plan.remove.flatMap((r) => r.items.filter((i) => i.kind === 'host-copy'));
  // the copies on the members' hosts go through the cluster file's driver (its drop-backup template), or nothing goes
  const hosts = onHosts.length && !opts.dryRun ? await hostDrop(ctx, opts.cluster, onHosts, plan.remove) : undefined;
  // a container driver's kept containers: those of the runs removed go with them (kv/containers/prune.ts)
  const kept = opts.cluster ? await keptPrune(ctx, opts.cluster, plan) : undefined;
  const goes = kept?.verdict.remove ?? [];
  const bytes = plan.remove.reduce((n, r) => n + r.bytes, 0);
  if (!plan.remove.length && !goes.length) {
    return {
      data: { removed: [], bytes: 0, kept: plan.keep.map((r) => r.run) },
      message: `nothing to prune: ${plan.keep.length} run(s) kept (--keep ${keep})`,
    };
  }
  const unknown = onHosts.filter((i) => i.measured === false).length;
  const what = {
    action: `remove the backups of ${plan.remove.length} run(s), ${humanBytes(bytes)}${unknown ? ` and ${unknown} data-dir cop${unknown === 1 ? 'y' : 'ies'} on the hosts whose size is not known` : ''}${goes.length ? `, and ${goes.length} kept container(s)` : ''}`,
    items: [
      ...plan.remove.map(describe),
      ...goes.map(keptLine),
      ...(opts.dryRun && onHosts.length && !opts.cluster
        ? [
            `(with --cluster FILE, the cluster file the upgrade ran with, its driver removes the data-dir copies on the members' hosts: ${needsCluster(onHosts)}; a container driver, the containers the pruned runs kept too (CONTAINER.opsctl-kept-…); without it, nothing on the hosts is removed)`,
          ]
        : []),
    ],
    dryRun: opts.dryRun,
  };
  const decision = await confirmDestructive(ctx, what);
  if (decision !== 'proceed') return notDone(decision, what);
  let freed: number;
  const outcomes: Array<{ member: string; host: string; run: string; removed: boolean; detail: string }> = [];
  try {
    freed = await removeRuns(
      ctx.paths.data,
      plan.remove,
      (text) => ctx.io.info(`${ctx.io.colorErr.yellow('!')} ${text}`),
      hosts && {
        drop: hosts,
        said: (i, o) => outcomes.push({ member: i.member, host: i.host ?? '', run: i.copyRun ?? '', ...o }),
      },
    );
  } catch (err) {
    if (err instanceof BackupsLockedError)
      throw new OpsError(`not pruning: ${err.message}`, 1, { code: 'locked', hint: 'wait for it to finish, then prune again' });
    throw err;
  }
  const containers = kept ? await kept.remove((text) => ctx.io.info(`${ctx.io.colorErr.yellow('!')} ${text}`)) : [];
  const stay = kept?.verdict.stay ?? [];
  return {
    data: {
      removed: plan.remove.map((r) => ({ cluster: r.cluster, run: r.run, bytes: r.bytes, paths: r.items.map((i) => i.path) })),
      bytes: freed,
      kept: plan.keep.map((r) => r.run),
      ...(outcomes.length ? { onHosts: outcomes } : {}),
      ...(kept ? { containers: { removed: containers, stay: stay.map((k) => ({ member: k.member, name: k.name, why: k.why })) } } : {}),
    },
    message: [
      `pruned ${plan.remove.length} run(s): ${humanBytes(freed)} (${freed} bytes) freed${outcomes.length ? ` (${outcomes.filter((o) => o.removed).length} of ${outcomes.length} data-dir copies on the members' hosts removed there)` : ''}${kept ? `, ${containers.filter((c) => c.removed).length} kept container(s) removed` : ''}; ${plan.keep.length} run(s) kept${stay.length ? `, and ${stay.length} kept container(s) (kv upgrade's way back)` : ''}`,
      ...containers.map((c) =>
        c.removed ? `${c.member}: kept container ${c.name} removed: ${c.detail}` : `! ${c.member}: kept container ${c.name} was NOT removed: ${c.detail}`,
      ),
      ...outcomes.map((o) =>
        o.removed
          ? `${o.member}: the data-dir copy {run} ${o.run} removed on ${o.host}: ${o.detail}`
          : `! ${o.member}: the data-dir copy {run} ${o.run} on ${o.host} was NOT removed: ${o.detail}; it stays listed (kv backups list): fix the cause and prune again`,
      ),
    ].join('\n'),
    ...(outcomes.some((o) => !o.removed) || containers.some((c) => !c.removed) ? { exitCode: 3 } : {}),
  };
}

/** The host copies, by member, host and {run}: for the message that asks for the cluster file. */
function needsCluster(items: BackupItem[]): string {
  return items.map((i) => `${i.member} on ${i.host ?? 'its host'} ({run} ${i.copyRun ?? '?'})`).join(', ');
}

/**
 * The cluster file's driver, checked before anything is removed: the file given, of the cluster whose copies
 * go, with a drop-backup template and every member the copies name. Returns how one copy is removed.
 */
async function hostDrop(ctx: Context, file: string | undefined, items: BackupItem[], runs: BackupRun[]): Promise<(i: BackupItem) => Promise<string>> {
  const n = items.length;
  const copies = `${n} data-dir cop${n === 1 ? 'y' : 'ies'} on the members' hosts (${needsCluster(items)})`;
  if (!file)
    throw new UsageError(
      `not pruning: ${copies} belong to the runs to remove, and only their cluster's driver can remove them there: the drop-backup template of the cluster file is needed, and --cluster was not given`,
      {
        field: '--cluster',
        hint: 'pass --cluster FILE (the cluster file the upgrade ran with; its driver.dropBackup removes each copy, e.g. `dropBackup: ssh {host} sudo rm -rf /var/lib/etcd.bak-{run}`), or keep those runs (--keep); nothing was removed',
      },
    );
  const [{ findCluster }, { fileDriver }, { clusterKey }] = await Promise.all([
    import('./lib/target.js'),
    import('./lib/file-driver.js'),
    import('../../kv/journal/journal.js'),
  ]);
  const found = await findCluster(ctx, { cluster: file });
  if (found.source !== 'file') throw new UsageError('--cluster: not a cluster file', { field: '--cluster' });
  const { parsed, path } = found;
  const key = clusterKey(parsed.members.map((m) => m.endpoint));
  const theirs = [...new Set(runs.filter((r) => r.items.some((i) => i.kind === 'host-copy')).map((r) => r.cluster))];
  if (theirs.some((c) => c !== key))
    throw new UsageError(`not pruning: ${path} is cluster ${key}; the data-dir copies on the hosts are of cluster ${theirs.join(', ')}`, {
      field: '--cluster',
      hint: 'give the cluster file of those runs (the one the upgrade ran with: the same endpoints); nothing was removed',
    });
  const missing = items.filter((i) => !parsed.members.some((m) => m.name === i.member));
  if (missing.length)
    throw new UsageError(`not pruning: ${path} has no member ${[...new Set(missing.map((i) => i.member))].join(', ')}, whose data-dir copies are to go`, {
      field: '--cluster',
      hint: 'give the cluster file the upgrade ran with; nothing was removed',
    });
  const memberOf = (i: BackupItem) => parsed.members.find((m) => m.name === i.member)!;
  // (a container driver's copies: a volume of their own, or a directory beside a bind's data: kv/containers/backup.ts)
  const driver = await fileDriver(ctx, parsed.driver);
  if (!driver?.dropBackup)
    throw new UsageError(`not pruning: the driver of ${path} has no drop-backup template, so ${copies} cannot be removed there`, {
      field: '--cluster',
      hint: 'add driver.dropBackup to the cluster file: the command that removes the copy its backup template made for {run} (for `backup: ssh {host} sudo cp -a /var/lib/etcd /var/lib/etcd.bak-{run}`, `dropBackup: ssh {host} sudo rm -rf /var/lib/etcd.bak-{run}`; the systemd preset with dataDir has both); nothing was removed',
    });
  driver.checkMembers?.(parsed.members, `--cluster ${path}`);
  return (i) => driver.dropBackup!(memberOf(i), '', i.copyRun ?? '');
}

/** Off-host: the N newest backups under the prefix kept, the rest removed (each manifest first: never a listed backup without its snapshot). */
async function pruneOffsite(from: string, settings: S3Settings, keep: number, opts: Options, ctx: Context): Promise<CommandResult> {
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
