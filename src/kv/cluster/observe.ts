import type { MemberSpec } from './cluster-file.js';
import { KvClient } from './client.js';
import { statusAlarms, type AlarmEntry, type MemberListEntry, type StatusResult } from './parse.js';
import type { KvSession } from './session.js';
import type { ClusterObservation, MemberObservation } from './types.js';

export interface ObserveOptions {
  /** The cluster's connection (TLS, auth, pool, the gateway prefixes learnt). */
  session: KvSession;
  timeoutMs: number;
  debug?: (line: string) => void;
  /** Ask for the alarm list too (default yes; a health poll does not need it). */
  alarms?: boolean;
  /** Ask the first member for the cluster's member list too (with its status: no extra round trip). */
  memberList?: boolean;
  /**
   * One connection per member: its requests in a row on it, written at once (HTTP/1.1 pipelining): version,
   * status, the first member's member list, the quorum read; then the first member's alarm list, but for a
   * 3.4+ member, whose status lists the alarms among its errors. `kv status`, a command an operator runs in
   * loops: each connection costs the process more CPU than the round trips it saves, and each write about
   * as much as the request's own work.
   */
  inTurn?: boolean;
}

const NO_LEADER = { healthy: false, detail: 'no leader' };

/** A member observed; in turn, the alarms its status lists (3.4+). */
type Observed = MemberObservation & { real?: boolean; statusAlarms?: AlarmEntry[] };
const hasLeader = (st: { leaderId?: string }) => Boolean(st.leaderId && st.leaderId !== '0');

/** One member as opsctl sees it: health, versions, leader, revision. Never throws. */
export async function observeMember(
  m: MemberSpec,
  opts: ObserveOptions,
  alsoAsk?: (c: KvClient, st?: StatusResult) => void,
  /** In turn: more requests in the row, before the read (answered without a quorum, they never wait behind it). */
  inRowToo?: (c: KvClient) => void,
): Promise<Observed> {
  const inRow = Boolean(opts.inTurn);
  const c = new KvClient(m.endpoint, { timeoutMs: opts.timeoutMs, debug: opts.debug, session: opts.session, pipeline: inRow });
  const obs: Observed = {
    name: m.name,
    id: '',
    endpoint: m.endpoint,
    reachable: false,
    healthy: false,
    healthDetail: 'no answer',
  };
  // The first time (no gateway prefix known for this endpoint yet): /version first, since the server
  // version names the gateway prefix, then the status (and the alarm list, if asked) and a quorum read
  // at once: one status request instead of a discovery that tries all three (a member that answers no
  // version still gets discovery). Once the prefix is known (every later look: the health gates, the
  // polls), all at once: one round trip. A member restarted on another version since answers the old
  // prefix with a redirect (3.3 sends /v3alpha to /v3beta, which the client then remembers) or a 404
  // (3.2 has no /v3beta: the client discovers the prefix again). Health is never asked of /health
  // (client.ts health(): on 3.2-3.4 it writes a v2 request into the raft log).
  // In turn: all on one connection, written at once (pipelined), the status and the read under the
  // prefix known or guessed (/v3; a 3.2/3.3 member is asked again under the one its version names), the
  // read last. The read of a member whose status names no leader is not waited for (below).
  const version = c.version();
  const known = c.knowsPrefix() && !inRow;
  const afterVersion = <T>(f: () => Promise<T>): Promise<T> => (known ? f() : version.then(f, f));
  const early = inRow ? c.status() : afterVersion(() => c.status());
  if (inRow) inRowToo?.(c);
  const read = inRow ? c.quorumRead() : afterVersion(() => c.quorumRead());
  early.catch(() => undefined);
  read.catch(() => undefined);
  // A member without a leader is not healthy whatever its read says later: not waited for (the read
  // would wait up to the request timeout, and a poll of a member coming back must not).
  const [st, v] = await Promise.allSettled([early, version]);
  // (with the status: a 3.4+ status lists the alarms, and an alarm list is a raft proposal on 3.4 and 3.5, an
  // entry in every member's log that moves the raft index, snapshot/shelf.ts; 3.2/3.3 are asked after it)
  if (alsoAsk && !inRow) alsoAsk(c, st.status === 'fulfilled' ? st.value : undefined);
  const leaderless = st.status === 'fulfilled' && !hasLeader(st.value);
  // (in turn, a member whose status failed is not waited for either: its row says why)
  const [h] = await Promise.allSettled([leaderless || (inRow && st.status === 'rejected') ? Promise.resolve(NO_LEADER) : read]);
  // in turn: the first member's lists after its own requests (a member that gave no status is not asked: the alarms then come from a healthy one)
  // (by a client of their own: the member's read may still be on the pipelining client's connection)
  if (alsoAsk && inRow && st.status === 'fulfilled')
    alsoAsk(new KvClient(m.endpoint, { timeoutMs: opts.timeoutMs, debug: opts.debug, session: opts.session }), st.value);
  if (st.status === 'rejected') {
    obs.error = (st.reason as Error).message;
    return obs;
  }
  obs.reachable = true;
  if (h.status === 'fulfilled') {
    obs.healthy = h.value.healthy && !leaderless;
    obs.healthDetail = leaderless ? 'no leader' : h.value.detail;
  } else {
    obs.healthDetail = `quorum read failed: ${(h.reason as Error).message}`;
  }
  if (v.status === 'fulfilled') {
    obs.serverVersion = v.value.server;
    obs.real = v.value.real;
    obs.clusterVersion = v.value.cluster === 'not_decided' ? undefined : v.value.cluster;
  }
  obs.id = st.value.memberId;
  obs.leaderId = st.value.leaderId;
  obs.revision = st.value.revision;
  obs.raftIndex = st.value.raftIndex;
  if (inRow) obs.statusAlarms = statusAlarms(st.value);
  const failed = [v].find((x): x is PromiseRejectedResult => x.status === 'rejected');
  if (failed) {
    obs.error = (failed.reason as Error).message;
    obs.healthy = false;
  }
  return obs;
}

/**
 * Every member, in parallel, plus the alarms one reachable member reports (and, when asked, the
 * cluster's member list as the first member tells it; undefined when it could not).
 */
export async function observeCluster(
  members: MemberSpec[],
  opts: ObserveOptions,
): Promise<ClusterObservation & { members: Array<MemberObservation & { real?: boolean }>; memberList?: MemberListEntry[] }> {
  // The alarm list (and the member list) are asked of the first member as soon as its gateway prefix
  // is known, with its status.
  let asked: Promise<ClusterObservation['alarms'] | undefined> = Promise.resolve(undefined);
  let listed: Promise<MemberListEntry[] | undefined> = Promise.resolve(undefined);
  const also = (c: KvClient, st?: StatusResult) => {
    // (a 3.4+ status lists the cluster's alarms among its errors)
    const inStatus = st && statusAlarms(st);
    if (opts.alarms !== false) asked = inStatus ? Promise.resolve(inStatus) : c.alarms().catch(() => undefined);
    if (opts.memberList && !opts.inTurn) listed = c.members().catch(() => undefined);
  };
  // in turn, the member list is in the first member's row (before its read)
  const list = (c: KvClient) => void (listed = c.members().catch(() => undefined));
  const inRowList = opts.memberList && opts.inTurn;
  const wantFirst = opts.alarms !== false || (opts.memberList && !opts.inTurn);
  const obs = await Promise.all(
    members.map((m, i) => observeMember(m, opts, i === 0 && wantFirst ? also : undefined, i === 0 && inRowList ? list : undefined)),
  );
  const memberList = await listed;
  if (opts.alarms === false) return { members: obs, alarms: [], memberList };
  const early = await asked;
  let alarms: ClusterObservation['alarms'] = early ?? [];
  // the first member gave none: another's status lists them (in turn, 3.4+), else a healthy member is asked
  const inStatuses = early ? undefined : obs.find((o) => o.statusAlarms)?.statusAlarms;
  if (inStatuses) alarms = inStatuses;
  const any = obs.find((o) => o.reachable && o.healthy);
  if (!early && !inStatuses && any) {
    try {
      alarms = await new KvClient(any.endpoint, { timeoutMs: opts.timeoutMs, debug: opts.debug, session: opts.session }).alarms();
    } catch (err) {
      alarms = [{ memberId: any.id, alarm: `unknown (alarm list failed: ${(err as Error).message})` }];
    }
  }
  return { members: obs, alarms, memberList };
}

/** Whether etcd auth is enabled, asked of the first healthy member (undefined: none could tell). */
export async function authEnabled(members: MemberObservation[], opts: ObserveOptions): Promise<boolean | undefined> {
  const any = members.find((o) => o.reachable && o.healthy);
  if (!any) return undefined;
  return new KvClient(any.endpoint, { timeoutMs: opts.timeoutMs, debug: opts.debug, session: opts.session }).authEnabled().catch(() => undefined);
}
