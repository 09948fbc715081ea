import type { ClusterSpec, MemberSpec } from './cluster-file.js';
import { KvClient } from './client.js';
import type { MemberListEntry } from './parse.js';
import type { KvSession } from './session.js';
import type { MemberObservation } from './types.js';

/**
 * The whole cluster, not the endpoints given: the member list as the cluster itself reports it
 * (the gateway's cluster/member/list), compared with the members opsctl was told about. An upgrade
 * that counts only the named members can stop a second member while an unnamed one is down.
 */

export interface Membership {
  /** The cluster's member list. */
  list: MemberListEntry[];
  /** The member that answered it. */
  from: string;
}

const trim = (u: string) => u.replace(/\/+$/, '');

/** How a listed member is named in messages: name, id and peer URL. */
export function describeListed(e: MemberListEntry): string {
  return `${e.name || '(not started yet)'} (id ${e.id}, peer ${e.peerUrls.join(',') || 'none'})`;
}

/** The named member a list entry is, by the id it reported, its client URL, or its name. */
function matchSpec(e: MemberListEntry, specs: MemberSpec[], observed: MemberObservation[]): MemberSpec | undefined {
  const byId = observed.find((o) => o.id && o.id === e.id);
  if (byId) return specs.find((s) => s.name === byId.name);
  return specs.find((s) => e.clientUrls.some((u) => trim(u) === trim(s.endpoint))) ?? (e.name ? specs.find((s) => s.name === e.name) : undefined);
}

/** Members the cluster has that were not named, and named members the cluster does not have. */
export function compareMembership(
  list: MemberListEntry[],
  specs: MemberSpec[],
  observed: MemberObservation[],
): { unnamed: MemberListEntry[]; strangers: MemberSpec[] } {
  const matched = new Set<string>();
  const unnamed: MemberListEntry[] = [];
  for (const e of list) {
    const s = matchSpec(e, specs, observed);
    if (s) matched.add(s.name);
    else unnamed.push(e);
  }
  return { unnamed, strangers: specs.filter((s) => !matched.has(s.name)) };
}

/**
 * The member list, asked of the healthy observed members in turn (the first that answers), or the
 * reason none could tell.
 */
export async function readMembership(
  observed: MemberObservation[],
  opts: { session: KvSession; timeoutMs: number; debug?: (line: string) => void },
): Promise<Membership | { error: string }> {
  const errors: string[] = [];
  for (const o of observed.filter((x) => x.reachable && x.healthy)) {
    try {
      return { list: await new KvClient(o.endpoint, opts).members(), from: o.name };
    } catch (err) {
      errors.push(`${o.name}: ${(err as Error).message}`);
    }
  }
  return { error: errors.length ? errors.join('; ') : 'no healthy member to ask' };
}

/** What an unnamed member is doing: reachable and healthy, or why not (its client URLs asked). */
async function probe(e: MemberListEntry, session: KvSession, timeoutMs: number): Promise<string> {
  if (!e.clientUrls.length) return 'has never started (no client URL published): it counts toward the quorum but is down';
  const why: string[] = [];
  for (const u of e.clientUrls) {
    const h = await new KvClient(trim(u), { session, timeoutMs }).health().catch((err: Error) => ({ healthy: false, detail: `not reachable: ${err.message}` }));
    if (h.healthy) return `is up and healthy at ${trim(u)}`;
    why.push(`${trim(u)} ${h.detail.startsWith('not reachable') ? h.detail : `not healthy: ${h.detail}`}`);
  }
  return `is down: ${why.join('; ')}`;
}

/** How to name every member, by where the members came from. */
function addFix(cluster: ClusterSpec, e: MemberListEntry): string {
  const url = e.clientUrls[0] ? trim(e.clientUrls[0]) : undefined;
  const add =
    cluster.source === 'file'
      ? `add it to the cluster file's members${url ? ` (endpoint ${url})` : ''}`
      : cluster.source === 'endpoints'
        ? `add ${url ?? 'its client URL'} to --endpoints`
        : 'name it in the sandbox';
  return `${add}; if it is gone for good, remove it first (etcdctl member remove ${BigInt(e.id).toString(16)})`;
}

/**
 * Pre-flight: every member the cluster lists must be one of those named (and reachable and healthy:
 * the planner checks the named ones), and every named member must be in the list. The reasons to
 * refuse, each naming the member (name, id, peer URL) and the fix; empty when the two agree.
 */
export async function membershipProblems(
  cluster: ClusterSpec,
  observed: MemberObservation[],
  m: Membership | { error: string },
  session: KvSession,
  timeoutMs: number,
): Promise<string[]> {
  if ('error' in m) {
    return [
      `cannot read the cluster's member list (${m.error}): without it opsctl cannot tell whether a member it was not told about is down; fix the members' gateways (cluster/member/list) and run again`,
    ];
  }
  const { unnamed, strangers } = compareMembership(m.list, cluster.members, observed);
  const quorum = Math.floor(m.list.length / 2) + 1;
  const reasons = await Promise.all(
    unnamed.map(async (e) => {
      const state = await probe(e, session, timeoutMs);
      return (
        `member ${describeListed(e)} is in the cluster's member list (${m.list.length} members, quorum ${quorum}) but was not given, and ${state}: ` +
        `the upgrade would not count it when it stops a member; fix: ${addFix(cluster, e)}`
      );
    }),
  );
  for (const s of strangers) {
    reasons.push(
      `member ${s.name} (${s.endpoint}) is not in the cluster's member list (asked ${m.from}: ${m.list.map((e) => e.name || e.id).join(', ')}): it belongs to another cluster or was removed; fix: give only this cluster's members`,
    );
  }
  return reasons;
}

/** Before a stop: how the member list changed since pre-flight (left, joined), or undefined. */
export function membershipChange(before: MemberListEntry[], now: MemberListEntry[]): string | undefined {
  const ids = (l: MemberListEntry[]) => new Set(l.map((e) => e.id));
  const was = ids(before);
  const is = ids(now);
  const left = before.filter((e) => !is.has(e.id)).map((e) => `${describeListed(e)} left`);
  const joined = now.filter((e) => !was.has(e.id)).map((e) => `${describeListed(e)} joined`);
  const all = [...left, ...joined];
  return all.length ? `the cluster's member list changed since pre-flight (${all.join(', ')}; now ${now.length} members)` : undefined;
}
