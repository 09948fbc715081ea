import { hostname } from 'node:os';
import { join } from 'node:path';
import { InterruptedError, OpsError } from '../core/errors.js';
import type { ClusterSpec, MemberSpec } from './cluster.js';
import type { MemberDriver, MemberTarget } from './drivers/driver.js';
import type { KvSession } from './session.js';
import {
  isResumable,
  journalStats,
  lockJournal,
  memberInFlight,
  newJournal,
  readJournal,
  writeJournal,
  type Journal,
  type JournalStep,
} from './journal.js';
import { checkClusterConfig } from './config-check.js';
import { authEnabled, observeCluster } from './observe.js';
import { minor } from './parse.js';
import { describePlan, nextMember, planUpgrade } from './planner.js';
import { findEtcdctl } from './snapshot.js';
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
import type { ClusterObservation, UpgradePlan } from './types.js';
import { sleep, WaitAborted } from './wait.js';

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

/** How old the health gate's look at the cluster may be when a member is stopped. */
const GATE_FRESH_MS = 1000;

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
  /** How long a lock of a crashed run stays (ms). */
  lockStaleMs?: number;
  debug?: (line: string) => void;
}

export interface UpgradeReport {
  status: 'planned' | 'done' | 'halted' | 'interrupted' | 'nothing-to-do';
  cluster: string;
  source: string;
  target: string;
  journal?: string;
  resumed: boolean;
  plan: UpgradePlan['members'];
  planText: string;
  steps: JournalStep[];
  snapshots: Journal['snapshots'];
  totals: { ms: number; imposedMs: number; overheadMs: number; overheadRatio: number | null };
  halt?: Journal['halt'];
}

/** Pre-flight said no: nothing was changed. Exit 1 with every reason. */
export class UpgradeRefused extends OpsError {
  constructor(readonly reasons: string[], hint: string) {
    super(`upgrade refused before any change:\n  - ${reasons.join('\n  - ')}`, 1, { code: 'preflight', hint });
  }
}

/** The executor: runs (or resumes) the journalled plan, one member at a time. */
export async function runUpgrade(o: UpgradeOptions): Promise<UpgradeReport> {
  const started = o.now();
  const file = join(o.dataDir, 'kv', 'journals', `${o.cluster.key}.json`);
  let unlock: (() => Promise<void>) | undefined;
  // The lock and the first look at the cluster at the same time (looking changes nothing).
  const first = observeCluster(o.cluster.members, { session: o.session, timeoutMs: o.timeouts.requestMs, debug: o.debug });
  first.then(() => o.debug?.(`[kv] first look at the cluster after ${o.now() - started} ms`), () => undefined);
  if (!o.dryRun) unlock = await acquireLock(file, o);
  o.debug?.(`[kv] lock acquired after ${o.now() - started} ms`);
  try {
    return await execute(o, file, started, first);
  } finally {
    await unlock?.().catch(() => undefined);
  }
}

/**
 * The journal's lock; when the run that holds it died on this host (SIGKILL, a crash), waits for its
 * lock to go stale instead of refusing (the upgrade's resume and the roll-back after a crash).
 */
export async function acquireLock(file: string, o: Pick<UpgradeOptions, 'lockStaleMs' | 'now' | 'reporter'>): Promise<() => Promise<void>> {
  const stale = o.lockStaleMs ?? 4000;
  const deadline = o.now() + stale * 3;
  for (;;) {
    try {
      return await lockJournal(file, stale);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
      const owner = safeRead(file)?.owner;
      const deadOwner = owner && owner.host === hostname() && owner.pid !== process.pid && !pidExists(owner.pid);
      if (!deadOwner || o.now() > deadline) {
        throw new OpsError(`another kv upgrade of this cluster is running${owner ? ` (pid ${owner.pid} on ${owner.host})` : ''}`, 1, {
          code: 'locked',
          hint: 'wait for it to finish; if it crashed, run the command again in a few seconds (its lock goes stale)',
        });
      }
      o.reporter.note(`the previous run (pid ${owner.pid}) died; waiting for its lock to go stale`);
      await sleep(Math.min(1000, stale / 2));
    }
  }
}

function safeRead(file: string): Journal | undefined {
  try {
    return readJournal(file);
  } catch {
    return undefined;
  }
}

function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function execute(o: UpgradeOptions, file: string, started: number, first: ReturnType<typeof observeCluster>): Promise<UpgradeReport> {
  const t = o.timeouts;
  const obsOpts = { session: o.session, timeoutMs: t.requestMs, debug: o.debug };
  let journal: Journal | undefined;
  try {
    journal = readJournal(file);
  } catch (err) {
    // Never start afresh over an unreadable record: it may be all that says which members moved.
    throw new OpsError(`the upgrade journal ${file} cannot be read: ${(err as Error).message}`, 1, {
      code: 'journal_unreadable',
      hint: `check the cluster with opsctl kv status; if no upgrade is half-done, move the file aside (mv ${file} ${file}.bad) and run again`,
    });
  }
  const resuming = isResumable(journal);
  if (resuming && (journal!.target !== o.to || journal!.allowSameVersion !== o.allowSameVersion)) {
    throw new OpsError(`an unfinished upgrade to ${journal!.target} of this cluster is recorded in ${file}`, 1, {
      code: 'journal_conflict',
      hint: `finish it with: opsctl kv upgrade --to ${journal!.target}${journal!.allowSameVersion ? ' --allow-same-version' : ''}   or undo it with: ${o.rollbackCommand}`,
    });
  }
  if (!resuming) journal = undefined;

  // ---- pre-flight --------------------------------------------------------------------------
  const pre = o.reporter.begin(`pre-flight: checking ${o.cluster.members.length} members`);
  const obs = await first;
  // Whether auth is on matters only with a member on 3.2 before 3.2.31 (the seed's lease-revoke
  // corruption): one more request then, none otherwise.
  if (obs.members.some((m) => /^3\.2\.([0-9]|[12][0-9]|30)$/.test(m.serverVersion ?? ''))) {
    obs.authEnabled = await authEnabled(obs.members, { session: o.session, timeoutMs: t.requestMs, debug: o.debug });
  }
  const observedAt = o.now();
  const result = planUpgrade(obs, { to: o.to, allowSameVersion: o.allowSameVersion, mayBeDown: journal ? memberInFlight(journal) : undefined });
  if (!result.ok) {
    pre.fail('pre-flight: refused');
    throw new UpgradeRefused(result.reasons, journal ? `fix the cluster, then run the same command to resume (journal ${file}), or roll back: ${o.rollbackCommand}` : 'fix the cluster first; nothing was changed');
  }
  const plan = result.plan;
  if (o.to === '3.3' && plan.source === '3.2') {
    // The seed's 3.3 interface changes, before any member is touched (also on a resume: the members
    // not yet upgraded start from their config files too).
    const problems = await checkClusterConfig(o.cluster.members, o.driver, { version: o.to, binDir: o.targetBin }, (t) => o.debug?.(`[kv] ${t}`)).catch((err: Error) => {
      pre.fail('pre-flight: cannot read a member\'s config');
      throw new UpgradeRefused([`reading the member config files failed: ${err.message}`], 'fix the config template (it prints the member\'s etcd config file), or drop it to skip the check');
    });
    if (problems.length) {
      pre.fail('pre-flight: 3.3 would refuse a member\'s configuration');
      throw new UpgradeRefused(
        problems.map((p) => `member ${p.member}: ${p.file}:${p.line}: ${p.problem}; fix: ${p.fix}`),
        'nothing was stopped: fix the config the members will start 3.3 with, then run the same command',
      );
    }
  }
  pre.done(`pre-flight: ${o.cluster.members.length} members healthy, one leader, cluster version ${result.plan.clusterVersion}, no alarms`);
  o.debug?.(`[kv] pre-flight done after ${o.now() - started} ms`);
  const settleText = o.settle === 'auto' ? 'auto' : `${o.settle} ms`;
  const planText = journal ? `Resuming the upgrade to ${journal.target} recorded in ${file}` : describePlan(plan, settleText);
  const upgrading = plan.members.filter((m) => m.action !== 'skip');
  const base = { cluster: o.cluster.key, source: plan.source, target: plan.target, planText, plan: journal?.members ?? plan.members, resumed: Boolean(journal) };
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
  const driver = o.driver;
  o.reporter.note(planText);

  if (!journal) {
    const previous: Journal['previous'] = {};
    for (const m of o.cluster.members) {
      const cur = driver.current(m);
      const ob = obs.members.find((x) => x.name === m.name);
      previous[m.name] = { version: minor(ob?.serverVersion) ?? cur?.version ?? plan.source, binDir: cur?.binDir };
    }
    journal = newJournal(o.cluster.key, plan, previous, { allowSameVersion: o.allowSameVersion, targetBin: o.targetBin, now: o.now() });
  } else {
    journal.status = 'running';
    journal.owner = { pid: process.pid, host: hostname() };
    delete journal.halt;
  }
  const j = journal;
  const save = (durable = true) => writeJournal(file, j, o.now(), durable);
  await save(false);
  o.debug?.(`[kv] journal written after ${o.now() - started} ms`);

  const etcdctl = o.snapshotVia === 'gateway' ? undefined : findEtcdctl(o.etcdctl);
  if (o.snapshotVia === 'etcdctl' && !etcdctl) throw new OpsError('--snapshot-via etcdctl: etcdctl not found', 2, { hint: 'install etcd-client, or pass --etcdctl PATH' });
  const real = obs.members.some((m) => m.real) || o.cluster.sandbox?.kind === 'etcd';

  const env: StepEnv = { o, driver, journal: j, etcdctl, real, checkpoint: () => save(false) };
  const spec = (name: string) => o.cluster.members.find((m) => m.name === name)!;
  const targetOf = (m: MemberSpec): MemberTarget => ({ version: o.to, binDir: o.targetBin ?? j.target_bin ?? driver.current(m)?.binDir });
  let leaderId = obs.members.find((m) => m.leaderId)?.leaderId;

  const ranNow = new Set<string>();
  // The pre-flight's look at the cluster serves as the first member's health gate while it is
  // fresh (nothing ran in between). Later gates look again: a settle comes before them.
  let lastLook: { at: number; obs: ClusterObservation } | undefined = { at: observedAt, obs };
  const halt = async (step: JournalStep, reason: string, status: JournalStep['status'] = 'failed'): Promise<UpgradeReport> => {
    step.status = status;
    step.error = reason;
    j.status = 'halted';
    j.halt = { step: step.id, reason, rollback: o.rollbackCommand };
    await save();
    return report('halted');
  };
  const report = (status: UpgradeReport['status']): UpgradeReport => ({
    ...base,
    status,
    journal: file,
    steps: j.steps,
    snapshots: j.snapshots,
    // This run's time against this run's waits (a resumed run's journal also holds earlier steps).
    totals: totals(j.steps.filter((st) => ranNow.has(st.id)), o.now() - started),
    halt: j.halt,
  });
  const interrupted = async (): Promise<never> => {
    j.status = 'interrupted';
    await save();
    throw Object.assign(new InterruptedError('kv upgrade interrupted at a safe point; the journal is consistent'), {
      hint: `run the same command again to resume, or roll back: ${o.rollbackCommand}`,
    });
  };

  /** Runs one journalled step, timing it; `imposed` says whether its time is the cluster's own wait. */
  const runStep = async (step: JournalStep, label: string, imposed: boolean, fn: (p: { update(t: string): void }) => Promise<string | undefined>): Promise<string | undefined> => {
    lastLook = undefined; // a step ran: the pre-flight's look is no longer the cluster as it is
    const p = o.reporter.begin(label);
    ranNow.add(step.id);
    step.status = 'running';
    step.startedAt = new Date(o.now()).toISOString();
    delete step.error;
    // Before a member is changed the journal says so. Before a stop durably (data and directory
    // synced): after an OS crash the re-run knows which member it may find down, and resumes
    // there. A lost "start" record only re-runs a start that finds the member running. The other
    // steps are re-runnable and idempotent: only their results are written, without a sync.
    if (step.kind === 'stop' || step.kind === 'start') await save(step.kind === 'stop');
    const t0 = o.now();
    try {
      const detail = await fn(p);
      step.ms = o.now() - t0;
      if (imposed) step.imposedMs = step.ms;
      step.status = 'done';
      step.detail = detail;
      step.finishedAt = new Date(o.now()).toISOString();
      // Results are written when a member is done (settle: a settle that waits writes first that
      // the member is back), before the next member-changing step, and at the end; a crash before
      // that only re-runs a re-runnable step (a wait, a health pass).
      if (step.kind === 'settle') await save(false);
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
      throw Object.assign(err as Error, { step });
    }
  };

  // ---- per member ----------------------------------------------------------------------------
  const pendingMembers = () => j.members.filter((m) => j.steps.some((s) => s.member === m.name && s.status !== 'done' && s.status !== 'skipped'));
  try {
    for (let m = nextMember(pendingMembers(), leaderId); m; m = nextMember(pendingMembers(), leaderId)) {
      const ms = spec(m.name);
      const steps = j.steps.filter((s) => s.member === m.name);
      const st = (k: string) => steps.find((s) => s.kind === k)!;
      const stopped = st('stop').status !== 'pending';
      if (!stopped && o.signal.aborted) await interrupted();

      // The health gate: every member healthy, one leader, no alarm, looked at right before the
      // member is touched (shared with the snapshot step, and looked at again before the stop if
      // the snapshot took long).
      let gated: { at: number; obs: Awaited<ReturnType<typeof gateBeforeStop>> } | undefined;
      const gate = async (step: JournalStep): Promise<UpgradeReport | undefined> => {
        const reuse = lastLook && o.now() - lastLook.at <= GATE_FRESH_MS ? lastLook : undefined;
        lastLook = undefined;
        try {
          gated = { at: reuse?.at ?? o.now(), obs: await gateBeforeStop(env, ms, reuse?.obs) };
          return undefined;
        } catch (err) {
          return await halt(step, `${(err as Error).message}; ${ms.name} was not touched: fix the cluster, then resume with the same command`, 'pending');
        }
      };
      if (st('snapshot').status !== 'done' && !stopped) {
        const refused = await gate(st('snapshot'));
        if (refused) return refused;
        try {
          await runStep(st('snapshot'), `${m.name}: snapshot + verify`, false, () => snapshotStep(env, ms, gated?.obs));
        } catch (err) {
          return await halt(st('snapshot'), `snapshot of ${m.name} failed before the member was stopped: ${(err as Error).message}`);
        }
      }
      if (st('stop').status !== 'done') {
        if (o.signal.aborted && st('stop').status === 'pending') await interrupted();
        if (st('stop').status === 'pending' && (!gated || o.now() - gated.at > GATE_FRESH_MS)) {
          const refused = await gate(st('stop'));
          if (refused) return refused;
        }
        try {
          await runStep(st('stop'), `${m.name}: stop`, true, async () => {
            await driver.stop(ms);
            return undefined;
          });
        } catch (err) {
          return await halt(st('stop'), `stopping ${m.name} failed: ${(err as Error).message}`);
        }
      }
      if (st('wait-stopped').status !== 'done') {
        try {
          await runStep(st('wait-stopped'), `${m.name}: wait until the process is gone`, true, () => waitGoneStep(env, ms));
        } catch (err) {
          return await halt(st('wait-stopped'), `${m.name} is still running: ${(err as Error).message}`);
        }
      }
      if (st('backup-data').status !== 'done' && st('backup-data').status !== 'skipped') {
        if (!driver.backupDataDir) {
          st('backup-data').status = 'skipped';
          st('backup-data').detail = `no backup command: back the data dirs up on the hosts (give --backup-cmd or driver.backup to have opsctl do it; the v3 snapshot is taken)`;
        } else {
          try {
            await runStep(st('backup-data'), `${m.name}: back up the data dir`, false, () => backupStep(env, ms));
          } catch (err) {
            return await halt(st('backup-data'), `copying ${m.name}'s data dir failed (the member is stopped: start it again or resume): ${(err as Error).message}`);
          }
        }
      }
      if (st('start').status !== 'done') {
        try {
          await runStep(st('start'), `${m.name}: start ${o.to}`, true, () => startStep(env, ms, targetOf(ms)));
        } catch (err) {
          return await halt(st('start'), `starting ${m.name} on ${o.to} failed: ${(err as Error).message}`);
        }
      }
      if (st('wait-healthy').status !== 'done') {
        try {
          await runStep(st('wait-healthy'), `${m.name}: wait until it and the cluster are healthy and it caught up`, true, (p) =>
            waitBackStep(env, ms, p, (id) => (leaderId = id)),
          );
        } catch (err) {
          return await halt(st('wait-healthy'), `${m.name} did not become healthy on ${o.to}: ${(err as Error).message}`);
        }
      }
      if (st('settle').status !== 'done') {
        try {
          await runStep(st('settle'), `${m.name}: settle`, true, () => settleStep(env, ms, fmtMs));
        } catch (err) {
          if (err instanceof WaitAborted) await interrupted();
          return await halt(st('settle'), (err as Error).message);
        }
      }
    }

    // ---- the end: cluster version, final health ---------------------------------------------
    const cvStep = j.steps.find((s) => s.kind === 'wait-cluster-version')!;
    const fhStep = j.steps.find((s) => s.kind === 'final-health')!;
    if (o.signal.aborted) await interrupted();
    if (cvStep.status !== 'done') {
      try {
        await runStep(cvStep, `cluster: wait for the cluster version to reach ${o.to}`, true, () => waitClusterVersionStep(env, plan.source));
      } catch (err) {
        return await halt(cvStep, (err as Error).message);
      }
    }
    if (fhStep.status !== 'done') {
      try {
        await runStep(fhStep, 'cluster: final health pass', false, () => finalHealthStep(env));
      } catch (err) {
        return await halt(fhStep, (err as Error).message);
      }
    }
    j.status = 'done';
    o.debug?.(`[kv] steps finished after ${o.now() - started} ms; ${journalStats.writes} journal writes took ${journalStats.ms.toFixed(1)} ms`);
    await save();
    return report('done');
  } catch (err) {
    if (err instanceof WaitAborted) await interrupted();
    throw err;
  }
}

function obsByLeader(leaderId: string | undefined, obs: { members: Array<{ id: string; name: string }> }): string | undefined {
  return obs.members.find((m) => m.id === leaderId)?.name;
}

export function totals(steps: JournalStep[], wallMs: number): UpgradeReport['totals'] {
  const imposedMs = steps.reduce((n, s) => n + (s.imposedMs ?? 0), 0);
  return { ms: wallMs, imposedMs, overheadMs: wallMs - imposedMs, overheadRatio: imposedMs > 0 ? (wallMs - imposedMs) / imposedMs : null };
}

export function fmtMs(ms: number): string {
  return ms < 1000 ? `${ms} ms` : ms < 120_000 ? `${(ms / 1000).toFixed(1)} s` : `${(ms / 60_000).toFixed(1)} min`;
}
