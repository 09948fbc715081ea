/**
 * The one operation that cycles a member, wherever a flow does (the upgrade and the downgrade, whose
 * executor runs each member through it, kv rollback, the v2store fix): stop, wait until its process is
 * gone, what is done while it is down (a copy of its data dir), start, wait until it and the cluster are
 * healthy and it caught up. Journalled alike in each flow's record: one JournalStep per part (kinds `stop`,
 * `wait-stopped`, `backup-data`, `start`, `wait-healthy`; an upgrade's ids `<member>/<kind>`, the others'
 * `<prefix>/<member>/<kind>`), the record written ahead of the stop (durably: a resume after an OS crash
 * knows which member it may find down), ahead of the start, and once the member is back. A resume takes
 * the cycle from its first step not done, and each step is safe to redo: a stop asks first whether the
 * member runs (and passes the flow's gate again if it does), a start asks too, the waits only look. The
 * one resume logic (journal/resume-state.ts: memberStates, inFlightOf) reads these steps for every flow.
 * What is around a member stays the flow's: the upgrade's snapshot before, --defrag, the space for the
 * backup, the settle after, and what a failed step does (a halt, --on-failure rollback), read from CycleFailed.
 */
import type { MemberSpec } from '../cluster/cluster-file.js';
import type { MemberTarget } from '../drivers/driver.js';
import type { JournalStep } from '../journal/journal.js';
import { fmtMs, type RunRecord, type StepEnv } from './options.js';
import { startStep, waitGoneStep } from './steps.js';
import { walMarkOf } from '../wal/wal-mark.js';

/** A cycle's steps, in order (`backup-data` only where the flow copies the data dir while the member is down). */
export const CYCLE_STEPS = ['stop', 'wait-stopped', 'backup-data', 'start', 'wait-healthy'] as const;
export type CycleKind = (typeof CYCLE_STEPS)[number];

/** The steps of one cycle of `member`, all pending; ids `<prefix>/<member>/<kind>` (a flow may cycle a member more than once). */
export function cycleSteps(prefix: string, member: string, { whileDown }: { whileDown: boolean }): JournalStep[] {
  return CYCLE_STEPS.filter((k) => whileDown || k !== 'backup-data').map((kind) => ({ id: `${prefix}/${member}/${kind}`, member, kind, status: 'pending' }));
}

/** The steps of `member`'s cycle `prefix` in a record's step list. */
export function stepsOf(steps: JournalStep[], prefix: string, member: string): JournalStep[] {
  return steps.filter((s) => s.member === member && s.id.startsWith(`${prefix}/${member}/`));
}

/** Whether every step of a cycle is done (or skipped). */
export const cycleDone = (steps: JournalStep[]): boolean => steps.length > 0 && steps.every((s) => s.status === 'done' || s.status === 'skipped');

/** Whether a cycle copied the member's data dir while it was down (its `backup-data` step done): a copy a failed start may put back. */
export const copied = (steps: JournalStep[]): boolean => steps.some((s) => s.kind === 'backup-data' && s.status === 'done');

/** Whether a cycle's stop ran (or began): the member may be down until its start is done. */
export const cycleStopped = (steps: JournalStep[]): boolean => steps.some((s) => s.kind === 'stop' && s.status !== 'pending');

export interface Cycle {
  member: MemberSpec;
  /** This cycle's steps, held by the flow's record (their statuses are written into it). */
  steps: JournalStep[];
  /** What it is started on. */
  target: MemberTarget;
  /**
   * Right before a running member is stopped: throws to leave it untouched (the flow's health gate).
   * `resumed`: the record says this stop began (the stop command may have reached it: it may be on its way down).
   */
  gate?: (o: { resumed: boolean }) => Promise<void>;
  /** The `backup-data` step's body, while the member is down. */
  whileDown?: (p: StepProgress) => Promise<string>;
  /** The `wait-healthy` step's body: until it and the cluster are healthy and it caught up (and what else the flow waits for). */
  waitBack: (p: StepProgress) => Promise<string>;
  /** The words of a step where the flow says it its own way (`start on 3.5 with snapshot-count 1`). */
  words?: Partial<Record<CycleKind, string>>;
  /** Said when the member is back, before that is written (the flow's own record of it). */
  onBack?: () => void;
  /**
   * A first stop (its step still pending) passes the gate and stops without asking first whether the
   * member runs, nothing between the gate's look and the stop command: a member found down before the
   * flow stopped it fails the gate (the upgrade halts with it untouched). A resumed stop asks as any.
   */
  gateFirstStop?: boolean;
  /** The steps whose time is the cluster's own wait, not the flow's (kept as the step's `imposedMs`: the upgrade's report counts it apart). */
  imposed?: readonly CycleKind[];
  /** Told as each step begins, before its record is written (the flow's own count of what this run did). */
  begun?: (step: JournalStep) => void;
  /** An error that interrupts rather than fails (Ctrl-C in a wait): its step goes back to pending, said "interrupted", and the error is thrown as it is. */
  interrupts?: (err: Error) => boolean;
}

export interface StepProgress {
  update(text: string): void;
}

/** Where a cycle runs: the driver and options its steps read, and how its record is written (`durable`: synced, ahead of a stop). */
export interface CycleEnv {
  env: StepEnv<'reporter' | 'timeouts' | 'now', RunRecord>;
  save: (how: { durable: boolean }) => Promise<void>;
}

/** A cycle step that failed: its step is marked failed (with the error) before this is thrown; the flow writes its record. */
export class CycleFailed extends Error {
  constructor(
    readonly step: JournalStep,
    override readonly cause: Error,
  ) {
    super(cause.message);
  }
}

/**
 * The member's WAL mark before its start (nothing read while it runs: a resumed start may find it up; `seenGone`: this
 * run saw its process gone, so the driver is not asked again while the member is down).
 */
async function markBeforeStart(env: CycleEnv['env'], m: MemberSpec, { seenGone }: { seenGone: boolean }): Promise<NonNullable<JournalStep['walBefore']>> {
  const d = env.driver;
  if (d.capabilities?.etcdData === false) return { why: `${d.capabilities.what} members keep no WAL` };
  if (!seenGone && (await d.isRunning(m))) return { why: `${m.name} was running already when its start began` };
  return walMarkOf(d, m);
}

/** Runs (or resumes) one cycle: each step not yet done, in order. */
export async function runCycle(x: CycleEnv, c: Cycle): Promise<void> {
  const { env } = x;
  const m = c.member;
  if (cycleDone(c.steps)) return;
  const driver = env.driver;
  let seenGone = false;
  const firstStop = c.steps.some((s) => s.kind === 'stop' && s.status === 'pending');
  const bodies: Record<CycleKind, (p: StepProgress) => Promise<string>> = {
    stop: async () => {
      // (before the gate: nothing comes between its look and the stop; what the start's WAL mark needs of the member running)
      if (c.whileDown && driver.capabilities?.etcdData !== false) await driver.learnDataDirs?.(m).catch(() => undefined);
      // a resumed stop (the record says it began) stops only a member still running, and gates it again
      if (!(firstStop && c.gateFirstStop) && !(await driver.isRunning(m))) return 'not running';
      await c.gate?.({ resumed: !firstStop });
      await driver.stop(m);
      return 'stopped';
    },
    'wait-stopped': async () => {
      const said = await waitGoneStep(env, m);
      seenGone = true;
      return said;
    },
    'backup-data': (p) => c.whileDown!(p),
    start: () => startStep(env, m, c.target, { seenGone }),
    'wait-healthy': (p) => c.waitBack(p),
  };
  const words: Record<CycleKind, string> = {
    stop: 'stop',
    'wait-stopped': 'wait until the process is gone',
    'backup-data': 'back up the data dir',
    start: `start ${c.target.version}`,
    'wait-healthy': 'wait until it and the cluster are healthy and it caught up',
    ...c.words,
  };
  for (const step of c.steps) {
    if (step.status === 'done' || step.status === 'skipped') continue;
    const kind = step.kind as CycleKind;
    const label = `${m.name}: ${words[kind]}`;
    c.begun?.(step);
    step.status = 'running';
    step.startedAt = new Date(env.o.now()).toISOString();
    delete step.error;
    // its WAL as the start will find it, where its data was copied: the put-back's guard (kv/wal/wal-mark.ts); no copy, nothing to put back
    if (kind === 'start' && copied(c.steps) && !step.walBefore) step.walBefore = await markBeforeStart(env, m, { seenGone });
    // written ahead of a change to the member: durably before its stop
    if (kind === 'stop' || kind === 'start') await x.save({ durable: kind === 'stop' });
    const p = env.o.reporter.begin(label);
    const t0 = env.o.now();
    try {
      step.detail = await bodies[kind](p);
    } catch (err) {
      step.ms = env.o.now() - t0;
      if (c.interrupts?.(err as Error)) {
        step.status = 'pending';
        p.fail(`${label}: interrupted`);
        throw err;
      }
      step.status = 'failed';
      step.error = (err as Error).message;
      p.fail(`${label}: ${(err as Error).message}`);
      throw new CycleFailed(step, err as Error);
    }
    step.ms = env.o.now() - t0;
    if (c.imposed?.includes(kind)) step.imposedMs = step.ms;
    step.status = 'done';
    step.finishedAt = new Date(env.o.now()).toISOString();
    p.done(`${label}: ${step.detail} (${fmtMs(step.ms)})`);
  }
  c.onBack?.();
  await x.save({ durable: false });
}
