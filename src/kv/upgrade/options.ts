/**
 * What an upgrade run is given, in three parts a step can name: the target (what changes: the cluster,
 * the version, where the records go), the ports (how it acts and shows itself: the session, the
 * driver, the clock, the reporter) and the policy (how patient and careful: timeouts, snapshots,
 * backups, what a failure does). And what it gives back: the report.
 */
import { OpsError } from '../../core/errors.js';
import type { ClusterSpec } from '../cluster/cluster-file.js';
import type { MemberDriver } from '../drivers/driver.js';
import type { KvSession } from '../cluster/session.js';
import type { BackupFate, Journal, JournalStep } from '../journal/journal.js';
import type { MemberListEntry } from '../cluster/parse.js';
import type { UpgradePlan } from '../cluster/types.js';
import type { CheckRow } from '../rules/types.js';
import type { ResumeState } from '../journal/resume-state.js';
import type { TrialProof } from '../journal/runs.js';
import type { HashCheck } from '../cluster/hashkv.js';
import type { RestorePoint } from './restore-point.js';
import type { SnapshotShelf } from '../snapshot/shelf.js';

type Exec = typeof import('execa').execa;

/** A member that never becomes healthy on the target: halt there, or put it back on its old binary and data first. */
export type OnFailure = 'halt' | 'rollback';

export interface Timeouts {
  /** One HTTP request to a member. */
  requestMs: number;
  /** A stopped member's process must be gone within this. */
  stopMs: number;
  /** A started member must be healthy, the cluster healthy and the member caught up within this. */
  healthyMs: number;
  /** The cluster version must reach the target within this after the last member. */
  clusterVersionMs: number;
  snapshotMs: number;
  /** Between polls. */
  pollMs: number;
}

export const DEFAULT_TIMEOUTS: Timeouts = { requestMs: 3000, stopMs: 60_000, healthyMs: 120_000, clusterVersionMs: 120_000, snapshotMs: 120_000, pollMs: 250 };

/** Shows progress of one step (a spinner on a TTY, a line per step when piped). */
export interface StepReporter {
  begin(text: string): { update(text: string): void; done(text: string): void; fail(text: string): void };
  note(text: string): void;
}

/** What the run changes: the cluster, the version it goes to, and where its records are kept. */
export interface UpgradeTarget {
  cluster: ClusterSpec;
  to: string;
  allowSameVersion: boolean;
  targetBin?: string;
  /** etcd 3.6's downgrade, enabled by kv downgrade before this run: the members go from the next minor down to `to`. */
  downgrade?: boolean;
  /** Where journals, snapshots and backups go (opsctl's data dir). */
  dataDir: string;
  /** The exact command that rolls back this cluster (printed when halting). */
  rollbackCommand: string;
  /** The v2 store measured while the v2 API was on (the ladder, before 3.3 → 3.4): kept in the journal for --settle auto. */
  v2Measured?: { bytes: number; on: string };
  /** The hop's rulebook as checked before this run (kept in the journal for the report). */
  checks?: CheckRow[];
  /** The trials that passed before this run's first stop (kept in the journal: a resume of the run may stand on them, ladder/proofs.ts). */
  proofs?: TrialProof[];
  /**
   * Called once every member runs the target, as the wait for the cluster version begins (etcd's leader
   * raises it on its own clock, seconds): the ladder reads the next hop's settings meanwhile; a clone's run
   * hands its leadership off (kv/rehearsal/hand-off.ts), and the wait ends only with it. `to`: the version waited for.
   */
  atClusterVersionWait?: (to: string) => Promise<void> | undefined;
  /**
   * The plan shows the summary and `checks` (a one-hop kv upgrade): each finding once, inside the plan,
   * with `notes` after them (settle, trials); `strict` as --strict judges what blocks.
   */
  shownChecks?: { notes: string[]; strict: boolean };
}

/** How the run acts on the world and shows itself. */
export interface UpgradePorts {
  /** How to reach the cluster (TLS, auth, one pool), from the verb that resolved it. */
  session: KvSession;
  /** How members are stopped, started and backed up (absent: the plan only). */
  driver?: MemberDriver;
  exec: Exec;
  signal: AbortSignal;
  now: () => number;
  reporter: StepReporter;
  /**
   * Asked after the plan is shown and before anything changes (the terminal prompt, --yes); false:
   * the run ends as 'declined' with nothing changed. Absent: no question (the library's own callers).
   */
  confirm?: (c: { target: string; planText: string; warnings: string[]; members: number; resuming: boolean }) => Promise<boolean>;
  debug?: (line: string) => void;
  /** A snapshot of the leader a check took before the first stop, kept for that stop's own while nothing is committed since (snapshot/shelf.ts). */
  shelf?: SnapshotShelf;
}

/** Where --backup-to uploads a verified snapshot FILE (NAME under its prefix); resolves to the object's s3:// URL. */
export interface OffsiteUploader {
  url: string;
  upload(file: string, name: string, facts: { bytes: number; sha256: string; revision: string; run: string; label: string }): Promise<string>;
}

/** How patient and careful the run is, and what a failure does. */
export interface UpgradePolicy {
  timeouts: Timeouts;
  /** 'auto' or milliseconds. */
  settle: 'auto' | number;
  dryRun: boolean;
  snapshotVia: 'auto' | 'etcdctl' | 'gateway';
  etcdctl?: string;
  /**
   * --backup-to s3://…: each snapshot before a stop (the hop's restore point first) also uploaded there,
   * streamed and verified on the store, before the member stops; a failed upload halts like a failed snapshot.
   */
  offsite?: OffsiteUploader;
  /** The data dirs are not backed up (the command driver without a backup template: said on the plan). */
  noBackup?: boolean;
  /**
   * No snapshot before each stop: the rehearsal's own run on its clone (kv/rehearsal), whose way back is the
   * cluster it was copied from. Every other step runs as on the cluster.
   */
  noSnapshot?: boolean;
  /**
   * Keep each member's data-dir copy after its hop is done (by default it goes then: the hop's verified
   * restore point is the way back once the hop is done; a copy is the way back only while the hop is mixed).
   */
  keepBackups?: boolean;
  /** A member that never becomes healthy on the target: halt there (default), or put it back first. */
  onFailure?: OnFailure;
  /** Defragment each member (etcd's maintenance Defragment) right before its snapshot, showing the space freed. */
  defrag?: boolean;
  /** How long the lock of a run on another host (a shared data directory) may go without its heartbeat before it is taken over (ms); a run on this host is judged by its pid. */
  lockStaleMs?: number;
}

/** The whole of it, as the verbs build it; each step names the part it reads (`Pick<UpgradeOptions, …>`). */
export type UpgradeOptions = UpgradeTarget & UpgradePorts & UpgradePolicy;

export interface UpgradeReport {
  status: 'planned' | 'declined' | 'done' | 'halted' | 'interrupted' | 'nothing-to-do';
  cluster: string;
  source: string;
  target: string;
  journal?: string;
  /** The journal's run id (its backups are named by it). */
  run?: string;
  /** The directory of the target's binaries the starts use ({bin}), where one is known. */
  targetBin?: string;
  resumed: boolean;
  plan: UpgradePlan['members'];
  planText: string;
  /** What the plan says out loud: a 1- or 2-member cluster loses quorum on each restart; --no-backup. */
  warnings: string[];
  /** What became of the data-dir copies once the hop was done: removed (what each freed), or kept and where. */
  copies?: BackupFate[];
  /** Every data-dir copy of the run, each under its own {run}. */
  dataCopies?: Journal['dataCopies'];
  steps: JournalStep[];
  snapshots: Journal['snapshots'];
  totals: { ms: number; imposedMs: number; overheadMs: number; overheadRatio: number | null };
  halt?: Journal['halt'];
  /** A resume: what was done and what was left when it began. */
  resume?: ResumeState;
  /** The KV hash comparisons (HashKV) of the run: before the first stop and after each member. */
  consistency?: HashCheck[];
  /** --defrag: each member's db size before and after its defragmentation. */
  defrag?: Journal['defrag'];
  /** The rehearsal this run ran before its first stop (kv/rehearsal), where one ran now (`rehearsal` in a clone's own report is its load). */
  rehearsed?: RehearsalAccount;
}

/**
 * A rehearsal's account in a run's report: its own wall time from its start (beside the checks) to its verdict,
 * the copy's part of it, and what its load saw.
 */
export interface RehearsalAccount {
  ms: number;
  copyMs: number;
  writes?: { acked: number; lost: number };
  probes?: number;
}

/** What the report of a run says before any step: the cluster, the hop, the plan and its warnings, the resume. */
export type Base = Pick<UpgradeReport, 'cluster' | 'source' | 'target' | 'planText' | 'warnings' | 'plan' | 'resumed' | 'resume' | 'targetBin'>;

/** Pre-flight said no: nothing was changed. Exit 1 with every reason (also as a list in --json), titled by the verb that was refused. */
export class UpgradeRefused extends OpsError {
  /** `lines`: what the message lists when it differs from `reasons` (a plan above already showed each reason whole). */
  constructor(
    readonly reasons: string[],
    hint: string,
    verb: 'upgrade' | 'downgrade' = 'upgrade',
    lines: string[] = reasons,
  ) {
    super(`${verb} refused before any change:\n  - ${lines.join('\n  - ')}`, 1, { code: 'preflight', hint });
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), reasons: this.reasons };
  }
}

export function totals(steps: JournalStep[], wallMs: number): UpgradeReport['totals'] {
  const imposedMs = steps.reduce((n, s) => n + (s.imposedMs ?? 0), 0);
  return { ms: wallMs, imposedMs, overheadMs: wallMs - imposedMs, overheadRatio: imposedMs > 0 ? (wallMs - imposedMs) / imposedMs : null };
}

export function fmtMs(ms: number): string {
  return ms < 1000 ? `${ms} ms` : ms < 120_000 ? `${(ms / 1000).toFixed(1)} s` : `${(ms / 60_000).toFixed(1)} min`;
}

/**
 * What a step body is given: the part of the options it reads (K, named in its signature), the driver,
 * the journal and what the pre-flight found. Each step returns the detail line for the journal and the report.
 */
export interface StepEnv<K extends keyof UpgradeOptions = keyof UpgradeOptions, J extends RunRecord = Journal> {
  o: Pick<UpgradeOptions, K>;
  driver: MemberDriver;
  journal: J;
  /** etcdctl to use for snapshots of real etcd, if any. */
  etcdctl?: string;
  real: boolean;
  /** The cluster's member list at pre-flight: every gate compares the list with it. */
  membership: MemberListEntry[];
  /** Writes the journal as it stands (before a long wait, so a crash in it resumes after it). */
  checkpoint: () => Promise<void>;
}

/**
 * What a step reads of the record it runs under (an upgrade's journal, the v2store fix's): the run's id
 * (its snapshots and backups are named by it), its hop, the snapshots kept and the restore point.
 */
export interface RunRecord {
  id: string;
  source: string;
  target: string;
  snapshots: Journal['snapshots'];
  restorePoint?: RestorePoint;
  /** The data-dir copies, each under its own {run} (journal/journal.ts DataCopy). */
  dataCopies?: Journal['dataCopies'];
}

/** What a question to one member reads: the session (TLS, auth), how long to wait for its answer, the debug log. */
export type Reach = 'session' | 'timeouts' | 'debug';
/** What a look at the members reads: who they are, and how to reach each. */
export type Look = 'cluster' | Reach;
/** What a snapshot of a member takes (the v3 membership facts read one): how to reach it, how long, and which client saves it. */
export type Snapshotting = 'session' | 'timeouts' | 'snapshotVia' | 'etcdctl' | 'exec' | 'shelf';
/** What a wait reads besides a look: the clock and the signal that ends it. */
export type Waits = Look | 'now' | 'signal';
/** Where the members go: the version, a restart onto their own (--allow-same-version), etcd 3.6's downgrade. */
export type Destination = 'to' | 'targetBin' | 'allowSameVersion' | 'downgrade';
/** The way back a refusal names: the command that rolls this cluster back. */
export type WayBack = 'rollbackCommand';
/** What the data-dir backups' room reads: the driver that takes them, where they go, whether there are any, how long they live. */
export type BackupRoom = 'cluster' | 'driver' | 'dataDir' | 'noBackup' | 'keepBackups';
/** What the proof before the stops reads: the hop's rulebook as checked, and how the plan showed it. */
export type Proof = 'checks' | 'shownChecks';
/** The operator's say: --dry-run (the plan only) and the question before anything changes. */
export type Say = 'dryRun' | 'confirm';
/** What the plan's own lines read besides the above: the settle, --defrag, the etcdctl for HashKV. */
export type PlanLines = 'settle' | 'defrag' | 'etcdctl';
/** What a run keeps in its journal besides the plan: the binary given (--target-bin), the hop's rulebook as checked and the trials that passed, the v2 store measured. */
export type Kept = 'targetBin' | 'checks' | 'proofs' | 'v2Measured';
/** How a member's snapshot is taken and where else it goes: the client that saves it (--snapshot-via, etcdctl, the process runner), --backup-to. */
export type Snapshots = 'snapshotVia' | 'etcdctl' | 'exec' | 'offsite' | 'noSnapshot' | 'shelf';
/** What a run reads once the plan is agreed: the waits, where the members go, the way back, the backups, the snapshots, the settle and --defrag, what a failure does, the journal's own records. */
export type Running = Waits | Destination | WayBack | BackupRoom | Kept | Snapshots | PlanLines | 'reporter' | 'onFailure' | 'atClusterVersionWait';
