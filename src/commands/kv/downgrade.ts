import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { confirmDestructive, notDone } from '../../core/confirm.js';
import { UsageError } from '../../core/errors.js';
import { fmtMs } from '../../kv/upgrade/options.js';
import { capabilitiesOf } from '../../kv/drivers/driver.js';
import { downMemberWords } from './lib/last-words.js';
import { duration, requireBackupTemplate, resolveCluster, shellLine } from './lib/shared.js';
import { parseTargetBins, rollingPolicy, rollingPorts } from './lib/rolling-options.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './downgrade.spec.js';

export type Options = OptionsOf<typeof spec>;

/**
 * `kv downgrade --to 3.5`: a 3.6 cluster back to 3.5 (or a 3.7 one to 3.6) with etcd's downgrade API
 * (validate, enable, then member by member on the older binaries, the leader last, the end confirmed). Refused with nothing
 * changed (exit 1); halted (exit 3) with the way back; Ctrl-C at a safe point (130); a re-run resumes.
 */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  if (!/^\d+\.\d+$/.test(opts.to)) throw new UsageError(`--to: "${opts.to}" is not a minor version`, { field: '--to', hint: 'write it as 3.5' });
  const policy = rollingPolicy(opts, 'its newer binary');
  const bins = parseTargetBins(opts.targetBin);
  const other = Object.keys(bins).filter((k) => k !== '*' && k !== opts.to);
  if (other.length)
    throw new UsageError(`--target-bin ${other[0]}=…: the downgrade goes to ${opts.to} only`, { field: '--target-bin', hint: `--target-bin ${opts.to}=DIR` });
  const found = await resolveCluster(ctx, opts);
  const { cluster, driver, selector } = found;
  const can = capabilitiesOf(driver);
  if (Object.keys(bins).length && can.releases) {
    throw new UsageError(`--target-bin: the sandbox runs ${can.what} members`, { field: '--target-bin', hint: 'drop --target-bin' });
  }
  requireBackupTemplate(driver, { noBackup: policy.noBackup, example: '--backup-cmd, ' });
  const ports = await rollingPorts(ctx, found);
  ctx.handlesInterrupt = true;
  ctx.lastWords = downMemberWords(ctx, cluster.key, ports.rollbackCommand);
  const [{ runDowngrade }, { releaseDir }] = await Promise.all([import('../../kv/restore/downgrade.js'), import('../../kv/release/release.js')]);
  const targetBin = bins[opts.to] ?? bins['*'] ?? (can.releases ? undefined : releaseDir(opts.to, { data: ctx.paths.data }));
  const r = await runDowngrade({
    ...ports,
    ...policy,
    to: opts.to,
    targetBin,
    dryRun: Boolean(opts.dryRun),
    trialTimeoutS: duration(opts.trialTimeout, '--trial-timeout', 30_000) / 1000,
    confirm: async (c) => {
      const action = `downgrade the cluster to ${c.target}: enable etcd's downgrade, then stop and restart ${c.members} member${c.members === 1 ? '' : 's'} on ${c.target}, one at a time`;
      // (the plan text ends with its warnings: kv/restore/downgrade.ts)
      return (await confirmDestructive(ctx, { action, items: c.warnings, shown: c.planText })) === 'proceed';
    },
  });
  const run = r.run;
  if (r.status === 'planned') return { data: r, text: `${r.planText}\n(--dry-run: nothing was changed)` };
  if (r.status === 'declined') return { ...notDone('declined', { action: `downgrade the cluster to ${r.to}` }), data: r };
  if (r.status === 'nothing-to-do') return { data: r, message: r.planText };
  const lines = [
    ...r.enable.map((e) => `done     downgrade: ${e}`),
    ...run.steps.map((s) =>
      `${s.status.padEnd(8)} ${s.id.padEnd(34)} ${s.ms === undefined ? '' : fmtMs(s.ms).padStart(8)}  ${s.detail ?? s.error ?? ''}`.trimEnd(),
    ),
    ...(r.finished ? [`${r.status === 'done' ? 'done' : 'failed'}     downgrade: ${r.finished}`] : []),
  ];
  if (r.status === 'halted') {
    ctx.io.err(`${ctx.io.colorErr.red('X')} downgrade halted${run.halt ? ` at ${run.halt.step}: ${run.halt.reason}` : `: ${r.finished ?? ''}`}`);
    ctx.io.err(`  The cluster stays on cluster version ${r.to} with the downgrade enabled; members not yet downgraded still run ${r.from}.`);
    ctx.io.err(`  Put downgraded members back on ${r.from} with:  ${shellLine(['opsctl', 'kv', 'rollback', ...selector])}   (then: etcdctl downgrade cancel)`);
    ctx.io.err(`  Or fix the cause and resume with the same command (journal: ${run.journal ?? '?'}).`);
    return { data: r, text: lines.join('\n'), exitCode: 3 };
  }
  return { data: r, text: lines.join('\n'), message: `cluster downgraded to ${r.to}: every member healthy on ${r.binaryVersion ?? r.to}; ${r.finished ?? ''}` };
}
