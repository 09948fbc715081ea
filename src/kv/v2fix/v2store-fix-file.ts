/**
 * The v2store fix's journal (journals/<cluster>.v2store-fix.json, `-3.6` for the fix before 3.7): which
 * members it fixes, and each member's two cycles per round as the one member-cycle operation journals them
 * (kv/upgrade/cycle.ts): `r<round>-fix/<member>/…` (its verified snapshot, then stop, wait-stopped,
 * backup-data, start with snapshot-count 1, wait-healthy: back, caught up and a new v2 snapshot written),
 * then `r<round>-back/<member>/…` (stop, wait-stopped, start on its own config, wait-healthy: back, caught
 * up and checked). A file of an older opsctl (version 1: one `phase` per member) is read into these steps;
 * one that cannot be read is refused naming the file and the way out, never taken for "no fix".
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { readOwnFileSync } from '../../core/local-file.js';
import { cycleSteps, stepsOf } from '../upgrade/cycle.js';
import { journalsDir, type Journal, type JournalStep } from '../journal/journal.js';
import { JournalInvalid } from '../journal/read.js';
import { progressOf } from '../journal/resume-state.js';
import type { RestorePoint } from '../upgrade/restore-point.js';

export interface V2FixMember {
  name: string;
  /** The newest .snap before the fix (a new one must follow it). */
  snapBefore?: string;
  snapAfter?: string;
  /** One line per finished step. */
  log: string[];
  check?: string;
}

export interface V2FixFile {
  version: 2;
  kind: 'v2store-fix';
  id: string;
  cluster: string;
  /** The minor the members run and are restarted on (both: the fix changes no version). */
  source: string;
  target: string;
  status: 'running' | 'interrupted' | 'halted' | 'done';
  createdAt: string;
  updatedAt: string;
  owner: { pid: number; host: string };
  members: V2FixMember[];
  /** Every member cycle of every round (see above), in the order they run. */
  steps: JournalStep[];
  snapshots: Journal['snapshots'];
  restorePoint?: RestorePoint;
  /** Each member's data-dir copies, each under its own {run} (a second round copies again). */
  dataCopies?: Journal['dataCopies'];
  /** 1, then 2 when a member's WAL took new v2 entries while the others were restarted (see fixV2store). */
  round: number;
  /** The check on every member after each round. */
  checks: Array<{ round: number; member: string; ok: boolean; said: string }>;
  halt?: { member: string; reason: string };
}

export function v2FixPath(dataDir: string, key: string, minor = '3.5'): string {
  return join(journalsDir(dataDir), minor === '3.5' ? `${key}.v2store-fix.json` : `${key}.v2store-fix-${minor}.json`);
}

/** A member's steps of one round: its fix cycle (with the snapshot before it) and its way back. */
export function roundSteps(round: number, member: string): JournalStep[] {
  const fix = cycleSteps(`r${round}-fix`, member, { whileDown: true });
  return [
    { id: `r${round}-fix/${member}/snapshot`, member, kind: 'snapshot', status: 'pending' },
    ...fix,
    ...cycleSteps(`r${round}-back`, member, { whileDown: false }),
  ];
}

/** A member's two cycles of `round` (the fix's with its snapshot step first). */
export function cyclesOf(j: V2FixFile, member: string, round = j.round): { fix: JournalStep[]; back: JournalStep[] } {
  return { fix: stepsOf(j.steps, `r${round}-fix`, member), back: stepsOf(j.steps, `r${round}-back`, member) };
}

/** The fix's progress in words (the note of a resume): the members done, the one in flight and its next step, the ones left. */
export function fixProgressWords(j: V2FixFile): string {
  const round = j.steps.filter((s) => s.id.startsWith(`r${j.round}-`));
  const p = progressOf(j.members.map((m) => ({ member: m.name, steps: round.filter((s) => s.member === m.name) })).filter((m) => m.steps.length));
  return [
    ...p.done.map((n) => `${n} (done)`),
    ...(p.inFlight ? [`${p.inFlight.member} (from its ${p.inFlight.next} step${p.inFlight.stopped ? ', stopped' : ''})`] : []),
    ...p.left.map((n) => `${n} (not begun)`),
  ].join(', ');
}

/** The fix recorded at `file` (undefined when there is none): an older opsctl's file read into cycles; one that cannot be used refused. */
export function readV2Fix(file: string): V2FixFile | undefined {
  if (!existsSync(file)) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(readOwnFileSync(file, { what: 'the v2store fix journal' }));
  } catch (err) {
    throw new JournalInvalid(file, err instanceof SyntaxError ? `not JSON (truncated?): ${err.message}` : (err as Error).message);
  }
  const j = raw as Omit<Partial<V2FixFile>, 'version'> & { version?: number; members?: Array<V2FixMember & { phase?: string }> };
  if (j.kind !== 'v2store-fix' || !Array.isArray(j.members) || typeof j.id !== 'string')
    throw new JournalInvalid(file, 'not a v2store fix journal (no kind "v2store-fix", members and id)');
  if (j.version === 1) return fromPhases(file, j as V2FixFile & { members: Array<V2FixMember & { phase?: string }> });
  if (j.version !== 2 || !Array.isArray(j.steps))
    throw new JournalInvalid(file, `version ${String(j.version)} of the v2store fix journal is not one this opsctl reads`);
  const names = new Set(j.members.map((m) => m.name));
  const stray = j.steps.find((s) => !s.member || !names.has(s.member));
  if (stray) throw new JournalInvalid(file, `step ${stray.id} names member "${stray.member ?? ''}", which is not one of the fix's members`);
  return j as V2FixFile;
}

/** The phases an older opsctl wrote (one per member, written before each part), as the steps they mean. */
const PHASE_DONE: Record<string, number> = { pending: 0, 'down-1': 1, 'up-fix': 4, 'down-2': 6, 'up-2': 8, done: 10 };

function fromPhases(file: string, old: V2FixFile & { members: Array<V2FixMember & { phase?: string }> }): V2FixFile {
  const round = old.round ?? 1;
  const steps: JournalStep[] = [];
  for (const m of old.members) {
    const done = PHASE_DONE[m.phase ?? ''];
    if (done === undefined) throw new JournalInvalid(file, `member ${m.name} is in phase "${String(m.phase)}", which no opsctl wrote`);
    // (its snapshot; stop, wait-stopped, backup-data, start, wait-healthy; stop, wait-stopped, start, wait-healthy)
    roundSteps(round, m.name).forEach((s, i) => steps.push(i < done ? { ...s, status: 'done' } : s));
    delete m.phase;
  }
  const minor = /v2store-fix-(\d+\.\d+)\.json$/.exec(file)?.[1] ?? '3.5';
  return { ...old, version: 2, source: minor, target: minor, steps, round, checks: old.checks ?? [] };
}

/** An unfinished fix of this cluster (a re-run finishes it before anything else). */
export function unfinishedV2Fix(dataDir: string, key: string, minor = '3.5'): V2FixFile | undefined {
  const j = readV2Fix(v2FixPath(dataDir, key, minor));
  return j && j.status !== 'done' ? j : undefined;
}
