/**
 * Inside the clone, as a hop's wait for the cluster version begins: the leader hands off to another member.
 * etcd's leader looks at the members' versions on the first commit of its term, else every 4 s (its version
 * monitor); a new leader's term raises the version at once, where a clone would otherwise sit 0 to 4 s on that
 * clock at every hop. Only the clone: on the cluster a leader change is a pause of its writes the run does not
 * need. What etcd does at the raise (the storage version, a 3.7 member's replay of it) is the same either way.
 */
import type { MemberSpec } from '../cluster/cluster-file.js';
import { KvClient } from '../cluster/client.js';
import { observeCluster } from '../cluster/observe.js';
import { minor } from '../cluster/parse.js';
import type { KvSession } from '../cluster/session.js';
import { moveLeader } from '../ops/maintenance.js';

/** What the hand-off did: `moved` with its words, or why it was left to etcd's own clock. */
export type HandOff = { moved: true; detail: string } | { moved: false; why: string };

const TIMEOUT_MS = 2000;

/** Hands the leadership of `members` to another member once every one runs `to` and the cluster version is not there yet. */
export async function handOffLeader(members: readonly MemberSpec[], session: KvSession, to: string): Promise<HandOff> {
  // (the run's own look at every member: its version, the cluster version and the leader it reports)
  const { members: seen } = await observeCluster([...members], { session, timeoutMs: TIMEOUT_MS, alarms: false });
  if (seen.some((x) => !x.reachable)) return { moved: false, why: 'not every member answered' };
  if (seen.every((x) => minor(x.clusterVersion) === to)) return { moved: false, why: `the cluster version is ${to} already` };
  const behind = seen.find((x) => minor(x.serverVersion) !== to);
  if (behind) return { moved: false, why: `${behind.name} runs ${behind.serverVersion}` };
  const leader = seen.find((x) => x.leaderId !== undefined && x.leaderId === x.id);
  const target = seen.find((x) => x !== leader);
  if (!leader || !target) return { moved: false, why: 'no one leader seen' };
  try {
    await moveLeader(new KvClient(leader.endpoint, { timeoutMs: TIMEOUT_MS, session }), target.id);
  } catch (err) {
    return { moved: false, why: `move-leader: ${(err as Error).message}` };
  }
  return { moved: true, detail: `leadership handed from ${leader.name} to ${target.name}` };
}
