import { OpsError } from '../../core/errors.js';
import type { Journal, JournalStep, StepStatus } from './journal.js';
import { MEMBER_STEPS } from '../cluster/types.js';

/**
 * A resumable journal checked against its own plan, not only its shape (journal-read.ts does the
 * shape): the members are the cluster's; every member to upgrade has every step of the plan, once,
 * in order (`<member>/<kind>`), a skipped member none; the cluster's two steps come last; and the
 * statuses are ones a run can leave: per member, steps done (a backup may be skipped) up to one
 * step that is pending, running or failed, then pending ones; at most one member between its stop
 * and a finished start; the cluster's steps only after every member is done. Anything else is a
 * journal no run wrote (hand-edited, damaged, another version's): a resume would act on a guess.
 */

const CLUSTER_STEPS = ['wait-cluster-version', 'final-health'] as const;

/** One thing wrong: which member and step, and what. */
export interface PlanProblem {
  member?: string;
  step?: string;
  problem: string;
}

const finished = (s: StepStatus) => s === 'done' || s === 'skipped';

/** What is wrong with `j` against its plan (empty: a resume may act on it). `clusterMembers`: the names of the cluster being upgraded. */
export function journalPlanProblems(j: Journal, clusterMembers?: string[]): PlanProblem[] {
  const out: PlanProblem[] = [];
  const names = j.members.map((m) => m.name);
  const seen = new Set<string>();
  for (const n of names) {
    if (seen.has(n)) out.push({ member: n, problem: `member ${n} is listed twice in the journal's plan` });
    seen.add(n);
  }
  if (clusterMembers) {
    const cluster = new Set(clusterMembers);
    for (const n of seen)
      if (!cluster.has(n))
        out.push({ member: n, problem: `the journal's plan has member ${n}, which this cluster does not have (its members: ${clusterMembers.join(', ')})` });
    for (const n of clusterMembers)
      if (!seen.has(n)) out.push({ member: n, problem: `the cluster's member ${n} is not in the journal's plan (${names.join(', ') || 'no members'})` });
  }
  if (out.length) return out;

  const upgrading = j.members.filter((m) => m.action !== 'skip').map((m) => m.name);
  for (const m of j.members.filter((x) => x.action === 'skip')) {
    const extra = j.steps.find((s) => s.member === m.name);
    if (extra) out.push({ member: m.name, step: extra.id, problem: `member ${m.name} is skipped by the plan but has a step ${extra.id}` });
  }
  // The layout: each member's steps together in plan order, then the cluster's.
  const expected = [
    ...upgrading.flatMap((n) => MEMBER_STEPS.map((k) => ({ id: `${n}/${k}`, member: n, kind: k }))),
    ...CLUSTER_STEPS.map((k) => ({ id: `cluster/${k}`, member: undefined, kind: k })),
  ];
  for (const n of upgrading)
    out.push(
      ...memberLayout(
        n,
        j.steps.filter((s) => s.member === n),
      ),
    );
  const clusterSteps = j.steps.filter((s) => s.member === undefined);
  out.push(...layout(undefined, clusterSteps, [...CLUSTER_STEPS]));
  if (!out.length && j.steps.some((s, i) => s.id !== expected[i]?.id)) {
    const i = j.steps.findIndex((s, k) => s.id !== expected[k]?.id);
    const s = j.steps[i]!;
    out.push({ member: s.member, step: s.id, problem: `step ${s.id} is out of place (position ${i + 1}; the plan has ${expected[i]?.id ?? 'nothing'} there)` });
  }
  if (out.length) return out;

  // Statuses a run can leave.
  const state = new Map<string, 'untouched' | 'partial' | 'done'>();
  for (const n of upgrading) {
    const steps = j.steps.filter((s) => s.member === n);
    const problem = statusProblem(steps);
    if (problem) out.push({ member: n, ...problem });
    state.set(n, steps.every((s) => finished(s.status)) ? 'done' : steps.every((s) => s.status === 'pending') ? 'untouched' : 'partial');
  }
  const down = upgrading.filter((n) => {
    const st = (k: string) => j.steps.find((s) => s.id === `${n}/${k}`)!.status;
    return st('stop') !== 'pending' && st('start') !== 'done';
  });
  if (down.length > 1)
    out.push({
      member: down[1],
      problem: `members ${down.join(' and ')} are both recorded as stopped and not started again (the upgrade stops one member at a time)`,
    });
  const [cv, fh] = CLUSTER_STEPS.map((k) => clusterSteps.find((s) => s.kind === k)!);
  for (const s of [cv!, fh!]) if (s.status === 'skipped') out.push({ step: s.id, problem: `step ${s.id} is "skipped", which it never is` });
  const notDone = upgrading.filter((n) => state.get(n) !== 'done');
  if (cv!.status !== 'pending' && notDone.length)
    out.push({
      step: cv!.id,
      problem: `step ${cv!.id} is "${cv!.status}" while ${notDone.join(', ')} ${notDone.length > 1 ? 'are' : 'is'} not done (it runs after every member)`,
    });
  if (fh!.status !== 'pending' && cv!.status !== 'done')
    out.push({ step: fh!.id, problem: `step ${fh!.id} is "${fh!.status}" while ${cv!.id} is "${cv!.status}"` });
  return out;
}

/** A member's steps against MEMBER_STEPS: a missing, duplicated, unknown or out-of-order step. */
function memberLayout(name: string, steps: JournalStep[]): PlanProblem[] {
  if (!steps.length) return [{ member: name, problem: `member ${name} is to be upgraded but has no steps (its plan: ${MEMBER_STEPS.join(', ')})` }];
  return layout(name, steps, MEMBER_STEPS);
}

function layout(member: string | undefined, steps: JournalStep[], kinds: readonly string[]): PlanProblem[] {
  const who = member ? `member ${member}` : 'the cluster';
  const prefix = member ?? 'cluster';
  const plan = `(${who}'s plan: ${kinds.join(', ')})`;
  for (const s of steps) {
    if (!kinds.includes(s.kind)) return [{ member, step: s.id, problem: `${who} has a step ${s.id} of kind "${s.kind}", which is not in its plan ${plan}` }];
    if (s.id !== `${prefix}/${s.kind}`) return [{ member, step: s.id, problem: `step ${s.id} is of kind "${s.kind}": its id should be ${prefix}/${s.kind}` }];
  }
  for (const k of kinds) {
    const n = steps.filter((s) => s.kind === k).length;
    if (n === 0) return [{ member, step: `${prefix}/${k}`, problem: `${who} has no "${k}" step (${prefix}/${k}) ${plan}` }];
    if (n > 1) return [{ member, step: `${prefix}/${k}`, problem: `${who} has the "${k}" step (${prefix}/${k}) ${n} times ${plan}` }];
  }
  const order = steps.map((s) => s.kind);
  const bad = order.findIndex((k, i) => k !== kinds[i]);
  if (bad >= 0) return [{ member, step: `${prefix}/${order[bad]}`, problem: `${who}'s steps are out of order: ${steps.map((s) => s.id).join(', ')} ${plan}` }];
  return [];
}

/** The statuses of one member's steps (in plan order) against what a run can leave. */
function statusProblem(steps: JournalStep[]): { step: string; problem: string } | undefined {
  const skippable = (s: JournalStep) => s.kind === 'backup-data';
  for (const s of steps)
    if (s.status === 'skipped' && !skippable(s)) return { step: s.id, problem: `step ${s.id} is "skipped", which only a backup-data step can be` };
  const i = steps.findIndex((s) => !finished(s.status));
  if (i < 0) return undefined;
  const current = steps[i]!;
  // (a backup-data step is marked skipped as the member's cycle begins, --no-backup or no backup command: a run killed
  // in its stop or the wait for it leaves it so, before the step in flight)
  const inCycle = current.kind === 'stop' || current.kind === 'wait-stopped';
  const later = steps.slice(i + 1).find((s) => s.status !== 'pending' && !(inCycle && s.status === 'skipped' && skippable(s)));
  if (later) {
    return {
      step: later.id,
      problem: `step ${later.id} is "${later.status}" but the step before it, ${current.id}, is "${current.status}" (a run takes a member's steps in order)`,
    };
  }
  return undefined;
}

/** A resumable journal that does not match its plan: nothing is done; the way out is the roll-back or moving the file aside. */
export class JournalPlanInvalid extends OpsError {
  constructor(
    file: string,
    readonly problems: PlanProblem[],
    rollbackCommand = 'opsctl kv rollback',
  ) {
    const [first] = problems;
    const more =
      problems.length > 1
        ? ` (and ${problems.length - 1} more: ${problems
            .slice(1, 4)
            .map((p) => p.problem)
            .join('; ')}${problems.length > 4 ? '; …' : ''})`
        : '';
    super(`the kv upgrade journal ${file} does not match its plan: ${first?.problem ?? 'unknown problem'}${more}; nothing was changed`, 1, {
      code: 'journal_plan',
      hint: `a resume cannot tell from it which members moved. Put the cluster back on its previous version with: ${rollbackCommand}   or, if no upgrade is half-done (opsctl kv status), move the journal aside: mv ${file} ${file}.bad   and run the command again`,
    });
  }
}

/** Throws JournalPlanInvalid (exit 1, before any action) unless `j` matches its plan and this cluster. */
export function checkJournalPlan(file: string, j: Journal, clusterMembers?: Array<{ name: string }>, rollbackCommand?: string): void {
  const problems = journalPlanProblems(
    j,
    clusterMembers?.map((m) => m.name),
  );
  if (problems.length) throw new JournalPlanInvalid(file, problems, rollbackCommand);
}
