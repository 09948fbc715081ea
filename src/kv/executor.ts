import { hostname } from 'node:os';
import { join } from 'node:path';
import { InterruptedError, OpsError } from '../core/errors.js';
import type { ClusterSpec, MemberSpec } from './cluster.js';
import { KvClient } from './client.js';
import type { MemberDriver, MemberTarget } from './drivers/driver.js';
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
import { observeCluster } from './observe.js';
import { minor } from './parse.js';
import { describePlan, nextMember, planUpgrade } from './planner.js';
import { findEtcdctl, saveSnapshot } from './snapshot.js';
import type { UpgradePlan } from './types.js';
import { sleep, waitFor, WaitAborted } from './wait.js';

type Exec = typeof import('execa').execa;

export const V2_SETTLE_THRESHOLD = 50 * 1000 * 1000;
export const V2_SETTLE_MS = 120_000;

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

export interface UpgradeOptions {
  cluster: ClusterSpec;
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
  const first = observeCluster(o.cluster.members, { timeoutMs: o.timeouts.requestMs, debug: o.debug });
  first.catch(() => undefined);
  if (!o.dryRun) unlock = await acquireLock(file, o);
  o.debug?.(`[kv] lock acquired after ${o.now() - started} ms`);
  try {
    return await execute(o, file, started, first);
  } finally {
    await unlock?.().catch(() => undefined);
  }
}

async function acquireLock(file: string, o: UpgradeOptions): Promise<() => Promise<void>> {
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
  const obsOpts = { timeoutMs: t.requestMs, debug: o.debug };
  let journal = safeRead(file);
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
  const result = planUpgrade(obs, { to: o.to, allowSameVersion: o.allowSameVersion, mayBeDown: journal ? memberInFlight(journal) : undefined });
  if (!result.ok) {
    pre.fail('pre-flight: refused');
    throw new UpgradeRefused(result.reasons, journal ? `fix the cluster, then run the same command to resume (journal ${file}), or roll back: ${o.rollbackCommand}` : 'fix the cluster first; nothing was changed');
  }
  pre.done(`pre-flight: ${o.cluster.members.length} members healthy, one leader, cluster version ${result.plan.clusterVersion}, no alarms`);
  const plan = result.plan;
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

  const spec = (name: string) => o.cluster.members.find((m) => m.name === name)!;
  const targetOf = (m: MemberSpec): MemberTarget => ({ version: o.to, binDir: o.targetBin ?? j.target_bin ?? driver.current(m)?.binDir });
  let leaderId = obs.members.find((m) => m.leaderId)?.leaderId;

  const ranNow = new Set<string>();
  const halt = async (step: JournalStep, reason: string): Promise<UpgradeReport> => {
    step.status = 'failed';
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
    const p = o.reporter.begin(label);
    ranNow.add(step.id);
    step.status = 'running';
    step.startedAt = new Date(o.now()).toISOString();
    delete step.error;
    // Before a member is changed the journal says so (an atomic write; fsync only at the end of a
    // run: an fsync costs 3-10 ms on a busy disk, more than the rest of a step). The
    // other steps are re-runnable and idempotent: only their results are written. If an OS crash
    // loses the last writes, a re-run finds a member down that the journal does not know of and
    // the pre-flight refuses rather than guess.
    if (step.kind === 'stop' || step.kind === 'start') await save(false);
    const t0 = o.now();
    try {
      const detail = await fn(p);
      step.ms = o.now() - t0;
      if (imposed) step.imposedMs = step.ms;
      step.status = 'done';
      step.detail = detail;
      step.finishedAt = new Date(o.now()).toISOString();
      // Results are flushed when a member is back (wait-healthy) or done (settle), and with the
      // next fsync'd write; a crash before that only re-runs a re-runnable step.
      if (step.kind === 'wait-healthy' || step.kind === 'settle' || !step.member) await save(false);
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

  const clusterHealthy = async () => {
    const all = await observeCluster(o.cluster.members, obsOpts);
    const sick = all.members.filter((m) => !m.healthy);
    return { ok: sick.length === 0, sick, all };
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

      if (st('snapshot').status !== 'done' && !stopped) {
        try {
          await runStep(st('snapshot'), `${m.name}: snapshot + verify`, false, async () => {
            const own = new KvClient(ms.endpoint, { timeoutMs: t.requestMs });
            const [h, st0] = await Promise.all([own.health(), own.status().catch(() => undefined)]);
            const healthy = h.healthy && st0 ? ms : await pickHealthy(o.cluster.members, t.requestMs);
            const before = healthy === ms ? st0!.revision : (await new KvClient(healthy.endpoint, { timeoutMs: t.requestMs }).status()).revision;
            const useEtcdctl = o.snapshotVia === 'etcdctl' || (o.snapshotVia === 'auto' && real && Boolean(etcdctl));
            const snap = await saveSnapshot({
              endpoint: healthy.endpoint,
              file: join(o.dataDir, 'kv', 'snapshots', o.cluster.key, `${j.id}-${m.name}.db`),
              timeoutMs: t.snapshotMs,
              etcdctl: useEtcdctl ? etcdctl : undefined,
              exec: o.exec,
              minRevision: before,
            });
            j.snapshots.push({ member: m.name, file: snap.file, revision: snap.revision, bytes: snap.bytes });
            return `${snap.bytes} bytes from ${healthy.name} via ${snap.via}, SHA-256 ok, revision ${snap.revision} ≥ ${before}`;
          });
        } catch (err) {
          return await halt(st('snapshot'), `snapshot of ${m.name} failed before the member was stopped: ${(err as Error).message}`);
        }
      }
      if (st('stop').status !== 'done') {
        if (o.signal.aborted && st('stop').status === 'pending') await interrupted();
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
          await runStep(st('wait-stopped'), `${m.name}: wait until the process is gone`, true, async () => {
            try {
              await waitFor(async () => ((await driver.isRunning(ms)) ? undefined : true), { timeoutMs: t.stopMs, pollMs: Math.min(t.pollMs, 10), what: `${m.name} process exit` });
              return 'process gone';
            } catch (err) {
              if (!driver.kill) throw err;
              o.reporter.note(`${m.name} did not stop within ${t.stopMs} ms: killing it`);
              await driver.kill(ms);
              await waitFor(async () => ((await driver.isRunning(ms)) ? undefined : true), { timeoutMs: 10_000, pollMs: 100, what: `${m.name} process exit after SIGKILL` });
              return 'process killed after the stop timeout';
            }
          });
        } catch (err) {
          return await halt(st('wait-stopped'), `${m.name} is still running: ${(err as Error).message}`);
        }
      }
      if (st('backup-data').status !== 'done' && st('backup-data').status !== 'skipped') {
        if (!driver.backupDataDir) {
          st('backup-data').status = 'skipped';
          st('backup-data').detail = `the ${driver.type} driver cannot copy data dirs: back them up on the hosts (the v3 snapshot is taken)`;
        } else {
          try {
            await runStep(st('backup-data'), `${m.name}: back up the data dir`, false, async () => {
              const dest = join(o.dataDir, 'kv', 'backups', o.cluster.key, `${j.id}-${m.name}`);
              const bytes = await driver.backupDataDir!(ms, dest);
              return `${bytes} bytes copied to ${dest}`;
            });
          } catch (err) {
            return await halt(st('backup-data'), `copying ${m.name}'s data dir failed (the member is stopped: start it again or resume): ${(err as Error).message}`);
          }
        }
      }
      if (st('start').status !== 'done') {
        try {
          await runStep(st('start'), `${m.name}: start ${o.to}`, true, async () => {
            const tg = targetOf(ms);
            if (await driver.isRunning(ms)) return 'already running';
            await driver.start(ms, tg);
            return tg.binDir ? `${tg.binDir}/etcd` : `version ${tg.version}`;
          });
        } catch (err) {
          return await halt(st('start'), `starting ${m.name} on ${o.to} failed: ${(err as Error).message}`);
        }
      }
      if (st('wait-healthy').status !== 'done') {
        try {
          await runStep(st('wait-healthy'), `${m.name}: wait until it and the cluster are healthy and it caught up`, true, async (p) => {
            let mark: { rev: bigint; name: string } | undefined;
            // One observation of every member per poll: the member healthy on the target, every
            // member healthy, one leader, and the member's revision caught up with the leader's.
            const done = await waitFor(async () => {
              if (!(await driver.isRunning(ms))) throw new Error(`${m.name}'s process exited (see its log)`);
              const all = await observeCluster(o.cluster.members, obsOpts);
              const me = all.members.find((x) => x.name === m.name)!;
              const sick = all.members.filter((x) => !x.healthy);
              if (sick.length) {
                p.update(`${m.name}: waiting for ${sick.map((x) => `${x.name} (${x.healthDetail})`).join(', ')}`);
                return undefined;
              }
              if (minor(me.serverVersion) !== o.to) throw new Error(`${m.name} runs ${me.serverVersion}, not ${o.to}`);
              const leaders = new Set(all.members.map((x) => x.leaderId));
              const leader = all.members.find((x) => x.id === me.leaderId);
              if (leaders.size !== 1 || !leader) {
                p.update(`${m.name}: waiting for the members to agree on a leader`);
                return undefined;
              }
              leaderId = leader.id;
              // Caught up: at least the leader's revision as sampled when all was first healthy
              // (under constant writes the leader is always a little ahead of "now").
              mark ??= { rev: BigInt(leader.revision ?? '0'), name: leader.name };
              if (BigInt(me.revision ?? '0') < mark.rev) {
                p.update(`${m.name}: catching up (revision ${me.revision} of ${mark.rev})`);
                return undefined;
              }
              return `${me.serverVersion}, cluster healthy, revision ${me.revision} ≥ leader ${mark.name}'s ${mark.rev}`;
            }, { timeoutMs: t.healthyMs, pollMs: t.pollMs, now: o.now, what: `${m.name} and the cluster healthy on ${o.to}` });
            return done;
          });
        } catch (err) {
          return await halt(st('wait-healthy'), `${m.name} did not become healthy on ${o.to}: ${(err as Error).message}`);
        }
      }
      if (st('settle').status !== 'done') {
        try {
          await runStep(st('settle'), `${m.name}: settle`, true, async () => {
            let ms2 = typeof o.settle === 'number' ? o.settle : 0;
            let why = typeof o.settle === 'number' ? 'as asked' : 'v2 data under 50 MB';
            if (o.settle === 'auto') {
              const bytes = await driver.v2DataBytes?.(ms);
              if (bytes === undefined || bytes > V2_SETTLE_THRESHOLD) {
                ms2 = V2_SETTLE_MS;
                why = bytes === undefined ? 'v2 data size unknown: assuming over 50 MB' : `v2 data is ${bytes} bytes (> 50 MB)`;
              }
            }
            await sleep(ms2, o.signal);
            if (o.signal.aborted) throw new WaitAborted('settle');
            return `${fmtMs(ms2)} (${why})`;
          });
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
        await runStep(cvStep, `cluster: wait for the cluster version to reach ${o.to}`, true, async () => {
          const v = await waitFor(async () => {
            const vs = await Promise.all(o.cluster.members.map((m) => new KvClient(m.endpoint, { timeoutMs: t.requestMs }).version()));
            return vs.every((x) => minor(x.cluster) === o.to) ? vs[0].cluster : undefined;
          }, { timeoutMs: t.clusterVersionMs, pollMs: t.pollMs, what: `cluster version ${o.to}`, now: o.now });
          return `cluster version ${v}${plan.source !== o.to ? ` (updated from ${plan.source}: downgrade is no longer possible)` : ''}`;
        });
      } catch (err) {
        return await halt(cvStep, (err as Error).message);
      }
    }
    if (fhStep.status !== 'done') {
      try {
        await runStep(fhStep, 'cluster: final health pass', false, async () => {
          const hs = await Promise.all(
            o.cluster.members.map((m) =>
              new KvClient(m.endpoint, { timeoutMs: t.requestMs }).health().then(
                (h) => ({ name: m.name, ...h }),
                (err: Error) => ({ name: m.name, healthy: false, detail: err.message }),
              ),
            ),
          );
          const sick = hs.filter((h) => !h.healthy);
          if (sick.length) throw new Error(`unhealthy: ${sick.map((s) => `${s.name} (${s.detail})`).join(', ')}`);
          return `${hs.length} members healthy`;
        });
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

async function pickHealthy(members: MemberSpec[], timeoutMs: number): Promise<MemberSpec> {
  for (const m of members) {
    try {
      if ((await new KvClient(m.endpoint, { timeoutMs }).health()).healthy) return m;
    } catch {
      /* next */
    }
  }
  throw new Error('no healthy member to take a snapshot from');
}

export function totals(steps: JournalStep[], wallMs: number): UpgradeReport['totals'] {
  const imposedMs = steps.reduce((n, s) => n + (s.imposedMs ?? 0), 0);
  return { ms: wallMs, imposedMs, overheadMs: wallMs - imposedMs, overheadRatio: imposedMs > 0 ? (wallMs - imposedMs) / imposedMs : null };
}

export function fmtMs(ms: number): string {
  return ms < 1000 ? `${ms} ms` : ms < 120_000 ? `${(ms / 1000).toFixed(1)} s` : `${(ms / 60_000).toFixed(1)} min`;
}
