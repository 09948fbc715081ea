import { createHash, randomBytes } from 'node:crypto';
import type { HashCheck } from '../cluster/hashkv.js';
import { closeSync, fdatasyncSync, fsyncSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { checkOwnFileSync } from '../../core/local-file.js';
import { lockFile } from '../../core/lock.js';
import { MEMBER_STEPS, type FinalKind, type MemberPlan, type StepKind, type UpgradePlan } from '../cluster/types.js';
import { promised } from '../../core/promised.js';

export type StepStatus = 'pending' | 'running' | 'done' | 'failed' | 'skipped';

export interface JournalStep {
  id: string;
  member?: string;
  kind: StepKind | FinalKind;
  status: StepStatus;
  startedAt?: string;
  finishedAt?: string;
  ms?: number;
  /** The part of `ms` the cluster itself imposed (a process stopping, a member becoming healthy, settling). */
  imposedMs?: number;
  detail?: string;
  error?: string;
  /**
   * A start of a cycle with a data copy: the member's WAL right before it (kv/wal/wal-mark.ts), or why it was
   * not read; --on-failure rollback puts the copy back only over a WAL the start left as it was.
   */
  walBefore?: { digest: string; text: string } | { why: string };
}

export interface Journal {
  version: 1;
  id: string;
  cluster: string;
  source: string;
  target: string;
  allowSameVersion: boolean;
  status: 'running' | 'halted' | 'interrupted' | 'done' | 'rolling-back' | 'rolled-back';
  createdAt: string;
  updatedAt: string;
  owner: { pid: number; host: string };
  /** The plan as first computed (member order may adapt to where the leader is). */
  members: MemberPlan[];
  /** Per member: what it ran before (for roll-back). */
  previous: Record<string, { version: string; binDir?: string }>;
  target_bin?: string;
  /** A downgrade (kv downgrade, etcd 3.6's downgrade API): kv upgrade does not resume it, nor it an upgrade. */
  downgrade?: boolean;
  steps: JournalStep[];
  /** The snapshot taken before each member's stop; `from`: the member that served it (the leader, as the guides take it). */
  snapshots: Array<{
    member: string;
    file: string;
    revision: string;
    bytes: number;
    from?: string;
    sha256?: string;
    /** When the file was removed as the run finished (the restore point is kept: upgrade/backup-guard.ts, dropSnapshots). */
    removed?: string;
  }>;
  halt?: { step: string; reason: string; rollback: string };
  /** Every KV hash comparison of the run (hashkv.ts): before the first stop and after each member. */
  consistency?: HashCheck[];
  /** The v2 store as measured before 3.4 turned the v2 API off (the ladder's figure): later settles use it. */
  v2?: { bytes: number; on: string };
  /** --defrag: each member's db size (bytes) before and after its defragmentation. */
  defrag?: Array<{ member: string; before?: number; after?: number }>;
  /** Once the hop is done: what became of each member's data-dir copy (removed, what it freed; or kept, where). */
  copies?: BackupFate[];
  /** Every data-dir copy the run made or began, in order, each under its own {run} (see DataCopy). */
  dataCopies?: DataCopy[];
  /**
   * --on-failure rollback under way: the member being put back, and whether its data dir is back already
   * (a resume finishes the put-back first, without restoring twice: the failed dir kept beside it stays).
   */
  puttingBack?: {
    member: string;
    step: string;
    reason: string;
    restored: boolean;
    data?: string;
    /** Whether its copy goes back (decided once, before anything is restored: a resume follows it), and why. */
    copy?: { putBack: boolean; why: string };
  };
  /** Roll-back progress: each member as it is brought back (written after each one). */
  rollback?: Array<{ member: string; to: string; at: string; ms: number }>;
  /**
   * kv rollback's member cycles (kv/upgrade/cycle.ts): `rollback/<member>/<kind>`, planned when the roll-back
   * begins, written ahead of each stop and start. A journal of an older opsctl's roll-back has none.
   */
  rollbackSteps?: JournalStep[];
}

/** What became of a member's data-dir copy once its hop was done. */
export interface BackupFate {
  member: string;
  removed: boolean;
  detail: string;
  /** The copy's {run} (absent in a journal of an older opsctl: the run's id). */
  run?: string;
}

/**
 * One data-dir copy of a member, recorded before it is made: its {run}, the run's id for a member's first
 * copy and `ID.2`, `ID.3` … for each later one (a resume after --on-failure rollback, a copy begun again
 * after a kill, a second round of the v2store fix). A backup template shaped like the docs'
 * (`cp -a DIR DIR.bak-{run}`) then never copies into an earlier attempt's copy, and the put-back restores
 * the copy of its own attempt, never an older one.
 */
export interface DataCopy {
  member: string;
  run: string;
  /** copying: begun (a kill may have left part of it); done: made, the backup step's detail below; removed: a failed copy opsctl removed. */
  status: 'copying' | 'done' | 'removed';
  at: string;
  detail?: string;
  /** A copy on the member's host (the backup template's): where, and its size there as `du` counted it, or why it is not known. */
  path?: string;
  /** The member's host, for a copy there (undefined: under opsctl's data directory). */
  host?: string;
  bytes?: number;
  sizeUnknown?: string;
}

/** A stable key for a cluster: its sorted endpoints, hashed. */
export function clusterKey(endpoints: string[]): string {
  return createHash('sha256')
    .update([...endpoints].sort().join(','))
    .digest('hex')
    .slice(0, 12);
}

/** The folder of every kv record under opsctl's data directory: each cluster's journal and the records beside it. */
export function journalsDir(dataDir: string): string {
  return join(dataDir, 'kv', 'journals');
}

/** A cluster's upgrade journal (`<cluster>.json` in journalsDir): the one place its path is built. */
export function journalPath(dataDir: string, key: string): string {
  return join(journalsDir(dataDir), `${key}.json`);
}

export function newJournal(
  key: string,
  plan: UpgradePlan,
  previous: Journal['previous'],
  opts: { allowSameVersion: boolean; targetBin?: string; now: number },
): Journal {
  const now = new Date(opts.now).toISOString();
  const steps: JournalStep[] = [];
  for (const m of plan.members) {
    if (m.action === 'skip') continue;
    for (const kind of MEMBER_STEPS) {
      steps.push({ id: `${m.name}/${kind}`, member: m.name, kind, status: 'pending' });
    }
  }
  steps.push({ id: 'cluster/wait-cluster-version', kind: 'wait-cluster-version', status: 'pending' });
  steps.push({ id: 'cluster/final-health', kind: 'final-health', status: 'pending' });
  return {
    version: 1,
    id: `${new Date(opts.now).toISOString().replace(/[-:]/g, '').slice(0, 15)}-${randomBytes(3).toString('hex')}`,
    cluster: key,
    source: plan.source,
    target: plan.target,
    allowSameVersion: opts.allowSameVersion,
    status: 'running',
    createdAt: now,
    updatedAt: now,
    owner: { pid: process.pid, host: hostname() },
    members: plan.members,
    previous,
    target_bin: opts.targetBin,
    steps,
    snapshots: [],
  };
}

/** A record written the journal's way (a run's journal, the ladder file, a fix's record): its own shape, stamped when written. */
export interface JournalRecord {
  updatedAt: string;
}

/**
 * Atomic write (temp file + rename): a crash of opsctl leaves the old or the new journal, never half
 * of one. `durable` also makes it survive an OS crash or power loss: the temp file's data is synced
 * before the rename and the directory after it (without that, a filesystem may persist the rename
 * but not the data: an empty journal). The executor asks for it before every member-changing step
 * (stop, start: the write-ahead record a resume depends on) and when a run ends; the other steps
 * are re-runnable, so their results may ride along with the next durable write. Only the record
 * before a stop needs it: a lost "start" record re-runs a start that finds the member running.
 */
export function writeRecord(
  file: string,
  j: JournalRecord,
  now: number,
  { durable = true, trace }: { durable?: boolean; trace?: (line: string) => void } = {},
): Promise<void> {
  // (the cluster's key left out of the file's name: the same state of another sandbox says the same)
  const point = trace ? ` ${basename(file).replace(/^[0-9a-f]{12}(?=\.)/, 'KEY')} ${journalDigest(j)}` : '';
  trace?.(`[kv] point: before journal${point}`);
  return promised(() => {
    const t0 = performance.now();
    j.updatedAt = new Date(now).toISOString();
    const dir = dirname(file);
    // a journal that is a link, or not the user's own, is refused for writing as for reading (core/local-file.ts)
    checkOwnFileSync(file, 'the upgrade journal');
    const text = `${JSON.stringify(j, null, 2)}\n`;
    const tmp = `${file}.${process.pid}.tmp`;
    // Synchronous on purpose: a few small syscalls in a row, nothing else runs meanwhile, and each
    // trip through the libuv thread pool costs more than the write itself on a busy machine.
    let fd: number;
    try {
      fd = openSync(tmp, 'w', 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      fd = openSync(tmp, 'w', 0o600);
    }
    try {
      writeSync(fd, text);
      if (durable) fdatasyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
    if (durable) {
      const d = openSync(dir, 'r');
      try {
        fsyncSync(d);
      } finally {
        closeSync(d);
      }
    }
    journalStats.writes++;
    journalStats.ms += performance.now() - t0;
  }).then(() => trace?.(`[kv] point: after journal${point} (changes)`));
}

/** A run's journal, written the journal's way (writeRecord). */
export function writeJournal(file: string, j: Journal, now: number, how: { durable?: boolean; trace?: (line: string) => void } = {}): Promise<void> {
  return writeRecord(file, j, now, how);
}

/**
 * A journal's state in a word per part, for the crash-point lines: its status, and each step's (or a
 * ladder's hops', or a fix's members') status by its first letter. Two writes of the same state say the same.
 */
export function journalDigest(j: object): string {
  const r = j as {
    status?: string;
    steps?: Array<{ status: string }>;
    hops?: Array<{ status: string }>;
    current?: number;
    members?: Array<{ phase?: string }>;
    rollback?: unknown[];
    rollbackSteps?: Array<{ status: string }>;
  };
  const letters = (xs: Array<{ status?: string; phase?: string }>) => xs.map((x) => (x.status ?? x.phase ?? '?').slice(0, 2)).join('.');
  const parts = [r.status ?? '?'];
  if (r.steps) parts.push(letters(r.steps));
  if (r.hops) parts.push(`hop${r.current ?? '?'}`, letters(r.hops));
  else if (r.members && r.members.some((m) => m.phase)) parts.push(letters(r.members));
  if (r.rollback) parts.push(`back${r.rollback.length}`);
  if (r.rollbackSteps) parts.push(letters(r.rollbackSteps));
  return parts.join(':');
}

/** How many journal writes a run made and how long they took (for --debug). */
export const journalStats = { writes: 0, ms: 0 };

/** Whether a journal is unfinished business: a re-run resumes it. */
export function isResumable(j: Journal | undefined): j is Journal {
  return Boolean(j && (j.status === 'running' || j.status === 'halted' || j.status === 'interrupted'));
}

/** Members whose start step ran (they may run the target now). */
export function startedMembers(j: Journal): string[] {
  return [...new Set(j.steps.filter((s) => s.kind === 'start' && s.status !== 'pending').map((s) => s.member!))];
}

/** Members the upgrade stopped (they may be down, or run the target now). */
export function touchedMembers(j: Journal): string[] {
  return [...new Set(j.steps.filter((s) => s.kind === 'stop' && s.status !== 'pending').map((s) => s.member!))];
}

/** The member an interrupted run stopped and has not yet seen healthy again (its wait-healthy not done), if any. */
export function memberUnproven(j: Journal): string | undefined {
  return unprovenOf(j.steps) ?? unprovenOf(j.rollbackSteps ?? []);
}

/** Of a list of steps (an upgrade's, a cycle's): the member stopped and not yet seen healthy again, if any. */
export function unprovenOf(steps: JournalStep[]): string | undefined {
  for (const group of cycles(steps)) {
    const stop = group.find((s) => s.kind === 'stop');
    const back = group.find((s) => s.kind === 'wait-healthy');
    if (stop && stop.status !== 'pending' && back && back.status !== 'done' && back.status !== 'skipped') return back.member;
  }
  return undefined;
}

/** Steps grouped by the cycle they belong to (the id without its last part: `kv1`, `rollback/kv1`), in order. */
export function cycles(steps: JournalStep[]): JournalStep[][] {
  const by = new Map<string, JournalStep[]>();
  for (const s of steps) {
    if (!s.member) continue;
    const key = s.id.slice(0, s.id.lastIndexOf('/'));
    by.set(key, [...(by.get(key) ?? []), s]);
  }
  return [...by.values()];
}

/**
 * The member a resume may find down or not (yet) healthy: the one between its stop and a finished start,
 * else the one started but not yet seen healthy, else the one --on-failure rollback was putting back.
 */
export function memberMayBeDown(j: Journal): string | undefined {
  return memberInFlight(j) ?? memberUnproven(j) ?? j.puttingBack?.member;
}

/** The member an interrupted run left between "stop" and a finished "start", if any. */
export function memberInFlight(j: Journal): string | undefined {
  return inFlightOf(j.steps) ?? inFlightOf(j.rollbackSteps ?? []);
}

/** Of a list of steps (an upgrade's, a cycle's): the member between its stop and a finished start, if any. */
export function inFlightOf(steps: JournalStep[]): string | undefined {
  for (const group of cycles(steps)) {
    // (a journal missing either step is not one this tool wrote: its validation refuses it, this only reads)
    const stop = group.find((s) => s.kind === 'stop');
    const start = group.find((s) => s.kind === 'start');
    if (stop && stop.status !== 'pending' && start?.status !== 'done') return stop.member;
  }
  return undefined;
}

/**
 * The upgrade lock: one upgrade, roll-back or restore per cluster at a time, across processes (opsctl's one
 * file lock, core/lock.ts). A live holder refuses it at once (an OpsError with code `locked`, after half a
 * second in which a process that is only choosing its place may finish); the lock of a run that died on
 * this host is taken over at once, told through `notice`; one on another host (a shared data directory)
 * once it has gone `staleMs` without its heartbeat.
 */
export async function lockJournal(file: string, staleMs: number, notice?: (text: string) => void): Promise<() => Promise<void>> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  return lockFile(file, { what: 'the kv journal', staleMs, waitMs: LIVE_HOLDER_WAIT_MS, ...(notice ? { notice } : {}) });
}

/** How long the upgrade lock waits for a live holder before refusing (no notice: it is under LOCK_WAIT_NOTICE_MS). */
const LIVE_HOLDER_WAIT_MS = 500;
