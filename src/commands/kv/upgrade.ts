import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { UsageError } from '../../core/errors.js';
import { fmtMs, runUpgrade, type UpgradeReport } from '../../kv/executor.js';
import { duration, reporter, resolveCluster, shellLine, timeouts, type ClusterFlags, type TimeoutFlags } from './shared.js';

/** The minors kv upgrade knows: targets 3.3 (from 3.2) and 3.4 (from 3.3); any of them for --allow-same-version. */
export const KNOWN_MINORS = ['3.2', '3.3', '3.4'];
/** What simulated sandbox members can run (kv sandbox up --kv-version). */
export const SIMULATED_MINORS = ['3.2', '3.3'];
const TARGETS_HELP = '3.3 (from 3.2), 3.4 (from 3.3); with --allow-same-version a rolling restart on 3.2, 3.3 or 3.4';

export interface UpgradeOptions extends ClusterFlags, TimeoutFlags {
  to: string;
  dryRun?: boolean;
  settle: string;
  allowSameVersion?: boolean;
  targetBin?: string;
  snapshotVia: string;
  etcdctl?: string;
}

/**
 * `kv upgrade --to 3.3`: pre-flight (refuse with exit 1), the plan (--dry-run stops), then one
 * member at a time with a journal; halts at the first failure with exit 3 and the roll-back command;
 * Ctrl-C stops at a safe point with exit 130; a re-run resumes.
 */
export async function run(opts: UpgradeOptions, ctx: Context): Promise<CommandResult> {
  if (!/^\d+\.\d+$/.test(opts.to)) throw new UsageError(`--to: "${opts.to}" is not a minor version`, { field: '--to', hint: `write it as 3.3 (supported targets: ${TARGETS_HELP})` });
  if (!KNOWN_MINORS.includes(opts.to)) {
    throw new UsageError(`--to: ${opts.to} is not a supported target`, { field: '--to', hint: `supported targets: ${TARGETS_HELP}` });
  }
  if (!['auto', 'etcdctl', 'gateway'].includes(opts.snapshotVia)) throw new UsageError(`--snapshot-via: "${opts.snapshotVia}" is not one of auto, etcdctl, gateway`, { field: '--snapshot-via' });
  const settle = opts.settle === 'auto' ? 'auto' : duration(opts.settle, '--settle', 0);
  const t = timeouts(opts);
  const { cluster, driver, selector, session } = await resolveCluster(ctx, opts);
  if (cluster.sandbox?.kind === 'sim' && !SIMULATED_MINORS.includes(opts.to)) {
    // refused before any change: a simulated member cannot be started on that version
    throw new UsageError(`--to ${opts.to}: the sandbox runs simulated members, which run ${SIMULATED_MINORS.join(' or ')} only: it cannot start ${opts.to} members`, {
      field: '--to',
      hint: `upgrade the sandbox to ${SIMULATED_MINORS.at(-1)}, or start a sandbox of real etcd binaries (opsctl kv sandbox up --etcd-bin DIR); nothing was changed`,
    });
  }
  if (opts.targetBin && cluster.sandbox && cluster.sandbox.kind !== 'etcd') {
    throw new UsageError('--target-bin: the sandbox runs simulated members', { field: '--target-bin', hint: 'drop --target-bin (simulated members switch version themselves), or start the sandbox with --etcd-bin DIR' });
  }
  ctx.handlesInterrupt = true;
  const rollbackCommand = shellLine(['opsctl', 'kv', 'rollback', ...selector]);
  const report = await runUpgrade({
    cluster,
    session,
    driver,
    dataDir: ctx.paths.data,
    to: opts.to,
    allowSameVersion: Boolean(opts.allowSameVersion),
    targetBin: opts.targetBin,
    settle,
    dryRun: Boolean(opts.dryRun),
    timeouts: t,
    snapshotVia: opts.snapshotVia as 'auto',
    etcdctl: opts.etcdctl,
    exec: await ctx.exec(),
    signal: ctx.abort.signal,
    now: ctx.now,
    reporter: reporter(ctx),
    rollbackCommand,
    debug: ctx.debugSink,
  });
  return render(report, ctx);
}

function render(r: UpgradeReport, ctx: Context): CommandResult {
  if (r.status === 'planned') return { data: r, text: `${r.planText}\n(--dry-run: nothing was changed)` };
  if (r.status === 'nothing-to-do') return { data: r, text: '', message: `every member and the cluster already run ${r.target}: nothing to do` };
  const lines = r.steps.map((s) => `${s.status.padEnd(8)} ${s.id.padEnd(34)} ${s.ms === undefined ? '' : fmtMs(s.ms).padStart(8)}  ${s.detail ?? s.error ?? ''}`.trimEnd());
  const summary = `total ${fmtMs(r.totals.ms)}, of which the cluster's own waits ${fmtMs(r.totals.imposedMs)}`;
  if (r.status === 'halted') {
    ctx.io.err(`${ctx.io.colorErr.red('X')} upgrade halted at ${r.halt!.step}: ${r.halt!.reason}`);
    ctx.io.err('  The other members were not touched; the cluster may be mixed and can still go back.');
    ctx.io.err(`  Roll back with:  ${r.halt!.rollback}`);
    ctx.io.err(`  Or fix the cause and resume with the same command (journal: ${r.journal}).`);
    return { data: r, text: lines.join('\n'), exitCode: 3 };
  }
  return { data: r, text: `${lines.join('\n')}\n${summary}`, message: `cluster upgraded to ${r.target}: every member healthy` };
}
