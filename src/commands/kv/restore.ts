import { resolve } from 'node:path';
import type { Context } from '../../context.js';
import { confirmDestructive, notDone } from '../../core/confirm.js';
import type { CommandResult } from '../../core/output.js';
import { UsageError } from '../../core/errors.js';
import { fmtMs } from '../../kv/executor.js';
import { describeRestore, planRestore, runRestore } from '../../kv/restore.js';
import { reporter, resolveCluster, timeouts, type ClusterFlags, type TimeoutFlags } from './shared.js';
import { KNOWN_MINORS, SIMULATED_MINORS } from './upgrade.js';

export interface RestoreOptions extends ClusterFlags, TimeoutFlags {
  snapshot: string;
  toVersion?: string;
  targetBin?: string;
  dryRun?: boolean;
}

/**
 * `kv restore --snapshot FILE`: every member rebuilt from a verified snapshot (old data dirs kept),
 * started on --to-version, healthy, and checked against the snapshot. Everything that can be checked
 * is checked before a member is stopped; it warns that later writes are lost and asks (or --yes).
 */
export async function run(opts: RestoreOptions, ctx: Context): Promise<CommandResult> {
  if (opts.toVersion !== undefined && (!/^\d+\.\d+$/.test(opts.toVersion) || !KNOWN_MINORS.includes(opts.toVersion))) {
    throw new UsageError(`--to-version: "${opts.toVersion}" is not a supported minor version`, {
      field: '--to-version',
      hint: `one of ${KNOWN_MINORS.join(', ')}, e.g. --to-version 3.2`,
    });
  }
  const { cluster, driver, session } = await resolveCluster(ctx, opts);
  if (cluster.sandbox?.kind === 'sim') {
    if (opts.targetBin)
      throw new UsageError('--target-bin: the sandbox runs simulated members', { field: '--target-bin', hint: 'use --to-version 3.2 or 3.3' });
    if (opts.toVersion && !SIMULATED_MINORS.includes(opts.toVersion))
      throw new UsageError(`--to-version ${opts.toVersion}: simulated members run ${SIMULATED_MINORS.join(' or ')} only`, { field: '--to-version' });
  }
  const o = {
    cluster,
    session,
    driver,
    dataDir: ctx.paths.data,
    snapshot: resolve(ctx.cwd, opts.snapshot),
    toVersion: opts.toVersion,
    targetBin: opts.targetBin ? resolve(ctx.cwd, opts.targetBin) : undefined,
    timeouts: timeouts(opts),
    now: ctx.now,
    reporter: reporter(ctx),
    signal: ctx.abort.signal,
  };
  const plan = await planRestore(o);
  const text = describeRestore(plan);
  if (opts.dryRun) return { data: { status: 'planned', ...plan }, text: `${text}\n(--dry-run: nothing was changed)` };
  ctx.io.err(text);
  const what = {
    action: `rebuild the cluster from ${plan.snapshot.file} on ${plan.version}: every member is stopped and every write after revision ${plan.snapshot.revision} is lost`,
  };
  const decision = await confirmDestructive(ctx, what);
  if (decision !== 'proceed') return notDone(decision, what);
  ctx.handlesInterrupt = true; // a restore is not stopped half-way by Ctrl-C: every member is down in it
  const r = await runRestore(o, plan);
  return {
    data: r,
    text: r.members.map((m) => `${m.name}: ${m.detail}`).join('\n'),
    message: `cluster restored from ${r.snapshot}: ${r.members.length} members healthy on ${r.version} after ${fmtMs(r.healthyMs)}, revision ${r.revision}, ${r.keys} keys (total ${fmtMs(r.totalMs)})`,
  };
}
