import type { KvSession } from '../cluster/session.js';
import { InterruptedError, OpsError } from '../../core/errors.js';
import type { ClusterSpec, MemberSpec } from '../cluster/cluster-file.js';
import type { MemberDriver } from '../drivers/driver.js';
import { journalPath, touchedMembers, writeJournal, type Journal } from '../journal/journal.js';
import { readJournal } from '../journal/read.js';
import { restorePointOf } from '../upgrade/restore-point.js';
import { downgradesBack } from '../rules/summary.js';
import { observeCluster } from '../cluster/observe.js';
import { minor } from '../cluster/parse.js';
import { acquireLock } from '../upgrade/lock.js';
import { type StepReporter, type Timeouts } from '../upgrade/options.js';
import { CycleFailed, cycleSteps, cycleStopped, runCycle, stepsOf } from '../upgrade/cycle.js';
import { cycleProgress } from '../journal/resume-state.js';
import { waitBackStep } from '../upgrade/steps.js';
import type { Look, RunRecord, StepEnv } from '../upgrade/options.js';
import type { MemberListEntry } from '../cluster/parse.js';
import { KvClient } from '../cluster/client.js';
import { leftDown, leftLines, type LeftDown, type LookCommand } from '../ladder/give-back.js';

export interface RollbackOptions {
  cluster: ClusterSpec;
  /** How to reach the cluster (TLS, auth, one pool). */
  session: KvSession;
  driver: MemberDriver;
  dataDir: string;
  timeouts: Timeouts;
  now: () => number;
  reporter: StepReporter;
  signal?: AbortSignal;
  lockStaleMs?: number;
  /** Print what would be done and change nothing (no lock, no journal write, no member touched). */
  dryRun?: boolean;
  /** The debug sink (--debug): its requests, and the crash points of its journal writes. */
  debug?: (line: string) => void;
  /** The exact `opsctl kv restore …` command for a snapshot file (named when a roll-back is refused). */
  restoreCommand?: (file: string, toVersion: string) => string;
  /** The command that shows a member left down (the CLI's, with the cluster's selection and TLS). */
  lookCommand?: LookCommand;
}

export interface RollbackReport {
  status: 'rolled-back' | 'nothing-to-do' | 'planned';
  journal: string;
  members: Array<{ name: string; from: string; to: string; ms: number }>;
  /** --dry-run: the members it would bring back, in order, and why each. */
  plan?: Array<{ name: string; to: string; why: string }>;
  /** Members down that the upgrade never stopped: not waited for, not started; what remains for the operator. */
  left?: Array<LeftDown & { todo: string }>;
}

/**
 * Restarts every member the recorded upgrade stopped, and every member found on the target, back on
 * its previous version, one at a time: the down or sick ones first, and a healthy one only while
 * every other member is healthy (never two down). Each must be healthy, with the whole cluster,
 * before the next. Only while the cluster version has not moved to the target: after that a
 * downgrade is impossible. Progress is journalled after each member; a re-run picks up from what it
 * observes.
 */
export async function runRollback(o: RollbackOptions): Promise<RollbackReport> {
  const file = journalPath(o.dataDir, o.cluster.key);
  const j = readJournal(file);
  if (!j)
    throw new OpsError(`no kv upgrade is recorded for this cluster (${file})`, 1, {
      code: 'no_journal',
      hint: 'roll-back undoes an upgrade opsctl started; there is none here',
    });
  if (j.source === j.target)
    throw new OpsError('the recorded run was a rolling restart on the same version: nothing to roll back', 1, {
      hint: 'if a member is down, start it on its version by hand or resume the restart with the same kv upgrade command',
    });
  const unlock = o.dryRun
    ? () => Promise.resolve(undefined)
    : await acquireLock(file, o).catch((err) => {
        if (err instanceof OpsError) throw err;
        throw new OpsError(`another kv upgrade or roll-back of this cluster is running: ${(err as Error).message}`, 1, {
          code: 'locked',
          hint: 'wait for it to finish',
        });
      });
  const out: RollbackReport['members'] = [];
  try {
    const t = o.timeouts;
    const look = () => observeCluster(o.cluster.members, { session: o.session, timeoutMs: t.requestMs });
    const obs = await look();
    const cluster = obs.members.find((m) => m.clusterVersion)?.clusterVersion;
    // (A downgrade lowers the cluster version first: its members go back up while the downgrade is enabled.)
    if (minor(cluster) === j.target && !j.downgrade) {
      throw new OpsError(
        `kv rollback refused before any change: the cluster version is already ${cluster}: members no longer go back to ${j.source} by a restart on their old binary`,
        1,
        { code: 'rollback_refused', hint: restoreHint(j, o.restoreCommand) },
      );
    }
    const touched = new Set(touchedMembers(j));
    // A roll-back a kill interrupted resumes from its journalled cycles (the member it stopped first);
    // one an older opsctl began (no cycles recorded) is judged by what runs, as that opsctl did.
    const resuming = j.status === 'rolling-back';
    const planned = new Set((j.rollbackSteps ?? []).map((s) => s.member!));
    const progress = cycleProgress(j.rollbackSteps ?? []);
    // Whatever the journal says, a member seen on the target goes back too (the journal may be older
    // than the cluster: an earlier run, a crash before a write). A member down that the journal never
    // stopped is not opsctl's to start: it is left to the operator, and the members given back are not
    // held waiting for it (give back what was taken: upgrade/give-back.ts).
    const todo = o.cluster.members.filter((m) => {
      if (planned.has(m.name)) return !progress.done.includes(m.name);
      const ob = obs.members.find((x) => x.name === m.name);
      if (ob?.reachable && ob.serverVersion) return minor(ob.serverVersion) === j.target;
      return touched.has(m.name);
    });
    const ours = new Set([...touched, ...planned, ...todo.map((m) => m.name)]);
    const notOurs = new Set(leftDown(obs, ours).map((x) => x.name));
    // The member the journal stopped first, then the down and sick ones: bringing them back never lowers the number of healthy members.
    const healthyNow = (name: string) => obs.members.find((x) => x.name === name)?.healthy ?? false;
    const rank = (name: string) => (name === progress.inFlight?.member ? -1 : Number(healthyNow(name)));
    todo.sort((a, b) => rank(a.name) - rank(b.name));
    const prevOf = (m: MemberSpec) => {
      // Back to the source version (a journal started mid-way may record the target as "previous").
      const rec = j.previous[m.name];
      return rec?.version === j.source ? rec : { version: j.source };
    };
    if (o.dryRun) {
      const plan = todo.map((m) => {
        const ob = obs.members.find((x) => x.name === m.name);
        const why =
          m.name === progress.inFlight?.member
            ? 'stopped by the roll-back a kill interrupted'
            : !ob?.reachable
              ? `down: the upgrade stopped it; back on the version it last ran healthy${notOurs.size ? `, without waiting for ${[...notOurs].join(', ')}` : ''}`
              : ob.serverVersion && minor(ob.serverVersion) === j.target
                ? `runs ${ob.serverVersion}`
                : 'stopped by the upgrade';
        return { name: m.name, to: prevOf(m).version, why };
      });
      const left = leftOf(leftDown(obs, ours), o.lookCommand);
      return { status: plan.length ? 'planned' : 'nothing-to-do', journal: file, members: [], plan, ...(left.length ? { left } : {}) };
    }
    o.debug?.('[kv] point-context: rollback');
    if (resuming && !j.rollbackSteps)
      o.reporter.note(
        `resuming the roll-back recorded in ${file} by an earlier opsctl (no member cycles recorded): the members to bring back are judged by what runs`,
      );
    j.status = 'rolling-back';
    j.rollback ??= [];
    j.rollbackSteps ??= [];
    for (const m of todo) if (!planned.has(m.name)) j.rollbackSteps.push(...cycleSteps('rollback', m.name, { whileDown: false }));
    await writeJournal(file, j, o.now(), { trace: o.debug });
    const membership = await memberListOf(o);

    for (const m of todo) {
      const steps = stepsOf(j.rollbackSteps, 'rollback', m.name);
      if (o.signal?.aborted && !cycleStopped(steps)) {
        throw Object.assign(new InterruptedError(`kv rollback interrupted between members (${out.map((x) => x.name).join(', ') || 'none'} done)`), {
          hint: 'run opsctl kv rollback again to finish: it resumes from its journal',
        });
      }
      const prev = prevOf(m);
      const down = !obs.members.find((x) => x.name === m.name)?.reachable;
      const p = o.reporter.begin(
        down
          ? `${m.name}: back on ${prev.version}, the version it last ran healthy (the upgrade stopped it)${notOurs.size ? `; not waiting for ${[...notOurs].join(', ')}: opsctl did not stop ${notOurs.size === 1 ? 'it' : 'them'}` : ''}`
          : `${m.name}: back to ${prev.version}`,
      );
      const t0 = o.now();
      const env: StepEnv<'reporter' | 'timeouts' | 'now' | Look | 'to', RunRecord> = {
        o: { cluster: o.cluster, session: o.session, timeouts: t, debug: o.debug, now: o.now, reporter: o.reporter, to: prev.version },
        driver: o.driver,
        journal: j,
        real: false,
        membership,
        checkpoint: () => writeJournal(file, j, o.now(), { durable: false, trace: o.debug }),
      };
      try {
        await runCycle(
          { env, save: ({ durable }) => writeJournal(file, j, o.now(), { durable, trace: o.debug }) },
          {
            member: m,
            steps,
            target: prev,
            gate: () => othersHealthy(o, m, out.length),
            waitBack: (pr) => waitBackStep(env, m, pr, () => undefined, undefined, notOurs),
            onBack: () => j.rollback!.push({ member: m.name, to: prev.version, at: new Date(o.now()).toISOString(), ms: o.now() - t0 }),
          },
        );
      } catch (err) {
        await writeJournal(file, j, o.now(), { trace: o.debug });
        // (a refusal of opsctl's own as it is; an engine's failure is the roll-back's failure, said with what is back)
        if (err instanceof CycleFailed && err.cause instanceof OpsError && err.cause.code !== 'engine') throw err.cause;
        p.fail(`${m.name}: ${(err as Error).message}`);
        throw new OpsError(`roll-back of ${m.name} to ${prev.version} failed: ${(err as Error).message}`, out.length ? 3 : 1, {
          code: 'rollback_failed',
          hint: `see ${m.name}'s log; fix it, then run opsctl kv rollback again (${out.length} member(s) already back; it resumes from its journal)`,
        });
      }
      const ms = o.now() - t0;
      p.done(
        `${m.name}: back on ${prev.version}, ${notOurs.size ? `healthy with the members up (${[...notOurs].join(', ')} left as found)` : 'cluster healthy'}`,
      );
      out.push({ name: m.name, from: j.target, to: prev.version, ms });
    }
    j.status = 'rolled-back';
    for (const s of j.steps) if (s.status === 'running' || s.status === 'failed') s.status = 'pending';
    await writeJournal(file, j, o.now(), { trace: o.debug });
    // What remains for the operator: the members down on their own, as they are now.
    const left = notOurs.size ? leftOf(leftDown(await look(), ours), o.lookCommand) : [];
    return { status: out.length || resuming ? 'rolled-back' : 'nothing-to-do', journal: file, members: out, ...(left.length ? { left } : {}) };
  } finally {
    await unlock().catch(() => undefined);
  }
}

/** The members left down, each with the line that says what remains for the operator. */
function leftOf(left: LeftDown[], look?: LookCommand): NonNullable<RollbackReport['left']> {
  const lines = leftLines(left, look);
  return left.map((m, i) => ({ ...m, todo: lines[i]! }));
}

/** A healthy member is stopped only while every other member is healthy (never two down); a down or sick one always may be. */
async function othersHealthy(o: RollbackOptions, m: MemberSpec, backAlready: number): Promise<void> {
  const now = await observeCluster(o.cluster.members, { session: o.session, timeoutMs: o.timeouts.requestMs });
  const others = now.members.filter((x) => x.name !== m.name && !x.healthy);
  const me = now.members.find((x) => x.name === m.name);
  if (me?.healthy && others.length) {
    throw new OpsError(
      `not stopping ${m.name}: ${others.map((x) => `${x.name} is not healthy (${x.error ?? x.healthDetail})`).join(', ')}`,
      backAlready ? 3 : 1,
      {
        code: 'rollback_unsafe',
        hint: `stopping ${m.name} now would take a second member down: bring ${others.map((x) => x.name).join(', ')} back first, then run opsctl kv rollback again`,
      },
    );
  }
}

/** The cluster's member list (the health wait compares nothing with it; a gate of the cycle may), from the first member that answers. */
async function memberListOf(o: RollbackOptions): Promise<MemberListEntry[]> {
  for (const m of o.cluster.members) {
    try {
      return await new KvClient(m.endpoint, { session: o.session, timeoutMs: o.timeouts.requestMs }).members();
    } catch {
      // the next member
    }
  }
  return [];
}

/** After the cluster version moved: the way back is the downgrade where etcd has one (3.6 → 3.5, 3.7 → 3.6), else a restore from the journal's restore point. */
function restoreHint(j: Journal, command = (file: string, v: string) => `opsctl kv restore --snapshot ${file} --to-version ${v}`): string {
  const rp = restorePointOf(j);
  const restore = rp
    ? `a restore from the snapshot taken before the first stop (revision ${rp.revision}${rp.keys === undefined ? '' : `, ${rp.keys} keys`}); writes after it are lost: ${command(rp.file, j.source)}`
    : `a restore from a snapshot you took before the upgrade (none is recorded for it): opsctl kv restore --snapshot FILE --to-version ${j.source}`;
  const downgrade = downgradesBack(j.source, j.target)
    ? `opsctl kv downgrade --to ${j.source} (etcd's downgrade API, member by member, no write lost), or `
    : '';
  return `the way back: ${downgrade}${restore}`;
}
