/**
 * kv upgrade --to 3.6 --fix-v2store: the 3.5 → 3.6 guide's fix for custom v2 entries left in a
 * 3.5 member's WAL (`etcdutl check v2store`: "detected custom v2 content in WAL records";
 * etcd-io/etcd#20809, #21849), applied by opsctl member by member before the hop's first stop:
 * gate, verified snapshot, stop, data-dir backup, start on 3.5 with snapshot-count 1 (its config
 * file's copy: etcd reads no flags beside one), wait until a new v2 snapshot file is written past
 * the WAL's v2 entries and `etcdutl check v2store` passes, stop, start with its own config again,
 * healthy and caught up: two cycles of the one member-cycle operation (kv/upgrade/cycle.ts), journalled
 * as it journals them in the fix's own journal (v2store-fix-file.ts), so a kill -9 or Ctrl-C anywhere
 * resumes at that member and step, and a member's own config is never left edited.
 *
 * The same procedure on 3.6 before the first 3.7 start (`minor: '3.6'`, journals/<cluster>.v2store-fix-3.6.json):
 * a snapshot written on 3.6 past the v2 requests every 3.5 start left in the WAL, which 3.7 cannot
 * replay; checked by reading each WAL (`check`) instead of etcdutl (3.6's has no check v2store).
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { InterruptedError, OpsError } from '../../core/errors.js';
import type { MemberSpec } from '../cluster/cluster-file.js';
import { KvClient } from '../cluster/client.js';
import { newestSnapName } from '../drivers/member-files.js';
import { placeOf, type MemberDriver, type MemberTarget } from '../drivers/driver.js';
import { acquireLock } from '../upgrade/lock.js';
import type { StepEnv, UpgradeOptions, Look, Snapshotting, Waits } from '../upgrade/options.js';
import { writeRecord } from '../journal/journal.js';
import type { MemberListEntry } from '../cluster/parse.js';
import { backupStep, gateBeforeStop, snapshotStep, waitBackStep } from '../upgrade/steps.js';
import { waitFor } from '../cluster/wait.js';
import { CycleFailed, runCycle, type CycleEnv, type StepProgress } from '../upgrade/cycle.js';
import { cyclesOf, readV2Fix, roundSteps, unfinishedV2Fix, v2FixPath, type V2FixFile, type V2FixMember } from './v2store-fix-file.js';
import { ETCDUTL_ENV, memberDirs, v2storeArgs } from './v2store-check.js';

/** The setting the guide's fix starts a member with, once. */
export const FIX_SETTINGS = { 'snapshot-count': '1' };

/**
 * What the fix reads of the run it goes before: the look at the members and the clock (Waits), its snapshots
 * and their upload (Snapshotting, offsite), the data dir its journal and copies go to, the lock, the reporter.
 */
export type Fixing = Waits | Snapshotting | 'dataDir' | 'offsite' | 'lockStaleMs' | 'reporter';

/** The fix itself, as the hop's checks named it: which members, on which minor, and how each is checked after. */
export interface V2Fix {
  /** The members to fix (the check named them); a resume takes the journal's list. */
  members: string[];
  /** The minor the members run and are restarted on: 3.5 before the 3.6 hop, 3.6 before the first 3.7 start. */
  minor: string;
  /** `etcdutl` of 3.5.26 or later, for the check after each member (unused when `check` is given). */
  etcdutl: string;
  /** The check after each member and each round (default: etcdutl check v2store). */
  check?: (m: MemberSpec) => Promise<V2Check>;
}

/** A member's check after the fix: whether it passes, and what the check said. */
export interface V2Check {
  member: string;
  ok: boolean;
  said: string;
}

export interface V2FixResult {
  file: string;
  members: Array<{ name: string; log: string[]; check?: string }>;
}

/** Runs (or resumes) the fix, member by member; throws naming the member where it halts. */
export async function fixV2store(o: Pick<UpgradeOptions, Fixing>, driver: MemberDriver, job: V2Fix): Promise<V2FixResult> {
  const { minor } = job;
  if (!placeOf(driver).startsHere)
    throw new OpsError('--fix-v2store: opsctl applies the fix only to members it starts itself (kv sandbox, local data dirs)', 1, {
      code: 'v2store_fix_unsupported',
      hint: `on each member host, one at a time: restart it on ${minor} with snapshot-count: 1 in its config file, wait for a new member/snap/*.snap, put its config back, restart it${job.check ? '' : '; then etcdutl check v2store --data-dir DIR'}`,
    });
  const file = v2FixPath(o.dataDir, o.cluster.key, minor);
  const unlock = await acquireLock(file, o, (f) => readV2Fix(f)?.owner);
  try {
    const now = () => new Date(o.now()).toISOString();
    o.debug?.(`[kv] point-context: fix-${minor}`);
    const j: V2FixFile = unfinishedV2Fix(o.dataDir, o.cluster.key, minor) ?? {
      version: 2,
      kind: 'v2store-fix',
      id: `${now().replace(/[-:]/g, '').slice(0, 15)}-${randomBytes(3).toString('hex')}`,
      cluster: o.cluster.key,
      source: minor,
      target: minor,
      status: 'running',
      createdAt: now(),
      updatedAt: now(),
      owner: { pid: process.pid, host: '' },
      members: job.members.map((name) => ({ name, log: [] })),
      steps: job.members.flatMap((name) => roundSteps(1, name)),
      snapshots: [],
      round: 1,
      checks: [],
    };
    j.status = 'running';
    j.owner = { pid: process.pid, host: hostname() };
    delete j.halt;
    const save = ({ durable = true }: { durable?: boolean } = {}) => writeRecord(file, j, o.now(), { durable, trace: o.debug });
    await save();
    const membership = await memberList(o);
    const env: StepEnv<Fixing | 'to', V2FixFile> = {
      o: { ...o, to: minor },
      driver,
      // snapshotStep and backupStep name their files by the fix's id and keep its snapshot list
      journal: j,
      etcdctl: o.etcdctl,
      real: true,
      membership,
      checkpoint: save,
    };
    // Rounds: a member that serves the v2 API (3.5 with enable-v2, until its restart on a config
    // without it) answers every /health with a v2 QGET through raft (measured on 3.5.35: etcdhttp's
    // HandleHealthForV2), so members fixed early can take new v2 entries while the others are still
    // restarted. After each round every member is checked; a second round fixes what the first
    // could not, once every member runs its new config. A third is not tried: something keeps
    // writing v2 requests (a client of the v2 API), and that is the operator's to stop.
    for (;;) {
      for (const st of j.members) {
        const { fix, back } = cyclesOf(j, st.name);
        if (!fix.length || back.every((x) => x.status === 'done')) continue;
        if (o.signal.aborted) {
          j.status = 'interrupted';
          await save();
          throw Object.assign(new InterruptedError('kv upgrade --fix-v2store interrupted between members; its journal is consistent'), {
            hint: `run the same command again to finish the fix (journal: ${file})`,
          });
        }
        const m = o.cluster.members.find((x) => x.name === st.name);
        if (!m) throw new OpsError(`--fix-v2store: member ${st.name} of ${file} is not in the cluster`, 1, { code: 'journal_invalid' });
        try {
          await fixMember(job, env, m, st, save);
        } catch (err) {
          j.status = 'halted';
          j.halt = { member: m.name, reason: (err as Error).message };
          await save();
          const at = err instanceof CycleFailed ? err.step.id : `r${j.round}-fix/${m.name}/snapshot`;
          throw new OpsError(`--fix-v2store halted at ${m.name} (${at}): ${(err as Error).message}`, 3, {
            code: 'v2store_fix_halted',
            hint: `the other members were not touched; fix the cause and run the same command again to resume (journal: ${file})`,
          });
        }
      }
      const checked = await Promise.all(o.cluster.members.map(checker(o, job, driver)));
      j.checks.push(...checked.map((c) => ({ round: j.round, ...c })));
      const failing = checked.filter((c) => !c.ok);
      o.reporter.note(
        `--fix-v2store round ${j.round}: ${job.check ? 'the WAL read' : 'etcdutl check v2store'} ${failing.length ? `still fails on ${failing.map((c) => `${c.member} (${c.said})`).join(', ')}` : 'passes on every member'}`,
      );
      if (!failing.length) break;
      const inStore = failing.filter((c) => /v2store|both/i.test(c.said));
      if (j.round >= 2 || inStore.length) {
        j.status = 'halted';
        j.halt = { member: failing[0]!.member, reason: failing.map((c) => `${c.member}: ${c.said}`).join('; ') };
        await save();
        throw new OpsError(`--fix-v2store: etcdutl check v2store still fails after round ${j.round}: ${j.halt.reason}`, 3, {
          code: 'v2store_fix_halted',
          hint: inStore.length
            ? `custom content in the v2 store itself goes only by removing (or migrating) those v2 keys on 3.5; then run the same command (journal: ${file})`
            : `something still writes v2 requests (a member serving the v2 API: drop enable-v2 from its config; a v2 client): stop it, then run the same command (journal: ${file})`,
        });
      }
      j.round += 1;
      for (const c of failing) {
        const st = j.members.find((x) => x.name === c.member);
        if (st) Object.assign(st, { snapBefore: undefined, snapAfter: undefined });
        else j.members.push({ name: c.member, log: [] });
        j.steps.push(...roundSteps(j.round, c.member));
      }
      await save();
    }
    j.status = 'done';
    await save();
    return { file, members: j.members.map((x) => ({ name: x.name, log: x.log, check: x.check })) };
  } finally {
    await unlock().catch(() => undefined);
  }
}

/**
 * The check after a member and a round: the fix's own, or `etcdutl check v2store` on the member's (live) data
 * dir, with its own WAL dir where it has one (without it etcdutl reads DATA/member/wal: "no such file or
 * directory", and the fix went round twice for nothing): it takes no lock, ~20 ms.
 */
function checker(o: Pick<UpgradeOptions, 'exec'>, job: V2Fix, driver: MemberDriver): (m: MemberSpec) => Promise<V2Check> {
  return (
    job.check ??
    (async (m) => {
      const dirs = await memberDirs(driver, m);
      if (!dirs) return { member: m.name, ok: false, said: 'its data dir is not known' };
      const r = await o.exec(job.etcdutl, v2storeArgs(dirs), {
        reject: false,
        timeout: 60_000,
        extendEnv: false,
        env: { PATH: '/usr/bin:/bin', ...ETCDUTL_ENV },
      });
      const said = `${String(r.stdout)} ${String(r.stderr)}`.trim().split('\n').pop() || `exit ${r.exitCode}`;
      return { member: m.name, ok: r.exitCode === 0, said };
    })
  );
}

async function memberList(o: Pick<UpgradeOptions, Look>): Promise<MemberListEntry[]> {
  for (const m of o.cluster.members) {
    try {
      return await new KvClient(m.endpoint, { timeoutMs: o.timeouts.requestMs, debug: o.debug, session: o.session }).members();
    } catch {
      // the next member
    }
  }
  throw new OpsError('--fix-v2store: no member answers the member list', 1, {
    code: 'unhealthy',
    hint: 'nothing was changed: check the cluster (opsctl kv status)',
  });
}

/**
 * One member through its two cycles (kv/upgrade/cycle.ts): gate and verified snapshot, then stopped, its data
 * dir copied, started with snapshot-count 1 until it is back, caught up and a new snapshot file is written;
 * then stopped and started on its own config until it is back, caught up and checked. A resume takes each
 * cycle from its first step not done.
 */
async function fixMember(job: V2Fix, env: StepEnv<Fixing | 'to', V2FixFile>, m: MemberSpec, st: V2FixMember, save: CycleEnv['save']): Promise<void> {
  const { driver: d, o } = env;
  const { minor } = job;
  const target = (settings?: Record<string, string>): MemberTarget => ({ version: minor, binDir: d.current(m)?.binDir, ...(settings ? { settings } : {}) });
  const { fix, back } = cyclesOf(env.journal, m.name);
  const snapshot = fix.find((x) => x.kind === 'snapshot')!;
  const logged = (what: string, detail: string) => (st.log.push(`${what}: ${detail}`), detail);
  if (snapshot.status !== 'done') {
    const p = o.reporter.begin(`${m.name}: gate, snapshot + verify`);
    try {
      await gateBeforeStop(env, m);
      snapshot.detail = logged('snapshot', await snapshotStep(env, m));
    } catch (err) {
      p.fail(`${m.name}: ${(err as Error).message}`);
      throw err;
    }
    p.done(`${m.name}: every member healthy, one leader; snapshot: ${snapshot.detail}`);
    snapshot.status = 'done';
    // (written by the stop's record next: a kill before it takes the gate and the snapshot again)
    st.snapBefore = newestSnapName(m.dataDir);
  }
  const cycle = { env, save };
  await runCycle(cycle, {
    member: m,
    steps: fix.filter((x) => x.kind !== 'snapshot'),
    target: target(FIX_SETTINGS),
    gate: ({ resumed }) => gateBeforeStop(env, m, undefined, { resumed }).then(() => undefined),
    whileDown: async () => logged('backup', await backupStep(env, m)),
    words: { start: `start on ${minor} with snapshot-count 1`, 'wait-healthy': 'wait for a new v2 snapshot' },
    waitBack: async (p) => {
      const healthy = await waitBackStep(env, m, p, () => undefined);
      const snap = await newSnapshot(o, m, st, p);
      return logged('wait for a new v2 snapshot', `${snap} (was ${st.snapBefore ?? 'none'}); back: ${healthy}`);
    },
  });
  await runCycle(cycle, {
    member: m,
    steps: back,
    target: target(),
    gate: ({ resumed }) => gateBeforeStop(env, m, undefined, { resumed }).then(() => undefined),
    words: {
      start: `start on ${minor} with its own config`,
      'wait-healthy': `back on its own config, then ${job.check ? 'its WAL read again' : 'etcdutl check v2store'}`,
    },
    waitBack: async (p) => {
      const healthy = await waitBackStep(env, m, p, () => undefined);
      const c = await checker(o, job, env.driver)(m);
      st.check = c.said;
      return logged(job.check ? 'its WAL read again' : 'etcdutl check v2store', `${c.said}; back: ${healthy}`);
    },
  });
}

/** Until a snapshot file newer than the one before the fix is written (snapshot-count 1: at the next entry). */
async function newSnapshot(o: Pick<UpgradeOptions, 'timeouts' | 'now'>, m: MemberSpec, st: V2FixMember, p: StepProgress): Promise<string> {
  const snap = await waitFor(
    () => {
      const now = newestSnapName(m.dataDir);
      p.update(`${m.name}: waiting for a snapshot file after ${st.snapBefore ?? 'none'} (newest: ${now ?? 'none'})`);
      return Promise.resolve(now !== undefined && (st.snapBefore === undefined || now > st.snapBefore) ? now : undefined);
    },
    { timeoutMs: o.timeouts.healthyMs, pollMs: o.timeouts.pollMs, now: o.now, what: `a new snapshot file in ${m.dataDir}/member/snap` },
  );
  st.snapAfter = snap;
  return snap;
}
