import { notStartable } from '../wal/just-in-time.js';
import { join } from 'node:path';
import type { MemberSpec } from '../cluster/cluster-file.js';
import { KvClient } from '../cluster/client.js';
import { placeOf, type MemberTarget } from '../drivers/driver.js';
import type { Look, RunRecord, StepEnv, UpgradeOptions, Waits } from './options.js';
import { backupDest } from './on-failure.js';
import { nextCopyRun } from '../journal/copies.js';
import type { DataCopy } from '../journal/journal.js';
import { observeCluster } from '../cluster/observe.js';
import { membershipChange } from '../cluster/membership.js';
import { compareMinor, minor, type MemberListEntry } from '../cluster/parse.js';
import type { ClusterObservation } from '../cluster/types.js';
import { recordRestorePoint } from './restore-point.js';
import { saveSnapshot } from '../snapshot/save.js';
import { acceptsConnections, sleep, waitFor, WaitAborted, WaitFatal } from '../cluster/wait.js';
import { walV2Bytes } from '../wal/v2-data.js';
import { versionMoved } from '../rules/summary.js';

export const V2_SETTLE_THRESHOLD = 50 * 1000 * 1000;
export const V2_SETTLE_MS = 120_000;
/** The seed: v2 data of 100 MB or more takes longer still to catch up than the 2 minutes over 50 MB. */
export const V2_LARGE_THRESHOLD = 100 * 1000 * 1000;
export const V2_LARGE_SETTLE_MS = 240_000;

const client = (env: StepEnv<Look, RunRecord>, endpoint: string) =>
  new KvClient(endpoint, { timeoutMs: env.o.timeouts.requestMs, debug: env.o.debug, session: env.o.session });

/**
 * The snapshot before a member's stop, from the leader as the guides take it (etcdctl --endpoints=LEADER
 * snapshot save): the member itself when the leader cannot serve one (said in the detail), another
 * healthy member when neither can. Verified against the stopping member's own figures: it holds at
 * least the member's revision, and the member counts the same live keys at the snapshot's revision.
 */
export async function snapshotStep(
  env: StepEnv<Look | 'dataDir' | 'exec' | 'now' | 'snapshotVia' | 'shelf', RunRecord> & { o: { offsite?: UpgradeOptions['offsite'] } },
  m: MemberSpec,
  seen?: ClusterObservation,
): Promise<string> {
  const { o, journal: j } = env;
  const me = seen?.members.find((x) => x.name === m.name && x.healthy && x.revision !== undefined);
  let own = me?.revision;
  let leaderId = me?.leaderId;
  if (own === undefined) {
    const st0 = await client(env, m.endpoint)
      .status()
      .catch(() => undefined);
    const h = st0
      ? await client(env, m.endpoint)
          .quorumRead()
          .catch(() => ({ healthy: false }))
      : { healthy: false };
    if (h.healthy && st0) {
      own = st0.revision;
      leaderId = st0.leaderId;
    }
  }
  const leaderSeen = seen?.members.find((x) => x.id === leaderId && x.healthy);
  const leader = o.cluster.members.find((x) => x.name === leaderSeen?.name) ?? (leaderId ? await memberById(env, leaderId) : undefined);
  const sources = [...new Set([leader, own !== undefined ? m : undefined].filter((x): x is MemberSpec => Boolean(x)))];
  if (!sources.length) sources.push(await pickHealthy(env, o.cluster.members));
  const before = own ?? (await client(env, sources[0]!.endpoint).status()).revision;
  const useEtcdctl = o.snapshotVia === 'etcdctl' || (o.snapshotVia === 'auto' && env.real && Boolean(env.etcdctl));
  const notes: string[] = [];
  const file = join(o.dataDir, 'kv', 'snapshots', o.cluster.key, `${j.id}-${m.name}.db`);
  // (the checks' snapshot of the leader, when nothing was committed since it was taken: snapshot/shelf.ts)
  const reach = { session: o.session, timeoutMs: o.timeouts.requestMs, debug: o.debug };
  const kept = own !== undefined ? await o.shelf?.take(reach, { file, figuresFrom: m.endpoint, minRevision: own }) : undefined;
  if (kept) notes.push(`the one the checks took (the raft index unchanged since)`);
  let snap = kept?.snap;
  let from = o.cluster.members.find((x) => x.endpoint === kept?.endpoint) ?? sources[0]!;
  for (const [i, src] of snap ? [] : sources.entries()) {
    from = src;
    try {
      snap = await saveSnapshot({
        endpoint: src.endpoint,
        figuresFrom: own !== undefined ? m.endpoint : src.endpoint,
        session: o.session,
        file,
        timeoutMs: o.timeouts.snapshotMs,
        etcdctl: useEtcdctl ? env.etcdctl : undefined,
        exec: o.exec,
        minRevision: before,
      });
      break;
    } catch (err) {
      if (i === sources.length - 1) throw err;
      notes.push(`the leader ${src.name} could not serve it (${(err as Error).message}): taken from ${sources[i + 1]!.name} instead`);
    }
  }
  const taken = snap!;
  const rp = await recordRestorePoint(j, { member: m.name, file: taken.file, status: taken.status, memberFigures: taken.member }, o.now());
  // Off-host too, before the stop: a failed upload fails this step, and the member is not stopped.
  let uploaded = '';
  if (o.offsite) {
    const label = `${j.source}->${j.target} ${m.name}`;
    const url = await o.offsite.upload(taken.file, `${j.id}-${m.name}.db`, {
      bytes: taken.bytes,
      sha256: taken.status.sha256,
      revision: taken.revision,
      run: j.id,
      label,
    });
    uploaded = `; uploaded to ${url}, verified on the store`;
  }
  j.snapshots.push({ member: m.name, file: taken.file, revision: taken.revision, bytes: taken.bytes, from: from.name, sha256: taken.status.sha256 });
  const role = from === leader ? `the leader ${from.name}` : from.name;
  const mine = from === m ? '' : ` (${m.name}'s own revision ${before}, its live keys at ${taken.revision}: ${taken.member.keys ?? '?'})`;
  return `${taken.bytes} bytes from ${role} via ${taken.via}, SHA-256 ok, revision ${taken.revision} ≥ ${before}${mine}${notes.length ? `; ${notes.join('; ')}` : ''}${rp ? `; ${rp}` : ''}${uploaded}`;
}

/** The member of the cluster whose id is `id`, by asking each member its status (a look without the id known). */
async function memberById(env: StepEnv<Look, RunRecord>, id: string): Promise<MemberSpec | undefined> {
  const ids = await Promise.all(
    env.o.cluster.members.map((x) =>
      client(env, x.endpoint)
        .status()
        .then(
          (s) => s.memberId,
          () => undefined,
        ),
    ),
  );
  const i = ids.indexOf(id);
  return i < 0 ? undefined : env.o.cluster.members[i];
}

/** The first healthy member; none: each member's reason to be passed over (as kv snapshot save says it). */
async function pickHealthy(env: StepEnv<Look, RunRecord>, members: MemberSpec[]): Promise<MemberSpec> {
  const passed: string[] = [];
  for (const m of members) {
    const h = await client(env, m.endpoint)
      .health()
      .catch((err: Error) => ({ healthy: false, detail: err.message }));
    if (h.healthy) return m;
    passed.push(`${m.name} (${m.endpoint}): ${h.detail}`);
  }
  throw new Error(`no healthy member to take a snapshot from: ${passed.join('; ')}`);
}

/**
 * Right before a member is stopped: the cluster's member list is as it was at pre-flight (no member
 * left or joined: a new, unstarted member counts toward the quorum), every member answers healthy
 * and all agree on one leader. Anything else means stopping could take a second member down (or go
 * on past a sick one), so the run halts with nothing changed. One parallel pass, a few milliseconds.
 * `resumed`: the record says this stop began, so the stop command may have reached the member before
 * the kill: one that no longer answers is on its way down from it (stopping it again takes nothing from
 * the cluster), and only the others must be healthy with one leader; one that answers is gated as any.
 */
export async function gateBeforeStop(
  env: StepEnv<Look, RunRecord>,
  m: MemberSpec,
  seen?: { obs: ClusterObservation; list: MemberListEntry[] },
  { resumed = false }: { resumed?: boolean } = {},
): Promise<ClusterObservation> {
  const { o } = env;
  let all = seen?.obs;
  let list = seen?.list;
  if (!all) {
    // The member list rides along with the first member's status; asked of the others if it did not answer.
    const looked = await observeCluster(o.cluster.members, { session: o.session, timeoutMs: o.timeouts.requestMs, debug: o.debug, memberList: true });
    all = looked;
    list = looked.memberList ?? (await memberList(env, m));
  }
  const changed = membershipChange(env.membership, list!);
  if (changed) throw new Error(`not stopping ${m.name}: ${changed}`);
  const goingDown = resumed && !all.members.some((x) => x.name === m.name && x.healthy);
  const judged = goingDown ? all.members.filter((x) => x.name !== m.name) : all.members;
  const sick = judged.filter((x) => !x.healthy);
  if (sick.length) throw new Error(`not stopping ${m.name}: ${sick.map((x) => `${x.name} is not healthy (${x.error ?? x.healthDetail})`).join(', ')}`);
  const leaders = new Set(judged.map((x) => x.leaderId ?? ''));
  if (leaders.size !== 1 || leaders.has('') || leaders.has('0')) throw new Error(`not stopping ${m.name}: the members do not agree on one leader`);
  if (all.alarms.length) throw new Error(`not stopping ${m.name}: alarm ${all.alarms.map((a) => a.alarm).join(', ')} raised`);
  return all;
}

/** The cluster's member list, asked of the member about to be stopped first (it is up), then the others. */
async function memberList(env: StepEnv<Look, RunRecord>, m: MemberSpec): Promise<MemberListEntry[]> {
  const order = [m, ...env.o.cluster.members.filter((x) => x.name !== m.name)];
  const errors: string[] = [];
  for (const x of order) {
    try {
      return await client(env, x.endpoint).members();
    } catch (err) {
      errors.push(`${x.name}: ${(err as Error).message}`);
    }
  }
  throw new Error(`not stopping ${m.name}: no member answers the member list (${errors.join('; ')})`);
}

/** Until the process is gone (not only its port); SIGKILL after the stop timeout where possible. */
export async function waitGoneStep(env: StepEnv<'reporter' | 'timeouts', RunRecord>, m: MemberSpec): Promise<string> {
  const { o, driver } = env;
  const t = o.timeouts;
  // Gone on two looks in a row: one answer of the driver's running command that fails for another
  // reason (a fork refused on a loaded host) must not pass for the exit and let the copy run on a live
  // data dir. While the member's client port still accepts a connection its process is surely there:
  // that look is one connect, no process started (the running command is still asked once per poll
  // interval, for a port something else holds: a proxy in front of the member); from the port's refusal
  // on (etcd closes its listeners first), the running command at every poll.
  let seenGone = 0;
  let askedAt = -Infinity;
  const gone = async () => {
    if (seenGone === 0 && Date.now() - askedAt < t.pollMs && (await acceptsConnections(m.endpoint, t.pollMs)) === true) return undefined;
    askedAt = Date.now();
    seenGone = (await driver.isRunning(m)) ? 0 : seenGone + 1;
    return seenGone >= 2 ? true : undefined;
  };
  try {
    // Checking a process is cheap: poll often, so the wait measured is the member's own.
    // Not ended by Ctrl-C: the safe point is after the member is back (never between a stop and its start).
    await waitFor(gone, { timeoutMs: t.stopMs, pollMs: Math.min(t.pollMs, 10), what: `${m.name} process exit` });
    return 'process gone';
  } catch (err) {
    if (!driver.kill) throw err;
    o.reporter.note(`${m.name} did not stop within ${t.stopMs} ms: killing it`);
    await driver.kill(m);
    await waitFor(gone, { timeoutMs: 10_000, pollMs: 100, what: `${m.name} process exit after SIGKILL` });
    return 'process killed after the stop timeout';
  }
}

/**
 * A copy of the stopped member's data dir (the seed: back up every data dir; snapshots hold only v3 data),
 * under a {run} of its own (journal/copies.ts), recorded before the copy begins: a second attempt never copies
 * into the first's place, and a kill in the copy leaves a record of what to put back or remove.
 */
export async function backupStep(env: StepEnv<'cluster' | 'dataDir' | 'now', RunRecord>, m: MemberSpec): Promise<string> {
  const j = env.journal;
  const copy: DataCopy = { member: m.name, run: nextCopyRun(j, m.name), status: 'copying', at: new Date(env.o.now()).toISOString() };
  (j.dataCopies ??= []).push(copy);
  await env.checkpoint();
  const detail = await env.driver.backupDataDir!(m, backupDest(env, m, copy.run), copy.run);
  Object.assign(copy, { status: 'done', detail });
  return detail;
}

/**
 * Starts the member on the target. A start resumed after a crash first asks whether the member runs
 * (a start whose record was lost is not run twice); right after this run saw the process gone twice
 * (`seenGone`), the question is not asked again: nothing of opsctl's started it since, and a member
 * something else restarted on its old binary is caught by the health wait (its version is checked).
 */
export async function startStep(
  env: StepEnv<never, RunRecord>,
  m: MemberSpec,
  target: MemberTarget,
  { seenGone = false }: { seenGone?: boolean } = {},
): Promise<string> {
  if (!seenGone && (await env.driver.isRunning(m))) return 'already running';
  // Right before the start, side by side (the member is down meanwhile): the binary asked its version where the member
  // runs (a wrong one is never started), and what the start will read of its WAL (a start that would fail on its own data is never made).
  const asked = env.driver.binaryVersion?.(m, target);
  const [v, no] = await Promise.all([asked, notStartable(env.driver, m, target)]);
  if (v && 'version' in v && !sameMinor(v.version, target.version))
    throw new WrongBinary(`the binary the start would run is etcd ${v.version}, not ${target.version}${/^\d+\.\d+$/.test(target.version) ? '.x' : ''}`);
  if (no) throw new WrongBinary(no);
  await env.driver.start(m, target);
  const what = target.binDir ? `${target.binDir}/etcd` : `version ${target.version}`;
  return v ? `${what}${'version' in v ? ` (etcd ${v.version})` : ` (its version not asked: ${v.why})`}` : what;
}

/** Nothing was started: the binary is not of the hop, or its data would fail the start (its member is put back on its own, and the run halts). */
export class WrongBinary extends Error {}

const sameMinor = (a: string, b: string) => minor(a) === minor(b) && (!/^\d+\.\d+\.\d+/.test(b) || a === b);

/**
 * One observation of every member per poll until: the member is healthy on the target, every member
 * is healthy, all agree on one leader, and the member's revision reached the leader's revision as
 * sampled when all was first healthy (under constant writes the leader is always a little ahead).
 */
export async function waitBackStep(
  env: StepEnv<Look | 'now' | 'to', RunRecord>,
  m: MemberSpec,
  p: { update(t: string): void },
  onLeader: (id: string) => void,
  onBack?: (all: ClusterObservation) => void,
  /** Members not waited for (down on their own, not this flow's to start: kv rollback's give-back); the rest must be healthy. */
  without?: ReadonlySet<string>,
): Promise<string> {
  const { o, driver } = env;
  let mark: { rev: bigint; index?: bigint; name: string } | undefined;
  let notRunning = 0;
  let runningAskedAt = -Infinity;
  return waitFor(
    async () => {
      // Whether the process still runs (the driver's running command: a process start for the command
      // driver) at most once per poll interval, asked beside the health request, not before it.
      const askRunning = o.now() - runningAskedAt >= o.timeouts.pollMs;
      if (askRunning) runningAskedAt = o.now();
      const running = askRunning ? driver.isRunning(m) : Promise.resolve(true);
      // The member itself first (one request a poll, a small share of a busy machine's CPU, which
      // the starting member needs); the whole cluster once it answers healthy.
      const ownHealth = mark
        ? undefined
        : client(env, m.endpoint)
            .health()
            .catch((err: Error) => ({ healthy: false, detail: err.message }));
      // Gone on three looks in a row (a service manager may be between two states once): waiting
      // longer cannot help, halt now rather than after the healthy timeout.
      if (!(await running)) {
        await ownHealth;
        if (++notRunning >= 3) throw new WaitFatal(`${m.name}'s process exited after its start (see its log)`);
        return undefined;
      }
      if (askRunning) notRunning = 0;
      if (ownHealth) {
        const own = await ownHealth;
        if (!own.healthy) {
          p.update(`${m.name}: waiting for it to answer healthy (${own.detail})`);
          return undefined;
        }
      }
      // (Never reused as the next member's gate: a settle, and its v2-size command, come between.)
      const all = await observeCluster(o.cluster.members, { session: o.session, timeoutMs: o.timeouts.requestMs, debug: o.debug, alarms: false });
      const me = all.members.find((x) => x.name === m.name)!;
      const waited = without?.size ? all.members.filter((x) => !without.has(x.name)) : all.members;
      const sick = waited.filter((x) => !x.healthy);
      if (sick.length) {
        p.update(`${m.name}: waiting for ${sick.map((x) => `${x.name} (${x.healthDetail})`).join(', ')}`);
        return undefined;
      }
      if (me.serverVersion && minor(me.serverVersion) !== o.to)
        throw new WaitFatal(`${m.name} runs ${me.serverVersion}, not ${o.to}: check what the start command starts`);
      const leaders = new Set(waited.map((x) => x.leaderId));
      const leader = waited.find((x) => x.id === me.leaderId);
      if (leaders.size !== 1 || !leader) {
        p.update(`${m.name}: waiting for the members to agree on a leader`);
        return undefined;
      }
      onLeader(leader.id);
      // Caught up: the member applied the leader's raft log (which carries v2 writes too, that the
      // v3 revision does not count) as far as when all was first healthy, and holds its v3 revision.
      mark ??= { rev: BigInt(leader.revision ?? '0'), index: leader.raftIndex === undefined ? undefined : BigInt(leader.raftIndex), name: leader.name };
      if (BigInt(me.revision ?? '0') < mark.rev) {
        p.update(`${m.name}: catching up (revision ${me.revision} of ${mark.rev})`);
        return undefined;
      }
      if (mark.index !== undefined && me.raftIndex !== undefined && BigInt(me.raftIndex) < mark.index) {
        p.update(`${m.name}: catching up (raft index ${me.raftIndex} of ${mark.index})`);
        return undefined;
      }
      const index = mark.index !== undefined && me.raftIndex !== undefined ? `, raft index ${me.raftIndex} ≥ ${mark.index}` : '';
      onBack?.(all);
      return `${me.serverVersion}, cluster healthy, revision ${me.revision} ≥ leader ${mark.name}'s ${mark.rev}${index}`;
    },
    // Not ended by Ctrl-C either: an interrupted run leaves the member back and healthy. A member is
    // usually back within a few hundred milliseconds: the first polls come sooner (20 ms, growing).
    {
      timeoutMs: o.timeouts.healthyMs,
      pollMs: o.timeouts.pollMs,
      firstPollMs: 20,
      now: o.now,
      what: `${m.name} and the cluster healthy on ${o.to}`,
    },
  );
}

/** How long to settle after a member, and why (decided before the wait, said before it starts). */
export interface SettleDecision {
  ms: number;
  why: string;
}

/**
 * --settle: a duration, or auto: the seed's waits only where the v2 data really is that large (2
 * minutes over 50 MB, 4 over 100 MB), none under 50 MB, and only between members: none after the
 * last one of the hop (nothing follows it that could meet a member still catching up). The v2 size,
 * in order: the operator's v2-size command; the member's own v2 key tree over its v2 API (exact,
 * while the API is on: one local read, no process on its host); the figure measured before 3.4 turned
 * the v2 API off, carried in the journal (the ladder measures it before 3.3 → 3.4); measured where the
 * data dir is (the member's newest v2 snapshot file, not the sum: each is the whole store; else the v2
 * writes its WAL holds, v3 requests never counted). Only when none can tell is it assumed over 50 MB.
 * The detail says which applied.
 */
export async function settleDecision(
  env: StepEnv<'cluster' | 'session' | 'settle' | 'timeouts' | 'to'>,
  m: MemberSpec,
  { last = false }: { last?: boolean } = {},
): Promise<SettleDecision> {
  const { o } = env;
  if (last) return { ms: 0, why: 'the last member of this hop: the settle is between members' };
  if (o.settle !== 'auto') return { ms: o.settle, why: 'as asked' };
  const v2 = await v2Size(env, m);
  if (v2.bytes === undefined)
    return {
      ms: V2_SETTLE_MS,
      why: `v2 data size not checked: ${v2.why}; the guide's rule for the hop to ${o.to} (over 50 MB: 2 minutes between members) taken as it stands`,
    };
  if (v2.over || v2.bytes >= V2_LARGE_THRESHOLD)
    return { ms: V2_LARGE_SETTLE_MS, why: `v2 data ${v2.over ? 'over 100 MB' : `${v2.bytes} bytes`} ${v2.how}: 100 MB or more, the seed's longer wait` };
  if (v2.bytes > V2_SETTLE_THRESHOLD) return { ms: V2_SETTLE_MS, why: `v2 data ${v2.bytes} bytes ${v2.how}: over 50 MB, the seed's 2-minute wait` };
  return { ms: 0, why: `v2 data ${v2.bytes} bytes ${v2.how}: under 50 MB, no catch-up wait` };
}

export async function settleStep(
  env: StepEnv<'cluster' | 'reporter' | 'session' | 'settle' | 'signal' | 'timeouts' | 'to'>,
  m: MemberSpec,
  fmt: (ms: number) => string,
  { last = false }: { last?: boolean } = {},
): Promise<string> {
  const { o } = env;
  const d = await settleDecision(env, m, { last });
  if (d.ms > 0) {
    o.reporter.note(`${m.name}: settling ${fmt(d.ms)} (${d.why})`);
    await env.checkpoint();
  }
  await sleep(d.ms, o.signal);
  if (o.signal.aborted) throw new WaitAborted('settle');
  return `${fmt(d.ms)} (${d.why})`;
}

type V2Size = { bytes: number; over: boolean; how: string } | { bytes: undefined; why: string };

/** The member's v2 data size, from the best source that can tell (settleDecision). */
async function v2Size(env: StepEnv<Look | 'to' | 'v2Measured'>, m: MemberSpec): Promise<V2Size> {
  const whyNot: string[] = [];
  // etcd 3.6 keeps no v2 store (only the membership, rebuilt from v3): a hop to or from 3.6 has no v2 data to catch up
  const minors = [env.o.to, env.journal.source].filter((v): v is string => typeof v === 'string');
  if (minors.some((v) => compareMinor(v, '3.6') >= 0)) return { bytes: 0, over: false, how: '(etcd 3.6 keeps no v2 store)' };
  // the operator's own v2-size command, where given
  if (placeOf(env.driver).hostTemplates) {
    const fromCmd = await env.driver.v2DataBytes?.(m);
    if (fromCmd !== undefined) return { bytes: fromCmd, over: false, how: `(measured on ${m.name}'s host: the v2-size template)` };
  }
  const measured = await client(env, m.endpoint).v2DataBytes(V2_LARGE_THRESHOLD);
  if (measured.bytes !== undefined) return { ...measured, how: `(measured on ${m.name}: its v2 key tree)` };
  whyNot.push(measured.why);
  const carried = env.journal.v2 ?? env.o.v2Measured;
  if (carried) return { bytes: carried.bytes, over: false, how: `(${carried.on}, before 3.4 turned the v2 API off)` };
  if (env.driver.hostV2Size) {
    const host = await env.driver.hostV2Size(m);
    const on = `measured on ${m.name}'s host`;
    if (host.kind === 'snap') return { bytes: host.bytes, over: false, how: `(${on}: its newest v2 snapshot file)` };
    if (host.kind === 'wal')
      return {
        bytes: host.bytes,
        over: false,
        how: `(${on}: ${host.writes} v2 writes in its WAL (${host.files} file${host.files === 1 ? '' : 's'}), no v2 snapshot yet; v3 requests not counted; an upper bound)`,
      };
    // Every byte of the WAL (no perl there to tell v2 from v3): a bound that only proves "under" it.
    if (host.kind === 'walall' && host.bytes <= V2_SETTLE_THRESHOLD)
      return { bytes: host.bytes, over: false, how: `(${on}: every byte its WAL holds, v3 included (no perl there to read it); an upper bound)` };
    whyNot.push(
      host.kind === 'walall'
        ? `${m.name}'s WAL holds ${host.bytes} bytes, v2 and v3 alike, and its host has no perl to tell the v2 writes apart (install perl there, or give driver.v2Size / --v2-size-cmd)`
        : host.why,
    );
  } else if (placeOf(env.driver).startsHere) {
    const snap = await env.driver.v2DataBytes?.(m);
    if (snap !== undefined) return { bytes: snap, over: false, how: `(${m.name}'s newest snapshot file)` };
    whyNot.push(`${m.name} has no snapshot file yet`);
    // No v2 snapshot yet: every v2 write since the member began is in its WAL (an upper bound: deleted keys count too).
    // (its own WAL dir where it sets one: the WAL is not in DATA/member/wal then)
    const dirs = (await env.driver.dataDirs?.(m)) ?? (m.dataDir ? { dataDir: m.dataDir } : undefined);
    if (dirs) {
      const wal = walV2Bytes(dirs, V2_LARGE_THRESHOLD);
      if ('bytes' in wal)
        return {
          bytes: wal.bytes,
          over: false,
          how: `(${m.name}'s WAL: ${wal.writes} v2 writes in ${wal.files} file${wal.files === 1 ? '' : 's'}, no v2 snapshot yet; an upper bound)`,
        };
      whyNot.push(wal.why);
    }
  }
  return { bytes: undefined, why: whyNot.join('; ') };
}

/** Until every member reports the target cluster version (the members log the update). */
export async function waitClusterVersionStep(env: StepEnv<Waits | 'downgrade' | 'to'>, source: string): Promise<string> {
  const { o } = env;
  const v = await waitFor(
    async () => {
      const vs = await Promise.all(o.cluster.members.map((m) => client(env, m.endpoint).version()));
      const [first] = vs;
      return first && vs.every((x) => minor(x.cluster) === o.to) ? first.cluster : undefined;
    },
    { timeoutMs: o.timeouts.clusterVersionMs, pollMs: o.timeouts.pollMs, what: `cluster version ${o.to}`, now: o.now, signal: o.signal },
  );
  if (o.downgrade) return `cluster version ${v} (downgraded from ${source})`;
  return `cluster version ${v}${source !== o.to ? ` (${versionMoved(source, o.to)})` : ''}`;
}

export async function finalHealthStep(env: StepEnv<Look>): Promise<string> {
  const hs = await Promise.all(
    env.o.cluster.members.map((m) =>
      client(env, m.endpoint)
        .health()
        .then(
          (h) => ({ name: m.name, ...h }),
          (err: Error) => ({ name: m.name, healthy: false, detail: err.message }),
        ),
    ),
  );
  const sick = hs.filter((h) => !h.healthy);
  if (sick.length) throw new Error(`unhealthy: ${sick.map((s) => `${s.name} (${s.detail})`).join(', ')}`);
  return `${hs.length} members healthy`;
}
