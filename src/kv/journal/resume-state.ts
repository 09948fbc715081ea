import { cycles, type Journal, type JournalStep } from './journal.js';
import type { JournalWithRuns } from './runs.js';

/** What a resume finds: the members done, the one in flight (and its next step), the members and cluster steps left. */
export interface ResumeState {
  file: string;
  hop: string;
  /** How the last run stopped, and when (the journal's last record). */
  stopped: { how: string; at: string };
  done: string[];
  inFlight?: { member: string; next: string; stopped: boolean };
  left: string[];
  /** The cluster's own steps still to run (the cluster version, the final health pass). */
  clusterLeft: string[];
}

const CLUSTER_WORDS: Record<string, string> = { 'wait-cluster-version': 'the cluster version', 'final-health': 'a final health pass' };

const finished = (s: { status: string }) => s.status === 'done' || s.status === 'skipped';

/**
 * Pure, the one reading of member steps on a resume (an upgrade's plan, a roll-back's or a fix's cycles):
 * each group of one member's steps is done, in flight (some steps finished or begun: its next step, and
 * whether it was stopped) or left.
 */
export function progressOf(groups: Array<{ member: string; steps: JournalStep[] }>): Pick<ResumeState, 'done' | 'inFlight' | 'left'> {
  const done: string[] = [];
  const left: string[] = [];
  let inFlight: ResumeState['inFlight'];
  for (const { member, steps } of groups) {
    if (steps.every(finished)) done.push(member);
    else if (steps.every((s) => s.status === 'pending') || (inFlight && !steps.some(finished))) left.push(member);
    else {
      const next = steps.find((s) => !finished(s))!;
      const stop = steps.find((s) => s.kind === 'stop');
      inFlight = { member, next: next.kind, stopped: Boolean(stop && stop.status !== 'pending') };
    }
  }
  return { done, left, ...(inFlight ? { inFlight } : {}) };
}

/** Pure: the member cycles (kv/upgrade/cycle.ts) of a flow's steps, read as progressOf reads a plan. */
export function cycleProgress(steps: JournalStep[]): Pick<ResumeState, 'done' | 'inFlight' | 'left'> {
  return progressOf(cycles(steps).map((g) => ({ member: g[0]!.member!, steps: g })));
}

/** Pure: what is done and what is left in a resumable journal. */
export function resumeState(j: Journal, file: string): ResumeState {
  const { done, left, inFlight } = progressOf(
    j.members.filter((x) => x.action !== 'skip').map((m) => ({ member: m.name, steps: j.steps.filter((s) => s.member === m.name) })),
  );
  const last = (j as JournalWithRuns).runs?.at(-1);
  const how =
    j.status === 'halted'
      ? `halted: ${j.halt?.reason ?? ''}`.trim()
      : j.status === 'interrupted'
        ? (last?.how ?? 'interrupted')
        : `the last run (pid ${j.owner.pid} on ${j.owner.host}) ended without a word: kill -9, a crash or a power loss`;
  return {
    file,
    hop: `${j.source} → ${j.target}`,
    stopped: { how, at: j.updatedAt },
    done,
    ...(inFlight ? { inFlight } : {}),
    left,
    clusterLeft: j.steps.filter((s) => !s.member && !finished(s)).map((s) => CLUSTER_WORDS[s.kind] ?? s.kind),
  };
}

/** The lines a resume prints before it asks or goes on. */
export function describeResume(r: ResumeState, target: string, indent = '  '): string[] {
  const left = [...(r.inFlight ? [`${r.inFlight.member} (from its ${r.inFlight.next} step: ${inFlightWords(r.inFlight, target)})`] : []), ...r.left];
  const then = r.clusterLeft.length ? `${left.length ? ', then ' : ''}${r.clusterLeft.join(' and ')}` : '';
  return [
    `${indent}stopped: ${r.stopped.how} (last record ${r.stopped.at})`,
    `${indent}done: ${r.done.length ? r.done.map((n) => `${n} (on ${target})`).join(', ') : 'no member yet'}`,
    `${indent}left: ${left.join(', ')}${then}${!left.length && !then ? 'nothing' : ''}`,
  ];
}

function inFlightWords(f: NonNullable<ResumeState['inFlight']>, target: string): string {
  if (f.next === 'settle') return `back on ${target}, its settle left`;
  return f.stopped ? `stopped, not yet back on ${target}` : 'not stopped yet';
}
