import { join } from 'node:path';
import type { MemberSpec } from '../cluster/cluster-file.js';
import type { MemberTarget } from '../drivers/driver.js';
import type { JournalStep } from '../journal/journal.js';
import { observeCluster } from '../cluster/observe.js';
import { minor } from '../cluster/parse.js';
import type { RunRecord, StepEnv } from './options.js';
import { copyToRestore } from '../journal/copies.js';
import { recordPutBack } from '../journal/runs.js';
import { waitFor, WaitFatal } from '../cluster/wait.js';
import { copyVerdict, walMarkOf, type CopyVerdict } from '../wal/wal-mark.js';

/** Where the local driver copies a member's data dir for the copy `run` (the run's id by default: its first copy; journal/copies.ts). */
export function backupDest(env: Pick<StepEnv<'cluster' | 'dataDir', RunRecord>, 'o' | 'journal'>, m: MemberSpec, run = env.journal.id): string {
  return join(env.o.dataDir, 'kv', 'backups', env.o.cluster.key, `${run}-${m.name}`);
}

/**
 * --on-failure rollback, for a member that never became healthy on the target (or whose start
 * failed): as kubeadm restores the old manifest, the member is stopped, its data dir restored from the
 * backup taken after its stop (the failed dir kept beside it), started on its previous binary, and
 * waited for (with the whole cluster healthy) within the healthy timeout. Its steps from the stop on
 * go back to pending, so a later run handles it again from the health gate. Returns what was done,
 * for the halt reason; throws when the member cannot be put back.
 */
export async function putMemberBack(
  env: StepEnv<'cluster' | 'dataDir' | 'now' | 'reporter' | 'session' | 'timeouts'>,
  m: MemberSpec,
  steps: JournalStep[],
  why: { step: string; reason: string },
): Promise<string> {
  const { o, driver, journal: j } = env;
  const t = o.timeouts;
  const prev = previousTarget(env, m);
  // journalled before it changes anything: a kill anywhere in it is finished by the resume (resumePutBack)
  const pb = (j.puttingBack ??= { member: m.name, ...why, restored: false });
  await env.checkpoint();
  const p = o.reporter.begin(`${m.name}: --on-failure rollback: back to ${prev.version}`);
  try {
    const running = () => driver.isRunning(m);
    const gone = async () => ((await running()) ? undefined : true);
    if (await running()) {
      await driver.stop(m);
      await waitFor(gone, { timeoutMs: t.stopMs, pollMs: Math.min(t.pollMs, 50), what: `${m.name} process exit` }).catch(async (err) => {
        if (!driver.kill) throw err;
        await driver.kill(m);
        await waitFor(gone, { timeoutMs: 10_000, pollMs: 100, what: `${m.name} process exit after SIGKILL` });
      });
    }
    const backup = steps.find((s) => s.kind === 'backup-data');
    // the copy of this attempt: the newest one made (an earlier attempt's copy holds older data)
    const copy = backup?.status === 'done' ? copyToRestore(j, m.name) : undefined;
    if (!pb.restored) {
      // decided once, before anything is restored: a resume follows it whatever it finds half-moved
      if (copy && driver.restoreBackup && !pb.copy) {
        pb.copy = await copyDecision(env, m, steps);
        await env.checkpoint();
      }
      pb.data =
        copy && driver.restoreBackup
          ? pb.copy?.putBack
            ? await driver.restoreBackup(m, backupDest(env, m, copy.run), copy.run)
            : `its data dir kept as its start on ${j.target} left it, its copy ${copy.run} not put back: ${pb.copy?.why ?? ''}`
          : backup?.status === 'done'
            ? copy
              ? 'its data dir was not restored (the driver has no restore-backup command)'
              : "its data dir was not restored: its copy's record says it was not finished"
            : 'its data dir was not backed up: started on the data it has';
      pb.restored = true;
      await env.checkpoint();
    }
    const data = pb.data ?? 'its data dir restored';
    await startAndWait(env, m, prev, 'cluster');
    for (const s of steps) if (s.kind !== 'snapshot') Object.assign(s, { status: 'pending', error: undefined, walBefore: undefined });
    delete j.puttingBack;
    const why = pb.copy?.putBack ? `; its copy put back: ${pb.copy.why}` : '';
    const detail = `${m.name} is back on ${prev.binDir ? `${prev.binDir}/etcd` : prev.version} (${data}), the cluster healthy${why}`;
    p.done(`${m.name}: --on-failure rollback: ${detail}`);
    return detail;
  } catch (err) {
    p.fail(`${m.name}: --on-failure rollback failed: ${(err as Error).message}`);
    if (pb.copy && !pb.copy.putBack && pb.restored) throw new Error(`${(err as Error).message}; ${replaceWords(env, m, prev)}`, { cause: err });
    throw err;
  }
}

/** Whether the member's copy goes back over what its start on the target left (kv/wal/wal-mark.ts). */
export async function copyDecision(env: StepEnv<never>, m: MemberSpec, steps: JournalStep[]): Promise<CopyVerdict> {
  const d = env.driver;
  const target = env.journal.target;
  if (d.capabilities?.etcdData === false) return { putBack: true, why: `${d.capabilities.what} members keep no raft log: the copy catches up from the leader` };
  const start = steps.find((s) => s.kind === 'start');
  if (!start || start.status === 'pending') return { putBack: true, why: `etcd ${target} was never started on it` };
  return copyVerdict(target, start.walBefore, await walMarkOf(d, m));
}

/** The way back for a member whose previous version does not start on the data its target left: a member replaced. */
function replaceWords(env: StepEnv<never>, m: MemberSpec, prev: MemberTarget): string {
  const me = env.membership.find((x) => x.name === m.name);
  const peers = me?.peerUrls.join(',') || 'ITS_PEER_URLS';
  return (
    `its copy was not put back (${env.journal.puttingBack?.copy?.why ?? 'see the journal'}); the way back for ${m.name} is a member replaced: ` +
    `etcdctl member remove ${me?.id ?? 'ITS_ID'}, its data dir moved aside, etcdctl member add ${m.name} --peer-urls=${peers}, ` +
    `then ${m.name} started on ${describeTarget(prev)} with an empty data dir and --initial-cluster-state existing (it receives the leader's snapshot)`
  );
}

/** --on-failure rollback after `step` failed with `reason`: the member put back and recorded; the halt's words and the step's status. */
export async function rollBackMember(
  env: StepEnv<'cluster' | 'dataDir' | 'now' | 'reporter' | 'session' | 'timeouts'>,
  m: MemberSpec,
  step: JournalStep,
  reason: string,
): Promise<{ reason: string; status: JournalStep['status'] }> {
  const steps = env.journal.steps.filter((s) => s.member === m.name);
  try {
    const detail = await putMemberBack(env, m, steps, { step: step.id, reason });
    const to = env.journal.previous[m.name]?.version ?? env.journal.source;
    const downFrom = steps.find((s) => s.kind === 'stop')?.startedAt;
    recordPutBack(env.journal, { member: m.name, to, at: new Date(env.o.now()).toISOString(), downFrom, detail });
    return { reason: `${reason}; --on-failure rollback: ${detail}`, status: 'pending' };
  } catch (err) {
    return { reason: `${reason}; --on-failure rollback could not put ${m.name} back: ${(err as Error).message}`, status: 'failed' };
  }
}

/**
 * Starts a stopped member on `prev` (its binary before the upgrade) and waits, within the healthy
 * timeout, until it runs that version and either the whole cluster is healthy with one leader
 * ('cluster') or the member itself answers healthy ('member': another member may be lost for good).
 */
export async function startAndWait(
  env: StepEnv<'cluster' | 'now' | 'session' | 'timeouts'>,
  m: MemberSpec,
  prev: MemberTarget,
  until: 'cluster' | 'member',
): Promise<void> {
  const { o, driver } = env;
  const t = o.timeouts;
  const running = () => driver.isRunning(m);
  if (!(await running())) await driver.start(m, prev);
  let notRunning = 0;
  await waitFor(
    async () => {
      if (!(await running())) {
        if (++notRunning >= 3) throw new WaitFatal(`${m.name}'s process exited after its start on ${prev.version}`);
        return undefined;
      }
      notRunning = 0;
      const members = until === 'cluster' ? o.cluster.members : [m];
      const all = await observeCluster(members, { session: o.session, timeoutMs: t.requestMs, alarms: false });
      const me = all.members.find((x) => x.name === m.name);
      if (me?.serverVersion && minor(me.serverVersion) !== prev.version) throw new WaitFatal(`${m.name} runs ${me.serverVersion}, not ${prev.version}`);
      const leaders = new Set(all.members.map((x) => x.leaderId));
      return all.members.every((x) => x.healthy) && leaders.size === 1 ? true : undefined;
    },
    {
      timeoutMs: t.healthyMs,
      pollMs: t.pollMs,
      now: o.now,
      what: until === 'cluster' ? `${m.name} and the cluster healthy on ${prev.version}` : `${m.name} healthy on ${prev.version}`,
    },
  );
}

/** The member's binary before the upgrade, as the journal recorded it. */
export function previousTarget(env: StepEnv<never>, m: MemberSpec): MemberTarget {
  return env.journal.previous[m.name] ?? { version: env.journal.source };
}

/** "…/etcd" or the version: how a message names what a member was started on. */
export function describeTarget(t: MemberTarget): string {
  return t.binDir ? `${t.binDir}/etcd` : t.version;
}
