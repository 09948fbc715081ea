import { hostname } from 'node:os';
import type { Journal } from './journal.js';
import type { CheckRow } from '../rules/types.js';

/**
 * What the report needs beyond the steps, recorded in the journal as optional fields (an older
 * journal has none of them; the reader keeps fields it does not know):
 * - `runs`: each process that worked on the journal, when it began and how it ended (done, halted,
 *   interrupted by a signal, or killed: a run that never wrote its end, found by the next one);
 * - `putBack`: members `--on-failure rollback` put back on their old version;
 * - `checks`: the hop's rulebook as it was checked before the first stop;
 * - `proofs`: the trials that passed before it (TrialProof), which a resume of the run may stand on;
 * - `commands`: the exact roll-back command of the run (the restore command is built from it).
 */
export type RunEnd = 'done' | 'halted' | 'interrupted' | 'killed';

export interface JournalRun {
  pid: number;
  host: string;
  startedAt: string;
  endedAt?: string;
  end?: RunEnd;
  /** How it ended, in words: the signal, the halt reason, "the process died without a word". */
  how?: string;
}

export interface PutBack {
  member: string;
  /** The version it is back on. */
  to: string;
  at: string;
  /** When its stop began (its down window runs from there to `at`). */
  downFrom?: string;
  detail: string;
}

/**
 * A passed trial as the run recorded it before its first stop (ladder/proofs.ts): the hop, the member,
 * which proof (its settings' start, or its data's), when it ran, the settings it judged (their
 * fingerprint) and the binary (its dir and release). A resume of the same run may stand on it.
 */
export interface TrialProof {
  hop: string;
  member: string;
  rule: 'trial-start' | 'data-trial';
  at: string;
  fingerprint: string;
  binDir?: string;
  release?: string;
  detail: string;
}

export type JournalExtras = { runs?: JournalRun[]; putBack?: PutBack[]; checks?: CheckRow[]; proofs?: TrialProof[]; commands?: { rollback?: string } };
export type JournalWithRuns = Journal & JournalExtras;

/** Ends the last run (if still open) as `end`, at `at` (ISO). */
export function endRun(j: Journal, end: RunEnd, how: string | undefined, at: string): void {
  const runs = (j as JournalWithRuns).runs;
  const last = runs?.at(-1);
  if (!last || last.end) return;
  last.end = end;
  last.endedAt = at;
  if (how) last.how = how;
}

/**
 * A run begins on the journal (a new one, or a resume). On a resume, a previous run that wrote no end
 * died without a word (kill -9, a crash, a power loss): it ended at the journal's last record.
 */
export function beginRun(j: Journal, at: string): void {
  const jj = j as JournalWithRuns;
  jj.runs ??= [];
  const last = jj.runs.at(-1);
  if (last && !last.end) {
    const end: RunEnd = j.status === 'halted' ? 'halted' : j.status === 'interrupted' ? 'interrupted' : 'killed';
    const how =
      end === 'killed'
        ? `the process (pid ${last.pid} on ${last.host}) ended without a word: kill -9, a crash or a power loss; its last record is at ${j.updatedAt}`
        : end === 'halted'
          ? j.halt?.reason
          : 'interrupted (a signal)';
    endRun(j, end, how, j.updatedAt);
  }
  jj.runs.push({ pid: process.pid, host: hostname(), startedAt: at });
}

/** The words for a signal that interrupted a run. */
export function signalWords(reason: unknown): string {
  if (reason === 'SIGINT') return 'Ctrl-C (SIGINT): stopped at a safe point';
  if (reason === 'SIGTERM') return 'SIGTERM: stopped at a safe point';
  return 'interrupted: stopped at a safe point';
}

/** Records a member --on-failure rollback put back. */
export function recordPutBack(j: Journal, p: PutBack): void {
  const jj = j as JournalWithRuns;
  (jj.putBack ??= []).push(p);
}
