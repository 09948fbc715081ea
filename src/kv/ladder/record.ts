/** The ladder's own record (kv/ladders/KEY.json): which hops are done, the resume it allows, its lock; and the shapes of its report. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OpsError } from '../../core/errors.js';
import { acquireLock } from '../upgrade/lock.js';
import { type RehearsalAccount, type UpgradeOptions, type UpgradeReport } from '../upgrade/options.js';
import { type ResumeState } from '../journal/resume-state.js';
import { journalsDir } from '../journal/journal.js';
import type { CheckRow } from '../rules/types.js';
import type { JudgedReads, RehearsalVerdict } from '../rehearsal/clone.js';

export interface LadderOptions extends Omit<UpgradeOptions, 'to' | 'allowSameVersion' | 'targetBin' | 'confirm'> {
  to: string;
  /** Binaries per hop target (`--target-bin 3.4=DIR`); `*` for a one-hop `--target-bin DIR`. */
  targetBins: Record<string, string>;
  /** Refuse while any check could not run. */
  strict: boolean;
  /** The release cache (kv release get), when this build has one: the directory of a version's binaries. */
  releaseDir?: (version: string) => string | undefined;
  confirm?: UpgradeOptions['confirm'];
  /** Before the 3.5 → 3.6 hop: the guide's fix for members whose `etcdutl check v2store` fails (v2store-fix.ts). */
  fixV2store?: boolean;
  /** Seconds a trial start of a hop's binary may take to serve /health (src/kv/trial). */
  trialTimeoutS?: number;
  /** Rules whose refusals are shown as warnings instead (`--ignore-check ID`): the operator's own judgement, said on the plan. */
  ignoreChecks?: string[];
  /** --allow-same-version: a rolling restart onto `to`, the members' own minor (a hop from `to` to `to`, proven like any). */
  sameVersion?: boolean;
  /** Members the operator lets be stopped without their trials (`--skip-trial M,… --skip-reason WHY`): said on the plan, kept in the journal and the report. */
  skipTrial?: SkipTrial;
  /**
   * The whole plan rehearsed on a clone of the cluster before the first stop (kv/rehearsal), by opsctl
   * itself: the port that runs it with each hop's binaries, built by the command. Absent: not rehearsed.
   */
  rehearse?: (bins: Record<string, string | undefined>, how?: RehearseHow) => Promise<RehearsalVerdict>;
  /** --rehearse: the rehearsal alone (with --dry-run: nothing is changed after it). */
  rehearseOnly?: boolean;
  /** --rehearsal-valid: how long a passed verdict of the same plan is reused (0: never; default 12 h). */
  rehearsalValidMs?: number;
  /** The most the rehearsal's copy may read with every member paused (bytes; rehearsal/copy-size.ts). */
  rehearsalMaxCopy?: number;
  /** This run is the rehearsal, inside the clone: no trials (the clone's own starts are the proof). */
  inClone?: boolean;
  /** Inside the clone: what the run that rehearses read of the same data for its plan, by hop (rehearsal/clone.ts JUDGED). */
  judged?: Promise<JudgedReads | undefined>;
}

/** How a rehearsal runs: what ends it, what the run that rehearses tells its clone (rehearsal/clone.ts JUDGED), who hears its copy is whole. */
export interface RehearseHow {
  signal?: AbortSignal;
  judged?: Promise<string | undefined>;
  copied?: () => void;
}

/** Where each hop's binaries come from: the driver's own, --target-bin, the release cache, the running one (a restart), and how a version is asked. */
export type BinarySources = 'cluster' | 'driver' | 'exec' | 'targetBins' | 'releaseDir' | 'sameVersion';
/** What the trial starts read: the driver that runs them, the members, how to reach them, how long one may take, the journal of a member stopped. */
export type Trying = 'driver' | 'cluster' | 'session' | 'debug' | 'dataDir' | 'trialTimeoutS';
/** The operator's word over the rulebook: the rules whose refusals are warnings (--ignore-check), the members stopped unproven (--skip-trial). */
export type Overrides = 'ignoreChecks' | 'skipTrial';
/** How the ladder judges a hop's rows: the operator's overrides, the v2 fix planned, --strict. */
export type Judging = Overrides | 'fixV2store' | 'strict';

/** `--skip-trial MEMBER,… --skip-reason WHY`: the members stopped unproven, by the operator's own choice. */
export interface SkipTrial {
  members: string[];
  reason: string;
}

export interface HopReport {
  from: string;
  to: string;
  patch: boolean;
  status: 'pending' | 'running' | 'done' | 'halted';
  binDir?: string;
  binaryVersion?: string;
  /** The hop's executor journal, kept when the hop is done. */
  journal?: string;
  report?: UpgradeReport;
}

export interface LadderReport {
  kind: 'ladder';
  status: 'planned' | 'declined' | 'done' | 'halted' | 'nothing-to-do';
  cluster: string;
  from: string;
  to: string;
  resumed: boolean;
  ladderFile?: string;
  hops: HopReport[];
  checks: CheckRow[];
  planText: string;
  warnings: string[];
  /**
   * The trial starts before the first stop: how many ran, and the wall time they took (at once); viaData: the
   * settings trials proven by the data trial's start of the same binary and settings (no start of their own);
   * reused: verdicts of the run this one resumes that stand (ladder/proofs.ts); onTarget: members on the hop's
   * target already, not tried.
   */
  trials?: { starts: number; ran: number; refused: number; ms: number; viaData?: number; reused?: number; onTarget?: number; rehearsed?: number };
  halt?: { hop: string; reason: string; rollback?: string };
  /** The rehearsal this run ran before its first stop (kv/rehearsal), where one ran now (`rehearsal` in a clone's own report is its load). */
  rehearsed?: RehearsalAccount;
  /** A resume: the hops done, the hop in flight (its members done and left), the hops left. */
  resume?: LadderResume;
}

export interface LadderResume {
  ladderFile: string;
  stopped: string;
  hopsDone: string[];
  hop: string;
  members?: ResumeState;
  hopsLeft: string[];
}

/** The ladder file: the hops, the current one, and what was measured before the v2 API went off. */
export interface LadderFile {
  version: 1;
  id: string;
  cluster: string;
  from: string;
  to: string;
  status: 'running' | 'halted' | 'interrupted' | 'done';
  current: number;
  hops: Array<{
    from: string;
    to: string;
    patch: boolean;
    status: HopReport['status'];
    binDir?: string;
    binaryVersion?: string;
    journal?: string;
    /** The snapshot taken before the hop's first stop (`kv restore --from-hop FROM` rebuilds the cluster on FROM from it). */
    restorePoint?: { file: string; revision: string; sha256?: string; keys?: number };
  }>;
  v2?: { bytes: number; on: string };
  createdAt: string;
  updatedAt: string;
  halt?: LadderReport['halt'];
  /** The run that holds (or last held) the ladder: a resume after its kill -9 waits for its lock to go stale. */
  owner?: { pid: number; host: string };
}

/** Whether a run of `--to` goes through the ladder (more than one hop, or a hop already recorded). */
export function ladderDir(dataDir: string, key: string): string {
  return join(journalsDir(dataDir), `${key}.ladder`);
}

export function ladderPath(dataDir: string, key: string): string {
  return join(ladderDir(dataDir, key), 'ladder.json');
}

export function readLadder(file: string): LadderFile | undefined {
  if (!existsSync(file)) return undefined;
  let j: LadderFile;
  try {
    j = JSON.parse(readFileSync(file, 'utf8')) as LadderFile;
  } catch (err) {
    throw new OpsError(`the kv ladder file ${file} cannot be used: ${(err as Error).message}`, 1, {
      code: 'journal_invalid',
      hint: `it was not changed. Check the cluster with opsctl kv status; if no upgrade is half-done, move it aside (mv ${file} ${file}.bad) and run the command again`,
    });
  }
  if (j.version !== 1 || !Array.isArray(j.hops) || typeof j.current !== 'number' || typeof j.to !== 'string') {
    throw new OpsError(`the kv ladder file ${file} cannot be used: not a ladder (version, hops, current, to)`, 1, {
      code: 'journal_invalid',
      hint: `move it aside (mv ${file} ${file}.bad) once no upgrade is half-done, and run the command again`,
    });
  }
  return j;
}

/** The ladder's lock: the journal's lock rule (executor.ts acquireLock) with the owner the ladder file records. */
export function lockLadder(file: string, o: Pick<LadderOptions, 'lockStaleMs' | 'reporter'>): Promise<() => Promise<void>> {
  return acquireLock(file, o, (f) => {
    try {
      return readLadder(f)?.owner;
    } catch {
      return undefined;
    }
  });
}
