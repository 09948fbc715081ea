import { InterruptedError, OpsError } from '../../core/errors.js';
import type { MemberSpec } from '../cluster/cluster-file.js';
import type { MemberDriver } from '../drivers/driver.js';
import { journalStats, writeJournal, type Journal, type JournalStep } from '../journal/journal.js';
import { rollBackMember } from './on-failure.js';
import { nextMember } from './planner.js';
import { findEtcdctl } from '../cluster/etcdctl.js';
import { backupStep, finalHealthStep, gateBeforeStop, settleStep, snapshotStep, waitBackStep, waitClusterVersionStep, WrongBinary } from './steps.js';
import { CYCLE_STEPS, CycleFailed, cycleDone, runCycle } from './cycle.js';
import type { MemberListEntry } from '../cluster/parse.js';
import type { ClusterObservation } from '../cluster/types.js';
import { WaitAborted } from '../cluster/wait.js';
import { GateRefused, gateWhileDown, MemberLost } from './gate.js';
import { endRun, signalWords } from '../journal/runs.js';
import { runJournal } from './run-journal.js';
import { keepRunRecord } from '../journal/copies.js';
import { readJournal } from '../journal/read.js';
import { defragMember } from './defrag.js';
import { backToPending, describeBackupFailure, finishBackups, notStarted, spaceBeforeStop, startOnPrevious } from './backup-guard.js';
import { hashesNow } from './consistency.js';
import { fmtMs, totals, type Base, type Running, type StepEnv, type UpgradeOptions, type UpgradeReport } from './options.js';
import type { Preflight } from './preflight.js';

/** How old the pre-flight's look may be to serve as the first member's gate before its snapshot (never its stop). */
const PREFLIGHT_LOOK_MS = 1000;

/** A step's body: gets the spinner, returns the detail line. */
type StepBody = (p: { update(t: string): void }) => Promise<string | undefined>;

type HaltOr<T = undefined> = Promise<UpgradeReport | T>;

/** A member lost (or the cluster changed) while the member being upgraded is down, before its copy began. */
class LostWhileDown extends Error {
  constructor(
    readonly lost: MemberLost,
    message: string,
  ) {
    super(message);
  }
}

/** What one run is: its journal's file, when it started, the report's base and the pre-flight's look. */
interface RunFacts {
  file: string;
  started: number;
  base: Base;
  pre: Preflight;
}

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

  private readonly o: Pick<UpgradeOptions, Running>;
  private readonly j: Journal;

  private constructor(
    private readonly env: StepEnv<Running>,
    private readonly run: RunFacts,
  ) {
    const { pre } = run;
    this.o = env.o;
    this.j = env.journal;
    this.leaderId = pre.obs.members.find((m) => m.leaderId)?.leaderId;
    this.lastLook = { at: pre.observedAt, obs: pre.obs, list: pre.membership.list };
  }

  /** A new journal (or the resumed one, owned by this run now), written before anything changes. */
  static async start(
    o: Pick<UpgradeOptions, Running>,
    driver: MemberDriver,
    { file, started, base, pre, resumed }: RunFacts & { resumed: Journal | undefined },
  ): Promise<UpgradeRun> {
    // (an earlier run's record of the copies it left on the hosts outlives this run's journal: journal/copies.ts)
    if (!resumed) keepRunRecord(file, readJournal);
    const j = runJournal(o, driver, pre, resumed);
    await writeJournal(file, j, o.now(), { durable: false, trace: o.debug });
    o.debug?.(`[kv] journal written after ${o.now() - started} ms`);
    const etcdctl = o.snapshotVia === 'gateway' ? undefined : findEtcdctl(o.etcdctl);
    if (o.snapshotVia === 'etcdctl' && !etcdctl)
      throw new OpsError('--snapshot-via etcdctl: etcdctl not found', 2, { hint: 'install etcd-client, or pass --etcdctl PATH' });
    const real = pre.obs.members.some((m) => m.real) || Boolean(driver.etcdFromDir);
    const env: StepEnv<Running> = {
      o,
      driver,
      journal: j,
      etcdctl,
      real,
      checkpoint: () => writeJournal(file, j, o.now(), { durable: false, trace: o.debug }),
      membership: pre.membership.list,
    };
    return new UpgradeRun(env, { file, started, base, pre });
  }

  private save({ durable = true }: { durable?: boolean } = {}): Promise<void> {
    return writeJournal(this.run.file, this.j, this.o.now(), { durable, trace: this.o.debug });
  }

  private report(status: UpgradeReport['status']): UpgradeReport {
    const { j } = this;
    // This run's time against this run's waits (a resumed run's journal also holds earlier steps).
    const mine = j.steps.filter((st) => this.ranNow.has(st.id));
    return {
      ...this.run.base,
      status,
      journal: this.run.file,
      run: j.id,
      steps: j.steps,
      snapshots: j.snapshots,
      totals: totals(mine, this.o.now() - this.run.started),
      halt: j.halt,
      ...(j.consistency ? { consistency: j.consistency } : {}),
      ...(j.defrag ? { defrag: j.defrag } : {}),
      ...(j.copies?.length ? { copies: j.copies } : {}),
      ...(j.dataCopies?.length ? { dataCopies: j.dataCopies } : {}),
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
   * Runs one journalled step around a member's cycle (snapshot, settle, the cluster's), timing it, with its
   * `label`; `imposed` says whether its time is the cluster's own wait. These steps change no member: they are
   * re-runnable and idempotent, only their results are written, without a sync. (The steps that change
   * a member are the cycle's, written ahead of the change: cycle.ts.)
   */
  private async step(step: JournalStep, { label, imposed = false }: { label: string; imposed?: boolean }, fn: StepBody): Promise<string | undefined> {
    const { o } = this;
    this.lastLook = undefined; // a step ran: the pre-flight's look is no longer the cluster as it is
    const p = o.reporter.begin(label);
    this.ranNow.add(step.id);
    step.status = 'running';
    step.startedAt = new Date(o.now()).toISOString();
    delete step.error;
    const t0 = o.now();
    try {
      const detail = await fn(p);
      step.ms = o.now() - t0;
      if (imposed) step.imposedMs = step.ms;
      step.status = 'done';
      step.detail = detail;
      step.finishedAt = new Date(o.now()).toISOString();
      // Results are written when a member is back (the cycle's last write; a settle that waits writes
      // first), when its settle is done, before the next member-changing step, and at the end.
      if (step.kind === 'settle') await this.save({ durable: false });
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
  private async guarded(step: JournalStep, { why, ...words }: { label: string; imposed?: boolean; why: string }, fn: StepBody): HaltOr {
    try {
      await this.step(step, words, fn);
      return undefined;
    } catch (err) {
      if (err instanceof WaitAborted) throw err;
      return this.halt(step, `${why}${(err as Error).message}`);
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
    const seen: { back?: ClusterObservation } = {};
    return this.chain([() => this.beforeStop(ms, st), () => this.cycle(ms, steps, seen), () => this.settle(ms, st, seen.back)]);
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
    if (this.o.noSnapshot) {
      Object.assign(st('snapshot'), { status: 'skipped', detail: "not taken: the rehearsal's clone (its way back is the cluster it was copied from)" });
      return undefined;
    }
    return this.guarded(st('snapshot'), { label: `${ms.name}: snapshot + verify`, why: `snapshot of ${ms.name} failed before the member was stopped: ` }, () =>
      snapshotStep(this.env, ms, this.gated?.obs),
    );
  }

  /**
   * The member's cycle (cycle.ts: stop, wait until the process is gone, copy its data dir, start
   * on the target, wait until it and the cluster are healthy and it caught up), with what the upgrade adds
   * to it: before a first stop, Ctrl-C and the space for its backup; at the stop, the whole-cluster look
   * with nothing between it and the stop command; before the copy, the other members' look; and what a
   * failed step does (cycleHalt). `seen.back`: the health poll's look that saw the member back.
   */
  private async cycle(ms: MemberSpec, steps: JournalStep[], seen: { back?: ClusterObservation }): HaltOr<undefined> {
    const { o } = this;
    const mine = steps.filter((s) => (CYCLE_STEPS as readonly string[]).includes(s.kind));
    if (cycleDone(mine)) return undefined;
    const stop = mine.find((s) => s.kind === 'stop')!;
    if (stop.status === 'pending') {
      if (o.signal.aborted) await this.interrupted();
      const tight = await spaceBeforeStop(this.env, ms).then(
        (t) => t && `${t}; ${ms.name} was not touched: free space there (or pass --no-backup), then resume with the same command`,
        (err: Error) =>
          `not stopping ${ms.name}: its backup could not be measured: ${err.message}; ${ms.name} was not touched: fix what stopped the measure (the host's reach, or the backup directory), or pass --no-backup, then resume with the same command`,
      );
      if (tight) return this.halt(stop, tight, 'pending');
    }
    const backup = mine.find((s) => s.kind === 'backup-data')!;
    if (backup.status !== 'done' && backup.status !== 'skipped' && (o.noBackup || !this.env.driver.backupDataDir)) {
      backup.status = 'skipped';
      backup.detail = o.noBackup
        ? 'not backed up: --no-backup (the v3 snapshot is taken)'
        : 'not backed up: the driver has no backup command (the v3 snapshot is taken)';
    }
    // The hop's binary; only a rolling restart on the same version falls back to the one the member runs.
    const own = o.allowSameVersion ? this.env.driver.current(ms)?.binDir : undefined;
    try {
      await runCycle(
        { env: this.env, save: (how) => this.save(how) },
        {
          member: ms,
          steps: mine,
          target: { version: o.to, binDir: o.targetBin ?? this.j.target_bin ?? own },
          gateFirstStop: true,
          gate: ({ resumed }) =>
            gateBeforeStop(this.env, ms, undefined, { resumed }).then(
              () => undefined,
              (err: Error) => {
                throw new GateRefused(err.message);
              },
            ),
          whileDown: (p) => this.copy(ms, backup, p),
          waitBack: (p) =>
            waitBackStep(
              this.env,
              ms,
              p,
              (id) => (this.leaderId = id),
              (obs) => (seen.back = obs),
            ),
          imposed: ['stop', 'wait-stopped', 'start', 'wait-healthy'],
          begun: (s) => {
            this.ranNow.add(s.id);
            this.lastLook = undefined; // a step ran: the pre-flight's look is no longer the cluster as it is
          },
          interrupts: (err) => err instanceof WaitAborted,
        },
      );
      return undefined;
    } catch (err) {
      if (!(err instanceof CycleFailed)) throw err;
      return this.cycleHalt(ms, err.step, err.cause);
    }
  }

  /**
   * The `backup-data` step's body: the whole-cluster look (the others must all still be there before a
   * copy that can take minutes), then the copy. The part of the look the other members took to agree on a
   * leader again (after a leader's stop) is the cluster's own wait.
   */
  private async copy(ms: MemberSpec, step: JournalStep, p: { update(t: string): void }): Promise<string> {
    p.update(`${ms.name}: the other members healthy before its backup`);
    let electionMs = 0;
    await gateWhileDown(this.env, ms, (w) => (electionMs = w)).catch((err: Error) => {
      const lost = err instanceof MemberLost ? err : new MemberLost([], err.message);
      throw new LostWhileDown(lost, `${lost.lost.length ? `${lost.lost.join(', ')} lost` : 'the cluster changed'} while ${ms.name} is down: ${lost.message}`);
    });
    if (electionMs > 0) step.imposedMs = electionMs;
    return backupStep(this.env, ms);
  }

  /**
   * A failed step of the cycle halts the run (exit 3), saying why: a refused gate or a lost member leave
   * or bring the member back untouched (its steps pending); a failed copy starts it again on its old binary
   * first; a failed start or health wait, with --on-failure rollback, puts it back on its old binary and data.
   */
  private async cycleHalt(ms: MemberSpec, step: JournalStep, err: Error): Promise<UpgradeReport> {
    const { o } = this;
    const steps = this.j.steps.filter((s) => s.member === ms.name);
    switch (step.kind) {
      case 'stop':
        if (err instanceof GateRefused)
          return this.halt(step, `${err.message}; ${ms.name} was not touched: fix the cluster, then resume with the same command`, 'pending');
        return this.halt(step, `stopping ${ms.name} failed: ${err.message}`);
      case 'wait-stopped':
        return this.halt(step, `${ms.name} is still running: ${err.message}`);
      case 'backup-data': {
        if (err instanceof LostWhileDown) {
          // (the copy never began: the step as before it)
          step.status = 'pending';
          delete step.error;
          const { lost } = err;
          const who = lost.lost.length ? lost.lost.join(', ') : 'the cluster';
          const back = await startOnPrevious(this.env, ms, 'member');
          if (back.ok) backToPending(steps);
          return this.halt(
            step,
            `${lost.lost.length ? `${who} lost` : 'the cluster changed'} while ${ms.name} was down for its upgrade (${lost.message}): ${ms.name} was brought back before anything else; ${back.detail}; fix ${who}, then resume with the same command`,
            'pending',
          );
        }
        // Never left down with a resume that fails the same way: back on its old binary first.
        const why = await describeBackupFailure(this.env, ms, err);
        const back = await startOnPrevious(this.env, ms, 'cluster');
        if (back.ok) backToPending(steps);
        return this.halt(
          step,
          `copying ${ms.name}'s data dir failed after its stop: ${why}; ${back.detail}${back.ok ? `; free space for the backup (or pass --no-backup), then resume with the same command` : ''}`,
          back.ok ? 'pending' : 'failed',
        );
      }
      default: {
        // the member's way back on the target: start, wait-healthy
        const reason =
          step.kind === 'start' ? `starting ${ms.name} on ${o.to} failed: ${err.message}` : `${ms.name} did not become healthy on ${o.to}: ${err.message}`;
        if (err instanceof WrongBinary) {
          const back = await notStarted(this.env, ms);
          return this.halt(step, `${reason}; ${back.detail}`, back.ok ? 'pending' : 'failed');
        }
        if (o.onFailure !== 'rollback') return this.halt(step, reason);
        const back = await rollBackMember(this.env, ms, step, reason);
        return this.halt(step, back.reason, back.status);
      }
    }
  }

  /** After the member is back: the KV hashes compared, then the settle before the next member (none after the last one of the hop). */
  private async settle(ms: MemberSpec, st: (k: string) => JournalStep, backLook: ClusterObservation | undefined): HaltOr<undefined> {
    if (st('settle').status === 'done') return undefined;
    const diverged = await this.hashCheck(`after ${ms.name} is back on ${this.o.to}`, st('settle'), 'failed', backLook);
    if (diverged) return diverged;
    try {
      // Only between members: none after the last one of the hop.
      const last = !this.j.steps.some((x) => x.member && x.member !== ms.name && x.status !== 'done' && x.status !== 'skipped');
      await this.step(st('settle'), { label: `${ms.name}: settle`, imposed: true }, () => settleStep(this.env, ms, fmtMs, { last }));
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
      const beside = o.atClusterVersionWait?.(o.to);
      const label = `cluster: wait for the cluster version to reach ${o.to}`;
      const waited = async () => (await Promise.all([waitClusterVersionStep(this.env, this.run.pre.plan.source), beside]))[0];
      const halted = await this.guarded(cvStep, { label, imposed: true, why: '' }, waited);
      if (halted) return halted;
    }
    if (fhStep.status !== 'done') {
      const halted = await this.guarded(fhStep, { label: 'cluster: final health pass', why: '' }, () => finalHealthStep(this.env));
      if (halted) return halted;
    }
    // the copies and snapshots go before the journal says done: a kill between them removes the rest on the resume
    await finishBackups(this.env);
    j.status = 'done';
    endRun(j, 'done', undefined, new Date(o.now()).toISOString());
    o.debug?.(`[kv] steps finished after ${o.now() - this.run.started} ms; ${journalStats.writes} journal writes took ${journalStats.ms.toFixed(1)} ms`);
    await this.save();
    return this.report('done');
  }
}
