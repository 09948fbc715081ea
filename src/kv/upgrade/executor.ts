import { OpsError } from '../../core/errors.js';
import { observeCluster } from '../cluster/observe.js';
import { describePlan } from './planner.js';
import { describeResume, resumeState } from '../journal/resume-state.js';
import {
  totals,
  UpgradeRefused,
  type Base,
  type BackupRoom,
  type Destination,
  type PlanLines,
  type Proof,
  type Running,
  type Say,
  type UpgradeOptions,
  type UpgradeReport,
  type Waits,
  type WayBack,
} from './options.js';
import { acquireLock } from './lock.js';
import { hashPlanLine, planWarnings, preflight, resumableJournal, stageBinaries, type Preflight } from './preflight.js';
import { UpgradeRun } from './run.js';
import type { CheckRow } from '../rules/types.js';
import { journalPath, type Journal } from '../journal/journal.js';
import { PROOF_RULES } from '../rules/trial.js';
import { renderChecks } from '../rules/index.js';
import { planSummary } from '../rules/summary.js';
import type { UpgradePlan } from '../cluster/types.js';

/** A run that would stop members needs a way to (a usage error, before any look at proofs): the plan alone does not. */
export function requireDriver(o: Pick<UpgradeOptions, 'driver' | 'dryRun'>): void {
  if (o.driver || o.dryRun) return;
  throw new OpsError('no way to stop and start members', 2, {
    code: 'no_driver',
    hint: 'use the sandbox (opsctl kv sandbox up), or a cluster file with a driver, or --stop-cmd/--start-cmd/--running-cmd templates',
  });
}

/**
 * The executor's own refusal, whoever called it: a refusing row of the hop's rulebook, or a member still
 * to be stopped with no passed trial (a warning row is a --skip-trial the operator asked for by name).
 */
export function proofGaps(checks: CheckRow[] | undefined, upgrading: Array<{ name: string }>, journal: Journal | undefined): string[] {
  const out = (checks ?? []).filter((r) => r.status === 'refuse').map((r) => `${r.hop} [${r.rule}]${r.member ? ` member ${r.member}` : ''}: ${r.detail}`);
  const finished = (name: string) => journal?.steps.filter((s) => s.member === name).every((s) => s.status === 'done' || s.status === 'skipped') ?? false;
  for (const m of upgrading) {
    if (finished(m.name)) continue;
    if (!checks?.some((r) => r.rule === 'trial-start' && r.member === m.name))
      out.push(`member ${m.name}: not proven: no trial start of the target ran for it`);
    for (const r of checks ?? [])
      if (r.member === m.name && PROOF_RULES.has(r.rule) && r.status === 'not checked')
        out.push(`${r.hop} [${r.rule}] member ${m.name}: not proven: ${r.detail}`);
  }
  return out;
}

/** What the executor reads: the plan's part (Planning), the run's (Running), and the lock's patience with another host's run. */
type Executing = Planning | Running | 'lockStaleMs';

/**
 * The executor: runs (or resumes) the journalled plan, one member at a time. Its entry takes the options
 * as the verbs build them (UpgradeOptions has them all); the plan reads its part of them, the run (UpgradeRun) the rest.
 */
export async function runUpgrade(o: Pick<UpgradeOptions, Executing>): Promise<UpgradeReport> {
  const started = o.now();
  const file = journalPath(o.dataDir, o.cluster.key);
  let unlock: (() => Promise<void>) | undefined;
  // The lock and the first look at the cluster at the same time (looking changes nothing).
  const first = observeCluster(o.cluster.members, { session: o.session, timeoutMs: o.timeouts.requestMs, debug: o.debug, memberList: true });
  first.then(
    () => o.debug?.(`[kv] first look at the cluster after ${o.now() - started} ms`),
    () => undefined,
  );
  if (!o.dryRun) unlock = await acquireLock(file, o);
  o.debug?.(`[kv] lock acquired after ${o.now() - started} ms`);
  try {
    const agreed = await planned(o, file, started, first);
    if ('status' in agreed) return agreed;
    const { base, pre, journal, upgrading } = agreed;
    await stageBinaries(o, o.driver!, upgrading, journal);
    const run = await UpgradeRun.start(o, o.driver!, { file, started, base, pre, resumed: journal });
    return await run.go();
  } finally {
    await unlock?.().catch(() => undefined);
  }
}

/** A plan the operator agreed to (or that needs no question): what the run starts from. */
interface Agreed {
  base: Base;
  pre: Preflight;
  journal: Journal | undefined;
  upgrading: Array<{ name: string }>;
}

/** What the plan reads: the look and its waits, where the members go, the backups' room, the proof, the operator's say, the plan's own lines. */
type Planning = Waits | Destination | WayBack | BackupRoom | Proof | Say | PlanLines | 'reporter';

/** The pre-flight, the plan and its question: the report when the run ends there (planned, nothing to do, declined), else what the run starts from. */
async function planned(
  o: Pick<UpgradeOptions, Planning>,
  file: string,
  started: number,
  first: ReturnType<typeof observeCluster>,
): Promise<UpgradeReport | Agreed> {
  const journal = resumableJournal(o, file);
  const pre = await preflight(o, file, first, journal);
  o.debug?.(`[kv] pre-flight done after ${o.now() - started} ms`);
  const { plan } = pre;
  const settleText = o.settle === 'auto' ? 'auto' : `${o.settle} ms`;
  const resume = journal ? resumeState(journal, file) : undefined;
  const warnings = planWarnings(pre.membership.list.length, o);
  const body = resume
    ? [`Resuming the upgrade ${resume.hop} recorded in ${file}`, ...describeResume(resume, journal!.target)]
    : [
        describePlan(plan, settleText, { noBackup: o.noBackup }),
        ...(o.defrag
          ? ['--defrag: each member is defragmented right before its snapshot (its reads and writes wait while it runs); the space freed is shown']
          : []),
        hashPlanLine(o, pre.obs, plan.source),
        ...(pre.disk ? [pre.disk] : []),
      ];
  const planText = (o.shownChecks ? framed(o, plan, warnings, body, { resuming: Boolean(journal) }) : body).join('\n');
  const base = {
    cluster: o.cluster.key,
    source: plan.source,
    target: plan.target,
    planText,
    warnings,
    plan: journal?.members ?? plan.members,
    resumed: Boolean(journal),
    ...(resume ? { resume } : {}),
    ...((o.targetBin ?? journal?.target_bin) ? { targetBin: o.targetBin ?? journal?.target_bin } : {}),
  };
  const upgrading = plan.members.filter((m) => m.action !== 'skip');
  // (a dry run too: a plan where no member moves and the cluster version is there prints one line, no member's commands)
  if (!journal && upgrading.length === 0 && plan.clusterVersion === plan.target) {
    return { ...base, status: 'nothing-to-do', steps: [], snapshots: [], totals: totals([], o.now() - started) };
  }
  if (o.dryRun) return { ...base, status: 'planned', steps: [], snapshots: [], totals: totals([], o.now() - started) };
  requireDriver(o);
  const gaps = proofGaps(o.checks, upgrading, journal);
  if (gaps.length)
    throw new UpgradeRefused(
      gaps,
      'nothing was stopped: every member is proven before its stop (its trial start on the target); give what each line names, or name the member: --skip-trial M --skip-reason "WHY"',
      o.downgrade ? 'downgrade' : 'upgrade',
    );
  o.reporter.note([planText, ...warnings.map((w) => `  ! ${w}`)].join('\n'));
  // Asked before the journal is written: a "no" leaves nothing behind.
  if (o.confirm && !(await o.confirm({ target: plan.target, planText, warnings, members: upgrading.length, resuming: Boolean(journal) }))) {
    return { ...base, status: 'declined', steps: [], snapshots: [], totals: totals([], o.now() - started) };
  }
  return { base, pre, journal, upgrading };
}

/** A one-hop upgrade's plan as its command shows it: the three-line summary, the plan, then the hop's checks (each once) and the notes after them. */
function framed(
  o: Pick<UpgradeOptions, Proof | 'dryRun'>,
  plan: UpgradePlan,
  warnings: string[],
  body: string[],
  { resuming }: { resuming: boolean },
): string[] {
  const checks = o.checks ?? [];
  const going = plan.members.filter((m) => m.action !== 'skip');
  const summary = planSummary({
    kind: plan.source === plan.target ? 'restart' : 'upgrade',
    from: plan.source,
    to: plan.target,
    hops: [plan.target],
    members: going.map((m) => m.name),
    leader: plan.members.find((m) => m.wasLeader)?.name,
    rows: checks,
    warnings,
    strict: o.shownChecks!.strict,
    dryRun: o.dryRun,
    resuming,
  });
  const rulebook = checks.length ? [`  checks (rulebook of ${checks[0]!.hop}):`, ...renderChecks(checks)] : [];
  return [...summary, ...body, ...rulebook, ...o.shownChecks!.notes.map((n) => `  ${n}`)];
}
