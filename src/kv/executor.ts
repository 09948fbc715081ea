import { hostname } from 'node:os';
import { join } from 'node:path';
import { InterruptedError, OpsError } from '../core/errors.js';
import type { ClusterSpec, MemberSpec } from './cluster.js';
import type { MemberDriver, MemberTarget } from './drivers/driver.js';
import type { KvSession } from './session.js';
import { isResumable, journalStats, lockJournal, memberInFlight, newJournal, writeJournal, type Journal, type JournalStep } from './journal.js';
import { checkClusterConfig } from './config-check.js';
import { readJournal } from './journal-read.js';
import { checkJournalPlan } from './journal-plan.js';
import { authEnabled, observeCluster } from './observe.js';
import { compareMinor, minor } from './parse.js';
import { putMemberBack, type OnFailure } from './on-failure.js';
import { describePlan, leaderIds, nextMember, planUpgrade } from './planner.js';
import { findEtcdctl } from './snapshot.js';
import { KvClient } from './client.js';
import {
  backupStep,
  finalHealthStep,
  gateBeforeStop,
  settleStep,
  snapshotStep,
  startStep,
  waitBackStep,
  waitClusterVersionStep,
  waitGoneStep,
  type StepEnv,
} from './steps.js';
import { membershipProblems, readMembership, type Membership } from './membership.js';
import type { MemberListEntry } from './parse.js';
import type { ClusterObservation, UpgradePlan } from './types.js';
import { sleep, WaitAborted } from './wait.js';
import { GateRefused, gateWhileDown, MemberLost } from './gate.js';
import { beginRun, endRun, recordPutBack, signalWords, type JournalWithRuns } from './journal-runs.js';
import type { CheckRow } from './rules/types.js';
import { describeResume, resumeState, type ResumeState } from './resume-state.js';
import { compareHashes, HASHKV_MIN, type HashCheck } from './hashkv.js';
import { defragMember } from './defrag.js';
import { backToPending, describeBackupFailure, spaceBeforeStop, spacePreflight, spaceWarning, startOnPrevious } from './backup-guard.js';

type Exec = typeof import('execa').execa;

export { V2_SETTLE_MS, V2_SETTLE_THRESHOLD } from './steps.js';

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

/** How old the pre-flight's look may be to serve as the first member's gate before its snapshot (never its stop). */
const PREFLIGHT_LOOK_MS = 1000;

export const DEFAULT_TIMEOUTS: Timeouts = { requestMs: 3000, stopMs: 60_000, healthyMs: 120_000, clusterVersionMs: 120_000, snapshotMs: 120_000, pollMs: 250 };

/** Shows progress of one step (a spinner on a TTY, a line per step when piped). */
export interface StepReporter {
  begin(text: string): { update(text: string): void; done(text: string): void; fail(text: string): void };
  note(text: string): void;
}

export interface UpgradeOptions {
  cluster: ClusterSpec;
  /** How to reach the cluster (TLS, auth, one pool), from the verb that resolved it. */
  session: KvSession;
  driver?: MemberDriver;
  dataDir: string;
  to: string;
  allowSameVersion: boolean;
  targetBin?: string;
  /** 'auto' or milliseconds. */
  settle: 'auto' | number;
  dryRun: boolean;
  timeouts: Timeouts;
  snapshotVia: 'auto' | 'etcdctl' | 'gateway';
  etcdctl?: string;
  exec: Exec;
  signal: AbortSignal;
  now: () => number;
  reporter: StepReporter;
  /** The exact command that rolls back this cluster (printed when halting). */
  rollbackCommand: string;
  /** etcd 3.6's downgrade, enabled by kv downgrade before this run: the members go from the next minor down to `to`. */
  downgrade?: boolean;
  /** The data dirs are not backed up (the command driver without a backup template: said on the plan). */
  noBackup?: boolean;
  /** A member that never becomes healthy on the target: halt there (default), or put it back first. */
  onFailure?: OnFailure;
  /**
   * Asked after the plan is shown and before anything changes (the terminal prompt, --yes); false:
   * the run ends as 'declined' with nothing changed. Absent: no question (the library's own callers).
   */
  confirm?: (c: { target: string; planText: string; warnings: string[]; members: number; resuming: boolean }) => Promise<boolean>;
  /** The v2 store measured while the v2 API was on (the ladder, before 3.3 → 3.4): kept in the journal for --settle auto. */
  v2Measured?: { bytes: number; on: string };
  /** Defragment each member (etcd's maintenance Defragment) right before its snapshot, showing the space freed. */
  defrag?: boolean;
  /** How long the lock of a run on another host (a shared data directory) may go without its heartbeat before it is taken over (ms); a run on this host is judged by its pid. */
  lockStaleMs?: number;
  /** The hop's rulebook as checked before this run (kept in the journal for the report). */
  checks?: CheckRow[];
  debug?: (line: string) => void;
}

export interface UpgradeReport {
  status: 'planned' | 'declined' | 'done' | 'halted' | 'interrupted' | 'nothing-to-do';
  cluster: string;
  source: string;
  target: string;
  journal?: string;
  /** The journal's run id (its backups are named by it). */
  run?: string;
  resumed: boolean;
  plan: UpgradePlan['members'];
  planText: string;
  /** What the plan says out loud: a 1- or 2-member cluster loses quorum on each restart; --no-backup. */
  warnings: string[];
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
}

/** Pre-flight said no: nothing was changed. Exit 1 with every reason. */
export class UpgradeRefused extends OpsError {
  constructor(
    readonly reasons: string[],
    hint: string,
  ) {
    super(`upgrade refused before any change:\n  - ${reasons.join('\n  - ')}`, 1, { code: 'preflight', hint });
  }
}

/** The executor: runs (or resumes) the journalled plan, one member at a time. */
export async function runUpgrade(o: UpgradeOptions): Promise<UpgradeReport> {
  const started = o.now();
  const file = join(o.dataDir, 'kv', 'journals', `${o.cluster.key}.json`);
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
    return await execute(o, file, started, first);
  } finally {
    await unlock?.().catch(() => undefined);
  }
}

/**
 * The journal's lock (or the ladder file's: `ownerOf` reads the owner a file records, for the message). A run
 * that died holding it (SIGKILL, a crash) is known by its pid and start time, and its lock is taken over at
 * once with a note (the upgrade's resume and the roll-back after a crash); a live one refuses this run.
 */
export async function acquireLock(
  file: string,
  o: Pick<UpgradeOptions, 'lockStaleMs' | 'reporter'>,
  ownerOf: (file: string) => { pid: number; host: string } | undefined = (f) => safeRead(f)?.owner,
): Promise<() => Promise<void>> {
  try {
    return await lockJournal(file, o.lockStaleMs ?? 4000, (text) => o.reporter.note(text));
  } catch (err) {
    if (!(err instanceof OpsError) || err.code !== 'locked') throw err;
    const owner = ownerOf(file);
    throw new OpsError(`another kv upgrade of this cluster is running${owner ? ` (pid ${owner.pid} on ${owner.host})` : ''}`, 1, {
      code: 'locked',
      hint: 'wait for it to finish, or stop it (a run that died leaves no lock in the way: the next run takes it over)',
    });
  }
}

function safeRead(file: string): Journal | undefined {
  try {
    return readJournal(file);
  } catch {
    return undefined;
  }
}

async function execute(o: UpgradeOptions, file: string, started: number, first: ReturnType<typeof observeCluster>): Promise<UpgradeReport> {
  const journal = resumableJournal(o, file);
  const pre = await preflight(o, file, first, journal);
  o.debug?.(`[kv] pre-flight done after ${o.now() - started} ms`);
  const { plan } = pre;
  const settleText = o.settle === 'auto' ? 'auto' : `${o.settle} ms`;
  const resume = journal ? resumeState(journal, file) : undefined;
  const planText = resume
    ? [`Resuming the upgrade ${resume.hop} recorded in ${file}`, ...describeResume(resume, journal!.target)].join('\n')
    : [
        describePlan(plan, settleText, { noBackup: o.noBackup }),
        ...(o.defrag
          ? ['--defrag: each member is defragmented right before its snapshot (its reads and writes wait while it runs); the space freed is shown']
          : []),
        hashPlanLine(o, pre.obs, plan.source),
      ].join('\n');
  const warnings = planWarnings(pre.membership.list.length, o);
  const base = {
    cluster: o.cluster.key,
    source: plan.source,
    target: plan.target,
    planText,
    warnings,
    plan: journal?.members ?? plan.members,
    resumed: Boolean(journal),
    ...(resume ? { resume } : {}),
  };
  const upgrading = plan.members.filter((m) => m.action !== 'skip');
  if (o.dryRun) return { ...base, status: 'planned', steps: [], snapshots: [], totals: totals([], o.now() - started) };
  if (!journal && upgrading.length === 0 && plan.clusterVersion === plan.target) {
    return { ...base, status: 'nothing-to-do', steps: [], snapshots: [], totals: totals([], o.now() - started) };
  }
  if (!o.driver) {
    throw new OpsError('no way to stop and start members', 2, {
      code: 'no_driver',
      hint: 'use the sandbox (opsctl kv sandbox up), or a cluster file with a driver, or --stop-cmd/--start-cmd/--running-cmd templates',
    });
  }
  o.reporter.note([planText, ...warnings.map((w) => `  ! ${w}`)].join('\n'));
  // Asked before the journal is written: a "no" leaves nothing behind.
  if (o.confirm && !(await o.confirm({ target: plan.target, planText, warnings, members: upgrading.length, resuming: Boolean(journal) }))) {
    return { ...base, status: 'declined', steps: [], snapshots: [], totals: totals([], o.now() - started) };
  }
  await stageBinaries(o, o.driver, upgrading, journal);
  const run = await UpgradeRun.start(o, o.driver, file, started, base, pre, journal);
  return run.go();
}

/**
 * The driver's stage template (the command driver's `stage`): the hop's binary staged on every member
 * still to start, and its version checked, before the first stop: a failure refuses with nothing stopped.
 */
async function stageBinaries(o: UpgradeOptions, driver: MemberDriver, upgrading: Array<{ name: string }>, journal: Journal | undefined): Promise<void> {
  if (!driver.stage) return;
  const todo = upgrading.filter((m) => !journal?.steps.some((s) => s.member === m.name && s.kind === 'start' && s.status === 'done'));
  const p = o.reporter.begin(`stage: the ${o.to} binary on ${todo.length} member(s) before any stop`);
  const reasons: string[] = [];
  const lines: string[] = [];
  for (const pm of todo) {
    const m = o.cluster.members.find((x) => x.name === pm.name)!;
    const target: MemberTarget = { version: o.to, binDir: o.targetBin ?? journal?.target_bin ?? driver.current(m)?.binDir };
    await driver.stage(m, target).then(
      (d) => lines.push(`${m.name}: ${d}`),
      (err: Error) => reasons.push(`member ${m.name}: staging its ${o.to} binary failed: ${err.message}`),
    );
  }
  if (reasons.length) {
    p.fail(`stage: ${reasons.length} of ${todo.length} member(s) failed`);
    throw new UpgradeRefused(
      reasons,
      'nothing was stopped: fix the stage template or the hosts (the staged binary must print its etcd --version), then run the same command',
    );
  }
  p.done(`stage: ${lines.join('; ')}`);
}

/** The recorded run this one resumes, if any (checked when read; one for another target refuses). */
function resumableJournal(o: UpgradeOptions, file: string): Journal | undefined {
  // JournalInvalid names the file and the fix, and the file is never rewritten: never start afresh
  // over a record that may be all that says which members moved.
  const journal = readJournal(file);
  if (!isResumable(journal)) return undefined;
  checkJournalPlan(file, journal, o.cluster.members, o.rollbackCommand);
  if (journal.target !== o.to || journal.allowSameVersion !== o.allowSameVersion || Boolean(journal.downgrade) !== Boolean(o.downgrade)) {
    const verb = journal.downgrade ? 'downgrade' : 'upgrade';
    throw new OpsError(`an unfinished ${verb} to ${journal.target} of this cluster is recorded in ${file}`, 1, {
      code: 'journal_conflict',
      hint: `finish it with: opsctl kv ${verb} --to ${journal.target}${journal.allowSameVersion ? ' --allow-same-version' : ''}   or undo it with: ${o.rollbackCommand}`,
    });
  }
  return journal;
}

/** What the plan must say out loud before anyone agrees to it. */
function planWarnings(size: number, o: UpgradeOptions): string[] {
  const out: string[] = [];
  if (size <= 2) {
    out.push(
      `this cluster has ${size} member${size === 1 ? '' : 's'}: every restart loses quorum (no writes, and no reads that need the leader, until the member is back); a 3-member cluster upgrades without downtime`,
    );
  }
  if (o.noBackup) out.push('--no-backup: the data dirs are not backed up before each start (only the v3 snapshot is taken, and v2 data is not in it)');
  const space = spaceWarning(o, o.driver);
  if (space) out.push(space);
  return out;
}

interface Preflight {
  obs: ClusterObservation;
  observedAt: number;
  plan: UpgradePlan;
  membership: Membership;
}

/** Refuses (exit 1, nothing changed) unless the whole cluster is fit; the plan otherwise. */
async function preflight(o: UpgradeOptions, file: string, first: ReturnType<typeof observeCluster>, journal: Journal | undefined): Promise<Preflight> {
  const t = o.timeouts;
  const pre = o.reporter.begin(`pre-flight: checking ${o.cluster.members.length} members`);
  const refuse = (status: string, reasons: string[], hint?: string): never => {
    pre.fail(`pre-flight: ${status}`);
    throw new UpgradeRefused(
      reasons,
      hint ??
        (journal
          ? `fix the cluster, then run the same command to resume (journal ${file}), or roll back: ${o.rollbackCommand}`
          : 'fix the cluster first; nothing was changed'),
    );
  };
  const obs = await electionSettled(o, await first);
  // The member list from the cluster itself: asked with the first look, else of a healthy member
  // (at once with the auth question below). The list was asked of the first member: with a list, there is one.
  const [firstSeen] = obs.members;
  const listed =
    obs.memberList && firstSeen
      ? Promise.resolve({ list: obs.memberList, from: firstSeen.name })
      : readMembership(obs.members, { session: o.session, timeoutMs: t.requestMs, debug: o.debug });
  // Whether auth is on matters only with a member on 3.2 before 3.2.31 (the seed's lease-revoke
  // corruption): one more request then, none otherwise.
  if (obs.members.some((m) => /^3\.2\.([0-9]|[12][0-9]|30)$/.test(m.serverVersion ?? ''))) {
    obs.authEnabled = await authEnabled(obs.members, { session: o.session, timeoutMs: t.requestMs, debug: o.debug });
  }
  const observedAt = o.now();
  const result = planUpgrade(obs, {
    to: o.to,
    allowSameVersion: o.allowSameVersion,
    mayBeDown: journal ? memberInFlight(journal) : undefined,
    downgrade: o.downgrade,
  });
  const membership = await listed;
  // (When the planner already refused because no member is healthy, "no one to ask" adds nothing.)
  const whole = !result.ok && 'error' in membership ? [] : await membershipProblems(o.cluster, obs.members, membership, o.session, t.requestMs);
  if (!result.ok || whole.length) refuse('refused', [...(result.ok ? [] : result.reasons), ...whole]);
  const plan = (result as Extract<typeof result, { ok: true }>).plan;
  const v2only = await v2OnlyProblems(o, plan);
  if (v2only.length) refuse('a member holds v2 data without a v3 database', v2only, 'nothing was stopped: fix the data dirs (or the data-dir template) first');
  // Every backup still to be taken fits where it goes (each member is checked again right before its stop).
  const toBackUp = plan.members
    .filter((m) => m.action !== 'skip' && (!journal || journal.steps.some((s) => s.member === m.name && s.kind === 'backup-data' && s.status === 'pending')))
    .map((m) => o.cluster.members.find((s) => s.name === m.name)!);
  const space = await spacePreflight(o, o.driver, toBackUp).catch((err: Error) => [`measuring the space for the data-dir backups failed: ${err.message}`]);
  if (space.length) refuse('too little space for the backups', space, 'nothing was stopped: free space for the backups first (or pass --no-backup)');
  if (o.to === '3.3' && plan.source === '3.2') {
    // The seed's 3.3 interface changes, before any member is touched (also on a resume: the members
    // not yet upgraded start from their config files too).
    const problems = await checkClusterConfig(o.cluster.members, o.driver, { version: o.to, binDir: o.targetBin }, (x) => o.debug?.(`[kv] ${x}`)).catch(
      (err: Error) =>
        refuse(
          "cannot read a member's config",
          [`reading the member config files failed: ${err.message}`],
          "fix the config template (it prints the member's etcd config file), or drop it to skip the check",
        ),
    );
    if (problems.length) {
      refuse(
        "3.3 would refuse a member's configuration",
        problems.map((p) => `member ${p.member}: ${p.file}:${p.line}: ${p.problem}; fix: ${p.fix}`),
        'nothing was stopped: fix the config the members will start 3.3 with, then run the same command',
      );
    }
  }
  const list = membership as Membership;
  pre.done(
    `pre-flight: ${o.cluster.members.length} members healthy, the cluster's member list agrees (${list.list.length}), one leader, cluster version ${plan.clusterVersion}, no alarms`,
  );
  return { obs, observedAt, plan, membership: list };
}

/**
 * Whether the members that answer are between leaders: naming different ones, or none yet (an election
 * under way, e.g. a leader that missed its heartbeats on a busy host). It settles within a few election
 * timeouts; refusing at once would turn a moment's election into a failed maintenance step.
 */
function electing(obs: ClusterObservation): boolean {
  return obs.members.some((m) => m.reachable) && leaderIds(obs.members).size !== 1;
}

type Look = Awaited<ReturnType<typeof observeCluster>>;

/** Looks again while an election is under way, up to the healthy timeout (at most 15 s); the pre-flight then judges the last look. */
async function electionSettled(o: UpgradeOptions, obs: Look): Promise<Look> {
  const deadline = o.now() + Math.min(o.timeouts.healthyMs, 15_000);
  let seen = obs;
  while (electing(seen) && o.now() < deadline && !o.signal.aborted) {
    o.debug?.('[kv] pre-flight: the members are between leaders (an election): looking again');
    await sleep(o.timeouts.pollMs, o.signal);
    seen = await observeCluster(o.cluster.members, { session: o.session, timeoutMs: o.timeouts.requestMs, debug: o.debug, memberList: true });
  }
  return seen;
}

/**
 * The seed: a member whose data dir holds v2 data (member/wal) but no v3 database (member/snap/db)
 * makes 3.3 panic at start. Checked for every member to upgrade, where the driver knows the data dir.
 */
async function v2OnlyProblems(o: UpgradeOptions, plan: UpgradePlan): Promise<string[]> {
  const driver = o.driver;
  if (!driver?.dataLayout || compareMinor(o.to, '3.3') < 0) return [];
  const todo = plan.members.filter((m) => m.action !== 'skip').map((m) => o.cluster.members.find((s) => s.name === m.name)!);
  const out = await Promise.all(
    todo.map(async (m): Promise<string | undefined> => {
      const d = await driver.dataLayout!(m).catch((err: Error) => err);
      if (d instanceof Error)
        return `member ${m.name}: cannot look at its data dir: ${d.message}; fix the data-dir template (or --on-host), or drop it to skip the check`;
      if (!d.exists) return `member ${m.name}: its data dir ${d.dir} has no member/ directory: it is not this member's data dir; fix the data-dir template`;
      if (d.wal && !d.db) {
        return `member ${m.name}: ${d.dir} holds v2 data (member/wal) but no v3 database (member/snap/db is missing): ${o.to} would panic at start; fix: restore member/snap/db from a v3 snapshot of this cluster (etcdctl snapshot restore), or remove the member and add it back empty, before upgrading`;
      }
      return undefined;
    }),
  );
  return out.filter((x): x is string => x !== undefined);
}

type Base = Pick<UpgradeReport, 'cluster' | 'source' | 'target' | 'planText' | 'warnings' | 'plan' | 'resumed' | 'resume'>;
/** A step's body: gets the spinner, returns the detail line. */
type StepBody = (p: { update(t: string): void }) => Promise<string | undefined>;
type HaltOr<T = undefined> = Promise<UpgradeReport | T>;

/** One run of the journalled plan: the steps of each member in turn, then the cluster's. */
class UpgradeRun {
  private readonly ranNow = new Set<string>();
  private leaderId: string | undefined;
  /**
   * The pre-flight's look at the cluster serves as the first member's health gate while it is fresh
   * (nothing ran in between). Later gates look again: a settle comes before them.
   */
  private lastLook: { at: number; obs: ClusterObservation; list: MemberListEntry[] } | undefined;
  /** The gate's look before a member's snapshot (its revision; never reused for the stop, which looks again). */
  private gated: { obs: ClusterObservation } | undefined;

  private constructor(
    private readonly o: UpgradeOptions,
    private readonly driver: MemberDriver,
    private readonly file: string,
    private readonly started: number,
    private readonly base: Base,
    private readonly pre: Preflight,
    private readonly j: Journal,
    private readonly env: StepEnv,
  ) {
    this.leaderId = pre.obs.members.find((m) => m.leaderId)?.leaderId;
    this.lastLook = { at: pre.observedAt, obs: pre.obs, list: pre.membership.list };
  }

  /** A new journal (or the resumed one, owned by this run now), written before anything changes. */
  static async start(
    o: UpgradeOptions,
    driver: MemberDriver,
    file: string,
    started: number,
    base: Base,
    pre: Preflight,
    resumed: Journal | undefined,
  ): Promise<UpgradeRun> {
    let j: Journal;
    if (!resumed) {
      const previous: Journal['previous'] = {};
      for (const m of o.cluster.members) {
        const cur = driver.current(m);
        const ob = pre.obs.members.find((x) => x.name === m.name);
        previous[m.name] = { version: minor(ob?.serverVersion) ?? cur?.version ?? pre.plan.source, binDir: cur?.binDir };
      }
      j = newJournal(o.cluster.key, pre.plan, previous, { allowSameVersion: o.allowSameVersion, targetBin: o.targetBin, now: o.now() });
      if (o.downgrade) j.downgrade = true;
    } else {
      j = resumed;
      j.status = 'running';
      j.owner = { pid: process.pid, host: hostname() };
      delete j.halt;
    }
    beginRun(j, new Date(o.now()).toISOString());
    (j as JournalWithRuns).commands = { rollback: o.rollbackCommand };
    if (o.checks) (j as JournalWithRuns).checks = o.checks;
    if (o.v2Measured && !j.v2) j.v2 = o.v2Measured;
    await writeJournal(file, j, o.now(), false);
    o.debug?.(`[kv] journal written after ${o.now() - started} ms`);
    const etcdctl = o.snapshotVia === 'gateway' ? undefined : findEtcdctl(o.etcdctl);
    if (o.snapshotVia === 'etcdctl' && !etcdctl)
      throw new OpsError('--snapshot-via etcdctl: etcdctl not found', 2, { hint: 'install etcd-client, or pass --etcdctl PATH' });
    const real = pre.obs.members.some((m) => m.real) || o.cluster.sandbox?.kind === 'etcd';
    const env: StepEnv = { o, driver, journal: j, etcdctl, real, checkpoint: () => writeJournal(file, j, o.now(), false), membership: pre.membership.list };
    return new UpgradeRun(o, driver, file, started, base, pre, j, env);
  }

  private save(durable = true): Promise<void> {
    return writeJournal(this.file, this.j, this.o.now(), durable);
  }

  private report(status: UpgradeReport['status']): UpgradeReport {
    const { j } = this;
    // This run's time against this run's waits (a resumed run's journal also holds earlier steps).
    const mine = j.steps.filter((st) => this.ranNow.has(st.id));
    return {
      ...this.base,
      status,
      journal: this.file,
      run: j.id,
      steps: j.steps,
      snapshots: j.snapshots,
      totals: totals(mine, this.o.now() - this.started),
      halt: j.halt,
      ...(j.consistency ? { consistency: j.consistency } : {}),
      ...(j.defrag ? { defrag: j.defrag } : {}),
    };
  }

  private async halt(step: JournalStep, reason: string, status: JournalStep['status'] = 'failed'): Promise<UpgradeReport> {
    step.status = status;
    step.error = reason;
    this.j.status = 'halted';
    this.j.halt = { step: step.id, reason, rollback: this.o.rollbackCommand };
    endRun(this.j, 'halted', reason, new Date(this.o.now()).toISOString());
    await this.save();
    return this.report('halted');
  }

  private async interrupted(): Promise<never> {
    this.j.status = 'interrupted';
    endRun(this.j, 'interrupted', signalWords(this.o.signal.reason), new Date(this.o.now()).toISOString());
    await this.save();
    throw Object.assign(new InterruptedError('kv upgrade interrupted at a safe point; the journal is consistent'), {
      hint: `run the same command again to resume, or roll back: ${this.o.rollbackCommand}`,
    });
  }

  /**
   * Runs one journalled step, timing it; `imposed` says whether its time is the cluster's own wait.
   * Before a member is changed the journal says so. Before a stop durably (data and directory
   * synced): after an OS crash the re-run knows which member it may find down, and resumes there. A
   * lost "start" record only re-runs a start that finds the member running. The other steps are
   * re-runnable and idempotent: only their results are written, without a sync.
   */
  private async step(step: JournalStep, label: string, imposed: boolean, fn: StepBody): Promise<string | undefined> {
    const { o } = this;
    this.lastLook = undefined; // a step ran: the pre-flight's look is no longer the cluster as it is
    const p = o.reporter.begin(label);
    this.ranNow.add(step.id);
    step.status = 'running';
    step.startedAt = new Date(o.now()).toISOString();
    delete step.error;
    if (step.kind === 'stop' || step.kind === 'start') await this.save(step.kind === 'stop');
    const t0 = o.now();
    try {
      const detail = await fn(p);
      step.ms = o.now() - t0;
      if (imposed) step.imposedMs = step.ms;
      step.status = 'done';
      step.detail = detail;
      step.finishedAt = new Date(o.now()).toISOString();
      // Results are written when a member is done (settle: a settle that waits writes first that the
      // member is back), before the next member-changing step, and at the end.
      if (step.kind === 'settle') await this.save(false);
      p.done(`${label}${detail ? `: ${detail}` : ''} (${fmtMs(step.ms)})`);
      return detail;
    } catch (err) {
      step.ms = o.now() - t0;
      if (err instanceof WaitAborted) {
        step.status = 'pending';
        p.fail(`${label}: interrupted`);
        throw err;
      }
      p.fail(`${label}: ${(err as Error).message}`);
      throw err;
    }
  }

  /** A step that halts the run (exit 3) when it fails, with `why` before the error. */
  private async guarded(step: JournalStep, label: string, imposed: boolean, why: string, fn: StepBody): HaltOr {
    try {
      await this.step(step, label, imposed, fn);
      return undefined;
    } catch (err) {
      if (err instanceof WaitAborted) throw err;
      return this.halt(step, `${why}${(err as Error).message}`);
    }
  }

  /**
   * A step of the member's way back on the target (start, wait-healthy): a failure halts (exit 3), and
   * with --on-failure rollback the member is first put back on its old binary and data.
   */
  private async memberStep(ms: MemberSpec, step: JournalStep, label: string, why: string, fn: StepBody): HaltOr {
    try {
      await this.step(step, label, true, fn);
      return undefined;
    } catch (err) {
      if (err instanceof WaitAborted) throw err;
      const reason = `${why}${(err as Error).message}`;
      if (this.o.onFailure !== 'rollback') return this.halt(step, reason);
      const steps = this.j.steps.filter((s) => s.member === ms.name);
      const back = await putMemberBack(this.env, ms, steps).then(
        (detail) => ({ ok: true, detail }),
        (e: Error) => ({ ok: false, detail: e.message }),
      );
      if (!back.ok) return this.halt(step, `${reason}; --on-failure rollback could not put ${ms.name} back: ${back.detail}`);
      const to = this.j.previous[ms.name]?.version ?? this.j.source;
      const downFrom = steps.find((s) => s.kind === 'stop')?.startedAt;
      recordPutBack(this.j, { member: ms.name, to, at: new Date(this.o.now()).toISOString(), downFrom, detail: back.detail });
      return this.halt(step, `${reason}; --on-failure rollback: ${back.detail}`, 'pending');
    }
  }

  /** Every member with pending steps, one at a time (never the current leader while another waits), then the cluster's steps. */
  async go(): Promise<UpgradeReport> {
    const { j } = this;
    const pending = () => j.members.filter((m) => j.steps.some((s) => s.member === m.name && s.status !== 'done' && s.status !== 'skipped'));
    try {
      const first = nextMember(pending(), this.leaderId);
      if (first) {
        const fresh = !j.steps.some((s) => s.kind === 'stop' && s.status !== 'pending');
        const st = j.steps.find((s) => s.member === first.name && s.kind === 'snapshot')!;
        const diverged = await this.hashCheck(
          fresh ? 'before the first stop' : 'before resuming',
          st.status === 'done' ? j.steps.find((s) => s.member === first.name && s.kind === 'stop')! : st,
          'pending',
          this.lastLook?.obs,
        );
        if (diverged) return diverged;
      }
      for (let m = nextMember(pending(), this.leaderId); m; m = nextMember(pending(), this.leaderId)) {
        const halted = await this.member(m.name);
        if (halted) return halted;
      }
      return await this.finish();
    } catch (err) {
      if (err instanceof WaitAborted) await this.interrupted();
      throw err;
    }
  }

  private member(name: string): HaltOr<undefined> {
    const ms = this.o.cluster.members.find((x) => x.name === name)!;
    const steps = this.j.steps.filter((s) => s.member === name);
    const st = (k: string) => steps.find((s) => s.kind === k)!;
    return this.chain([() => this.beforeStop(ms, st), () => this.stop(ms, st), () => this.backup(ms, st), () => this.bringBack(ms, st)]);
  }

  /** Runs the parts in order until one halts. */
  private async chain(parts: Array<() => HaltOr<undefined>>): HaltOr<undefined> {
    for (const part of parts) {
      const halted = await part();
      if (halted) return halted;
    }
    return undefined;
  }

  /**
   * The health gate: every member of the cluster's member list healthy, the list as at pre-flight,
   * one leader, no alarm, looked at right before the member is touched. A failed gate halts with the
   * member untouched (its step stays pending).
   */
  private async gate(ms: MemberSpec, step: JournalStep): HaltOr<undefined> {
    // (Only this gate, before the snapshot, may use the pre-flight's look: the stop always looks again.)
    const reuse = this.lastLook && this.o.now() - this.lastLook.at <= PREFLIGHT_LOOK_MS ? this.lastLook : undefined;
    this.lastLook = undefined;
    try {
      this.gated = { obs: await gateBeforeStop(this.env, ms, reuse) };
      return undefined;
    } catch (err) {
      this.gated = undefined;
      return this.halt(step, `${(err as Error).message}; ${ms.name} was not touched: fix the cluster, then resume with the same command`, 'pending');
    }
  }

  /** Gate, snapshot + verify (skipped once the member was stopped). */
  private async beforeStop(ms: MemberSpec, st: (k: string) => JournalStep): HaltOr<undefined> {
    this.gated = undefined;
    if (st('snapshot').status === 'done' || st('stop').status !== 'pending') return undefined;
    if (this.o.signal.aborted) await this.interrupted();
    const refused = await this.gate(ms, st('snapshot'));
    if (refused) return refused;
    if (this.o.defrag) {
      const p = this.o.reporter.begin(`${ms.name}: defragment (--defrag)`);
      try {
        const d = await defragMember(this.env, ms);
        (this.j.defrag ??= []).push({ member: ms.name, before: d.before, after: d.after });
        p.done(d.detail);
      } catch (err) {
        p.fail(`${ms.name}: defragment failed: ${(err as Error).message}`);
        return this.halt(
          st('snapshot'),
          `defragmenting ${ms.name} failed before it was stopped: ${(err as Error).message}; ${ms.name} was not stopped: check it (etcdctl endpoint status), then resume with the same command, or without --defrag`,
          'pending',
        );
      }
    }
    return this.guarded(st('snapshot'), `${ms.name}: snapshot + verify`, false, `snapshot of ${ms.name} failed before the member was stopped: `, () =>
      snapshotStep(this.env, ms, this.gated?.obs),
    );
  }

  /**
   * The space for its backup, then the whole-cluster look and the stop command, with nothing between
   * them (the look never reused from before the snapshot: a member lost during it means no stop), then
   * wait until the process is gone. A refusal halts (exit 3) with the member untouched.
   */
  private async stop(ms: MemberSpec, st: (k: string) => JournalStep): HaltOr<undefined> {
    const step = st('stop');
    if (step.status !== 'done') {
      const fresh = step.status === 'pending';
      if (fresh) {
        if (this.o.signal.aborted) await this.interrupted();
        const tight = await spaceBeforeStop(this.env, ms).then(
          (t) => t && `${t}; ${ms.name} was not touched: free space there (or pass --no-backup), then resume with the same command`,
          (err: Error) =>
            `not stopping ${ms.name}: its backup could not be measured: ${err.message}; ${ms.name} was not touched: fix what stopped the measure (the host's reach, or the backup directory), or pass --no-backup, then resume with the same command`,
        );
        if (tight) return this.halt(step, tight, 'pending');
      }
      try {
        await this.step(step, `${ms.name}: stop`, true, async () => {
          // A resumed stop (crashed in it) looks first only while the member still runs.
          if (fresh || (await this.driver.isRunning(ms))) {
            await gateBeforeStop(this.env, ms).catch((err: Error) => {
              throw new GateRefused(err.message);
            });
          }
          await this.driver.stop(ms);
          return undefined;
        });
      } catch (err) {
        if (err instanceof WaitAborted) throw err;
        if (err instanceof GateRefused)
          return this.halt(step, `${err.message}; ${ms.name} was not touched: fix the cluster, then resume with the same command`, 'pending');
        return this.halt(step, `stopping ${ms.name} failed: ${(err as Error).message}`);
      }
    }
    if (st('wait-stopped').status === 'done') return undefined;
    return this.guarded(st('wait-stopped'), `${ms.name}: wait until the process is gone`, true, `${ms.name} is still running: `, () =>
      waitGoneStep(this.env, ms),
    );
  }

  /** The data dir copied while the member is stopped (the driver's backup), or skipped as --no-backup says. */
  private async backup(ms: MemberSpec, st: (k: string) => JournalStep): HaltOr<undefined> {
    const step = st('backup-data');
    if (step.status === 'done' || step.status === 'skipped') return undefined;
    if (this.o.noBackup || !this.driver.backupDataDir) {
      step.status = 'skipped';
      step.detail = this.o.noBackup
        ? 'not backed up: --no-backup (the v3 snapshot is taken)'
        : 'not backed up: the driver has no backup command (the v3 snapshot is taken)';
      return undefined;
    }
    // The member is down: the others must all still be there before the copy (which can take minutes).
    const looked = this.o.now();
    let electionMs = 0;
    const lost = await this.whileDown(ms, step, (w) => (electionMs = w));
    if (lost) return lost;
    try {
      await this.step(step, `${ms.name}: back up the data dir`, false, () => backupStep(this.env, ms));
      // The step counts the whole-cluster look before the copy; the part of it the other members took to
      // agree on a leader again (after a leader's stop) is the cluster's own wait.
      step.startedAt = new Date(looked).toISOString();
      step.ms = Math.max(step.ms ?? 0, Date.parse(step.finishedAt!) - looked);
      if (electionMs > 0) step.imposedMs = Math.min(electionMs, step.ms);
      return undefined;
    } catch (err) {
      if (err instanceof WaitAborted) throw err;
      // Never left down with a resume that fails the same way: back on its old binary first.
      const why = await describeBackupFailure(this.env, ms, err as Error);
      const back = await startOnPrevious(this.env, ms, 'cluster');
      if (back.ok) backToPending(this.j.steps.filter((s) => s.member === ms.name));
      return this.halt(
        step,
        `copying ${ms.name}'s data dir failed after its stop: ${why}; ${back.detail}${back.ok ? `; free space for the backup (or pass --no-backup), then resume with the same command` : ''}`,
        back.ok ? 'pending' : 'failed',
      );
    }
  }

  /**
   * The whole-cluster look before a copy that runs while `ms` is down. A member lost meanwhile: `ms`
   * is started again on its binary before the upgrade, then the run halts (exit 3) naming both.
   */
  private async whileDown(ms: MemberSpec, step: JournalStep, waited?: (ms: number) => void): HaltOr<undefined> {
    const p = this.o.reporter.begin(`${ms.name}: the other members healthy before its backup`);
    try {
      await gateWhileDown(this.env, ms, waited);
      p.done(`${ms.name}: the other members healthy, one leader, the member list as at pre-flight`);
      return undefined;
    } catch (err) {
      const lost = err instanceof MemberLost ? err : new MemberLost([], (err as Error).message);
      const who = lost.lost.length ? `${lost.lost.join(', ')} lost` : 'the cluster changed';
      p.fail(`${ms.name}: ${who} while ${ms.name} is down: ${lost.message}`);
      const back = await startOnPrevious(this.env, ms, 'member');
      if (back.ok) backToPending(this.j.steps.filter((s) => s.member === ms.name));
      return this.halt(
        step,
        `${who} while ${ms.name} was down for its upgrade (${lost.message}): ${ms.name} was brought back before anything else; ${back.detail}; fix ${lost.lost.length ? lost.lost.join(', ') : 'the cluster'}, then resume with the same command`,
        'pending',
      );
    }
  }

  /** Start on the target, wait until it and the cluster are healthy and it caught up, settle. */
  private async bringBack(ms: MemberSpec, st: (k: string) => JournalStep): HaltOr<undefined> {
    const { o } = this;
    const target: MemberTarget = { version: o.to, binDir: o.targetBin ?? this.j.target_bin ?? this.driver.current(ms)?.binDir };
    /** The health poll's look that saw the member back and caught up (its versions and revisions serve the hash comparison). */
    let backLook: ClusterObservation | undefined;
    if (st('start').status !== 'done') {
      const halted = await this.memberStep(ms, st('start'), `${ms.name}: start ${o.to}`, `starting ${ms.name} on ${o.to} failed: `, () =>
        startStep(this.env, ms, target, this.ranNow.has(st('wait-stopped').id) && st('wait-stopped').status === 'done'),
      );
      if (halted) return halted;
    }
    if (st('wait-healthy').status !== 'done') {
      const label = `${ms.name}: wait until it and the cluster are healthy and it caught up`;
      const halted = await this.memberStep(ms, st('wait-healthy'), label, `${ms.name} did not become healthy on ${o.to}: `, (p) =>
        waitBackStep(
          this.env,
          ms,
          p,
          (id) => (this.leaderId = id),
          (obs) => (backLook = obs),
        ),
      );
      if (halted) return halted;
    }
    if (st('settle').status === 'done') return undefined;
    const diverged = await this.hashCheck(`after ${ms.name} is back on ${o.to}`, st('settle'), 'failed', backLook);
    if (diverged) return diverged;
    try {
      // Only between members: none after the last one of the hop.
      const last = !this.j.steps.some((x) => x.member && x.member !== ms.name && x.status !== 'done' && x.status !== 'skipped');
      await this.step(st('settle'), `${ms.name}: settle`, true, () => settleStep(this.env, ms, fmtMs, last));
      return undefined;
    } catch (err) {
      if (err instanceof WaitAborted) await this.interrupted();
      return this.halt(st('settle'), (err as Error).message);
    }
  }

  /**
   * Every member's KV hash at one revision (HashKV), compared and kept in the journal. A member off
   * the others' hash halts the run (exit 3) naming it and both hashes; where HashKV cannot be asked
   * (3.2, no etcdctl for real members) the check says "not checked" and why, and the run goes on.
   */
  private async hashCheck(at: string, step: JournalStep, status: JournalStep['status'], seen?: ClusterObservation): HaltOr<undefined> {
    const { o, j } = this;
    const p = o.reporter.begin(`cluster: KV hashes compared ${at}`);
    const members = o.cluster.members;
    const versions: Record<string, string | undefined> = {};
    const revisions: Record<string, string | undefined> = {};
    // A look at every member taken a moment ago (the pre-flight's, the poll that saw the member back)
    // gives each one's version and revision: no round trip to ask them again.
    const looked = seen?.members.filter((x) => x.healthy && x.serverVersion);
    if (looked?.length === members.length) {
      for (const x of looked) [versions[x.name], revisions[x.name]] = [x.serverVersion, x.revision];
    } else {
      await Promise.all(
        members.map(async (m) => {
          versions[m.name] = await new KvClient(m.endpoint, { session: o.session, timeoutMs: o.timeouts.requestMs, debug: o.debug })
            .version()
            .then((v) => v.server)
            .catch(() => undefined);
        }),
      );
    }
    let c: HashCheck;
    try {
      c = await compareHashes(
        {
          session: o.session,
          timeoutMs: o.timeouts.snapshotMs,
          exec: o.exec,
          etcdctl: this.env.etcdctl ?? findEtcdctl(o.etcdctl),
          real: this.env.real,
          debug: o.debug,
        },
        members,
        versions,
        at,
        looked?.length === members.length ? revisions : undefined,
      );
    } catch (err) {
      c = { at, result: 'not-checked', hashes: [], notChecked: [], detail: `not checked: ${(err as Error).message}` };
    }
    (j.consistency ??= []).push(c);
    if (c.result !== 'divergent') {
      p.done(`cluster: KV hashes ${at}: ${c.result === 'ok' ? 'one hash, ' : ''}${c.detail}`);
      return undefined;
    }
    p.fail(`cluster: KV hashes ${at}: ${c.detail}`);
    return this.halt(
      step,
      `${c.detail}: a member's keys differ from the others' at the same revision; nothing more is stopped. Find which is right before anything else (etcdctl endpoint hashkv --rev ${c.revision}; compare the keys); the way back: ${o.rollbackCommand}`,
      status,
    );
  }

  /** The cluster version reaches the target; a final health pass. */
  private async finish(): Promise<UpgradeReport> {
    const { o, j } = this;
    const cvStep = j.steps.find((s) => s.kind === 'wait-cluster-version')!;
    const fhStep = j.steps.find((s) => s.kind === 'final-health')!;
    if (o.signal.aborted) await this.interrupted();
    if (cvStep.status !== 'done') {
      const halted = await this.guarded(cvStep, `cluster: wait for the cluster version to reach ${o.to}`, true, '', () =>
        waitClusterVersionStep(this.env, this.pre.plan.source),
      );
      if (halted) return halted;
    }
    if (fhStep.status !== 'done') {
      const halted = await this.guarded(fhStep, 'cluster: final health pass', false, '', () => finalHealthStep(this.env));
      if (halted) return halted;
    }
    j.status = 'done';
    endRun(j, 'done', undefined, new Date(o.now()).toISOString());
    o.debug?.(`[kv] steps finished after ${o.now() - this.started} ms; ${journalStats.writes} journal writes took ${journalStats.ms.toFixed(1)} ms`);
    await this.save();
    return this.report('done');
  }
}

export function totals(steps: JournalStep[], wallMs: number): UpgradeReport['totals'] {
  const imposedMs = steps.reduce((n, s) => n + (s.imposedMs ?? 0), 0);
  return { ms: wallMs, imposedMs, overheadMs: wallMs - imposedMs, overheadRatio: imposedMs > 0 ? (wallMs - imposedMs) / imposedMs : null };
}

export function fmtMs(ms: number): string {
  return ms < 1000 ? `${ms} ms` : ms < 120_000 ? `${(ms / 1000).toFixed(1)} s` : `${(ms / 60_000).toFixed(1)} min`;
}

/** The plan's line on the KV hash comparison, with what cannot be checked and why. */
function hashPlanLine(o: UpgradeOptions, obs: ClusterObservation, source: string): string {
  const real = obs.members.some((m) => m.real) || o.cluster.sandbox?.kind === 'etcd';
  const head = "consistency: every member's KV hash at one revision (HashKV) compared before the first stop and after each member is back";
  if (real && !findEtcdctl(o.etcdctl))
    return `${head}\n  not checked: HashKV is gRPC only (the gateway's /maintenance/hash hashes the whole db file): install etcdctl 3.3+ (etcd-client) or pass --etcdctl PATH`;
  if (compareMinor(source, HASHKV_MIN) < 0)
    return `${head}\n  not checked: HashKV needs etcd 3.3+ (the members run ${source}): compared among the members on ${o.to} once two of them are`;
  return head;
}
