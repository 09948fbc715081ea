import { InterruptedError, OpsError } from '../../core/errors.js';
import type { MemberSpec } from '../cluster/cluster-file.js';
import type { MemberDriver, MemberTarget } from '../drivers/driver.js';
import { journalStats, writeJournal, type Journal, type JournalStep } from '../journal/journal.js';
import { rollBackMember } from './on-failure.js';
import { nextMember } from './planner.js';
import { findEtcdctl } from '../cluster/etcdctl.js';
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
  WrongBinary,
} from './steps.js';
import type { MemberListEntry } from '../cluster/parse.js';
import type { ClusterObservation } from '../cluster/types.js';
import { WaitAborted } from '../cluster/wait.js';
import { GateRefused, gateWhileDown, MemberLost } from './gate.js';
import { endRun, signalWords } from '../journal/runs.js';
import { runJournal } from './run-journal.js';
import { defragMember } from './defrag.js';
import { backToPending, dropBackups, describeBackupFailure, notStarted, spaceBeforeStop, startOnPrevious } from './backup-guard.js';
import { hashesNow } from './consistency.js';
import { fmtMs, totals, type Base, type StepEnv, type UpgradeOptions, type UpgradeReport } from './options.js';
import type { Preflight } from './preflight.js';

/** How old the pre-flight's look may be to serve as the first member's gate before its snapshot (never its stop). */
const PREFLIGHT_LOOK_MS = 1000;

/** A step's body: gets the spinner, returns the detail line. */
type StepBody = (p: { update(t: string): void }) => Promise<string | undefined>;

type HaltOr<T = undefined> = Promise<UpgradeReport | T>;

/** One run of the journalled plan: the steps of each member in turn, then the cluster's. */
export class UpgradeRun {
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
    const j = runJournal(o, driver, pre, resumed);
    await writeJournal(file, j, o.now(), false, o.debug);
    o.debug?.(`[kv] journal written after ${o.now() - started} ms`);
    const etcdctl = o.snapshotVia === 'gateway' ? undefined : findEtcdctl(o.etcdctl);
    if (o.snapshotVia === 'etcdctl' && !etcdctl)
      throw new OpsError('--snapshot-via etcdctl: etcdctl not found', 2, { hint: 'install etcd-client, or pass --etcdctl PATH' });
    const real = pre.obs.members.some((m) => m.real) || Boolean(driver.etcdFromDir);
    const env: StepEnv = {
      o,
      driver,
      journal: j,
      etcdctl,
      real,
      checkpoint: () => writeJournal(file, j, o.now(), false, o.debug),
      membership: pre.membership.list,
    };
    return new UpgradeRun(o, driver, file, started, base, pre, j, env);
  }

  private save(durable = true): Promise<void> {
    return writeJournal(this.file, this.j, this.o.now(), durable, this.o.debug);
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
      ...(j.copies?.length ? { copies: j.copies } : {}),
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
      if (err instanceof WrongBinary) {
        const back = await notStarted(this.env, ms);
        return this.halt(step, `${reason}; ${back.detail}`, back.ok ? 'pending' : 'failed');
      }
      if (this.o.onFailure !== 'rollback') return this.halt(step, reason);
      const back = await rollBackMember(this.env, ms, step, reason);
      return this.halt(step, back.reason, back.status);
    }
  }

  /** Every member with pending steps, one at a time (never the current leader while another waits), then the cluster's steps. */
  async go(): Promise<UpgradeReport> {
    const { j } = this;
    const pending = () => j.members.filter((m) => j.steps.some((s) => s.member === m.name && s.status !== 'done' && s.status !== 'skipped'));
    try {
      // a put-back a kill interrupted is finished first; the run then halts as that one would have
      const pb = j.puttingBack;
      const pbStep = pb && j.steps.find((s) => s.id === pb.step);
      const pbMember = pb && this.o.cluster.members.find((m) => m.name === pb.member);
      const back = pb && pbStep && pbMember ? await rollBackMember(this.env, pbMember, pbStep, pb.reason) : undefined;
      if (back) return await this.halt(pbStep!, back.reason, back.status);
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
    // The hop's binary; only a rolling restart on the same version falls back to the one the member runs.
    const own = o.allowSameVersion ? this.driver.current(ms)?.binDir : undefined;
    const target: MemberTarget = { version: o.to, binDir: o.targetBin ?? this.j.target_bin ?? own };
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
    const c = await hashesNow(this.env, at, seen);
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
    // the copies go before the journal says done: a kill between them removes the rest on the resume
    if (!j.copies) j.copies = await dropBackups(this.env);
    j.status = 'done';
    endRun(j, 'done', undefined, new Date(o.now()).toISOString());
    o.debug?.(`[kv] steps finished after ${o.now() - this.started} ms; ${journalStats.writes} journal writes took ${journalStats.ms.toFixed(1)} ms`);
    await this.save();
    return this.report('done');
  }
}
