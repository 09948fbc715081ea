/**
 * `kv upgrade`'s result on the terminal and in --json: the plan or what ran (one hop, or a ladder hop by hop), the
 * backups line, the --report page, and inside the rehearsal's clone the load it saw.
 */
import type { Context } from '../../../context.js';
import type { CommandResult } from '../../../core/output.js';
import { notDone } from '../../../core/confirm.js';
import { fmtMs, type UpgradeReport } from '../../../kv/upgrade/options.js';
import type { ClusterSpec } from '../../../kv/cluster/cluster-file.js';
import type { MemberDriver } from '../../../kv/drivers/driver.js';
import type { LadderReport } from '../../../kv/ladder/record.js';
import type { LoadResult } from '../../../kv/rehearsal/load.js';
import type { CheckRow } from '../../../kv/rules/types.js';
import { warningLines } from '../../../kv/rules/summary.js';
import { journalPath } from '../../../kv/journal/journal.js';
import { changesExit } from '../../action.js';

/** What `renderUpgrade` shows besides the result: the flags it reads, the cluster and its driver, the --report file, the clone's load. */
interface Shown {
  ctx: Context;
  flags: { to: string; rehearse?: boolean; exitCode?: boolean };
  cluster: ClusterSpec;
  driver: MemberDriver | undefined;
  reportFile: string | undefined;
  cloneLoad: (LoadResult & { upMs: number; handOffs?: number }) | undefined;
}

/** The result of `runUpgradeOrLadder` shown: the single hop's or the ladder's, then its backups and the report written. */
export async function renderUpgrade(r: { single: UpgradeReport; checks: CheckRow[] } | LadderReport, s: Shown): Promise<CommandResult> {
  const { ctx, flags, cluster, reportFile, cloneLoad } = s;
  const last = flags.rehearse ? PLANNED_ONLY.rehearse : PLANNED_ONLY.dry;
  if ('kind' in r) {
    const out = withChanges(renderLadder(r, ctx, last), flags, changesOf(r));
    if (cloneLoad) out.data = { ...(out.data as object), rehearsal: cloneLoad };
    if (r.status !== 'done' && r.status !== 'halted') return out;
    const { backupsOfRuns, ladderRunIds } = await import('./upgrade-backups.js');
    const b = await backupsOfRuns(ctx, cluster.key, await ladderRunIds(r));
    out.text = `${out.text}\n${b.line}`;
    out.data = {
      ...r,
      backups: b.doc,
      ...(reportFile ? { report: await writeRunReport(ctx, reportFile, journalPath(ctx.paths.data, cluster.key)) } : {}),
      ...(cloneLoad ? { rehearsal: cloneLoad } : {}),
    };
    return out;
  }
  const report = r.single;
  const out = withChanges(render(report, ctx, r.checks, await planCommands(report, s), last), flags, changesOf(report));
  if ((report.status === 'done' || report.status === 'halted') && report.run) {
    const { backupsOfRuns } = await import('./upgrade-backups.js');
    const b = await backupsOfRuns(ctx, cluster.key, {
      ids: [report.run],
      steps: report.steps,
      fates: report.copies,
      copies: report.dataCopies,
      snaps: report.snapshots,
    });
    out.text = `${out.text ?? ''}\n${b.line}`;
    out.data = { ...(out.data as object), backups: b.doc };
  }
  if (cloneLoad) out.data = { ...(out.data as object), rehearsal: cloneLoad };
  if (reportFile && report.journal) out.data = { ...(out.data as object), report: await writeRunReport(ctx, reportFile, report.journal) };
  else if (reportFile) ctx.io.warn(`--report: nothing ran, so no report was written to ${reportFile}`);
  return out;
}

/** --report FILE written from the run's journal, and said on stderr. */
export async function writeRunReport(ctx: Context, file: string, journal: string) {
  const { writeReport } = await import('./report-file.js');
  const doc = await writeReport(file, journal);
  ctx.io.err(`report: ${file}`);
  return doc;
}

/** A command driver's plan: the members the run would stop and start, with the values the run passes ({bin}: the target's directory). */
async function planCommands(report: UpgradeReport, { flags, cluster, driver }: Shown): Promise<string | undefined> {
  const { CommandDriver } = await import('../../../kv/drivers/command.js');
  const moving = new Set(report.plan.filter((m) => m.action !== 'skip').map((m) => m.name));
  if (report.status !== 'planned' || !(driver instanceof CommandDriver)) return undefined;
  return moving.size
    ? driver.preview(
        cluster.members.filter((m) => moving.has(m.name)),
        { version: flags.to, ...(report.targetBin ? { binDir: report.targetBin } : {}) },
      )
    : `nothing to do: every member already runs ${report.target}; no command would run`;
}

/** The hops (a ladder) or members (one hop) a plan upgrades, or a run upgraded: --exit-code's changes. */
function changesOf(r: UpgradeReport | LadderReport): number {
  if ('kind' in r) return r.status === 'planned' || r.status === 'done' ? r.hops.length : 0;
  if (r.status === 'planned') return r.plan.filter((m) => m.action !== 'skip').length;
  return r.status === 'done' ? r.steps.length : 0;
}

/** --exit-code: 6 when the plan has changes, unless the result already says something else (halted, declined). */
function withChanges(out: CommandResult, opts: { exitCode?: boolean }, changes: number): CommandResult {
  return out.exitCode === undefined ? { ...out, ...changesExit(opts, changes) } : out;
}

/** The last line of a plan that ran nothing: a dry run's, or --rehearse's (its clone removed). */
const PLANNED_ONLY = { dry: '(--dry-run: nothing was changed)', rehearse: '(--rehearse: the clone is removed; nothing was changed on the cluster)' };

function render(r: UpgradeReport, ctx: Context, checks: CheckRow[] = [], commands?: string, last = PLANNED_ONLY.dry): CommandResult {
  const warned = warningLines(r.warnings).join('\n');
  // (the plan text holds the summary and each check once; --json keeps every row)
  if (r.status === 'planned')
    return {
      data: checks.length ? { ...r, checks } : r,
      text: `${r.planText}${warned ? `\n${warned}` : ''}${commands ? `\n${commands}` : ''}\n${last}`,
    };
  if (r.status === 'declined') return { ...notDone('declined', { action: `upgrade the cluster to ${r.target}` }), data: r };
  if (r.status === 'nothing-to-do') return { data: r, text: '', message: `every member and the cluster already run ${r.target}: nothing to do` };
  const lines = r.steps.map((s) =>
    `${s.status.padEnd(8)} ${s.id.padEnd(34)} ${s.ms === undefined ? '' : fmtMs(s.ms).padStart(8)}  ${s.detail ?? s.error ?? ''}`.trimEnd(),
  );
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

/** The ladder's result: the plan (--dry-run), or hop by hop what ran; halted: exit 3 with the way on. */
function renderLadder(r: LadderReport, ctx: Context, last = PLANNED_ONLY.dry): CommandResult {
  if (r.status === 'planned') return { data: r, text: `${r.planText}\n${last}` };
  if (r.status === 'declined') return { ...notDone('declined', { action: `upgrade the cluster to ${r.to}` }), data: r };
  const lines: string[] = [];
  r.hops.forEach((h, i) => {
    const ran = h.report;
    const ms = ran ? fmtMs(ran.totals.ms) : '';
    lines.push(
      `hop ${i + 1}/${r.hops.length} ${h.from} → ${h.to}${h.patch ? ' (patch)' : ''}: ${h.status}${ms ? ` (${ms})` : ''}${h.journal ? `  journal ${h.journal}` : ''}`,
    );
  });
  if (r.status === 'halted') {
    ctx.io.err(`${ctx.io.colorErr.red('X')} upgrade ladder halted at hop ${r.halt!.hop}: ${r.halt!.reason}`);
    if (r.halt!.rollback) ctx.io.err(`  Roll back this hop with:  ${r.halt!.rollback}`);
    ctx.io.err(`  Or fix the cause and resume with the same command (ladder: ${r.ladderFile}).`);
    return { data: r, text: lines.join('\n'), exitCode: 3 };
  }
  return { data: r, text: lines.join('\n'), message: `cluster upgraded to ${r.to} in ${r.hops.length} hops: every member healthy` };
}
