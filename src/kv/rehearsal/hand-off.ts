/**
 * Inside the clone, as a hop's wait for the cluster version begins: the leader hands off to another member.
 * etcd's leader looks at the members' versions on the first commit of its term, else every 4 s (its version
 * monitor); a new leader's term raises the version at once, where a clone would otherwise sit 0 to 4 s on that
 * clock at every hop. Only the clone: on the cluster a leader change is a pause of its writes the run does not
 * need. What etcd does at the raise (the storage version, a 3.7 member's replay of it) is the same either way.
 */
import type { MemberSpec } from '../cluster/cluster-file.js';
import { KvClient } from '../cluster/client.js';
import { minor } from '../cluster/parse.js';
import type { KvSession } from '../cluster/session.js';
import { moveLeader } from '../ops/maintenance.js';

/** What the hand-off did: `moved` with its words, or why it was left to etcd's own clock. */
export type HandOff = { moved: true; detail: string } | { moved: false; why: string };

/** Hands the leadership of `members` to another member once every one runs `to` and the cluster version is not there yet. */
export async function handOffLeader(members: readonly MemberSpec[], session: KvSession, to: string): Promise<HandOff> {
  const seen = await Promise.all(
    members.map(async (m) => {
      const c = new KvClient(m.endpoint, { timeoutMs: 2000, session });
      const [v, s] = await Promise.all([c.version(), c.status()]).catch(() => [undefined, undefined] as const);
      return v && s ? { m, c, v, s } : undefined;
    }),
  );
  const all = seen.filter((x) => x !== undefined);
  if (all.length !== members.length) return { moved: false, why: 'not every member answered' };
  if (all.every((x) => minor(x.v.cluster) === to)) return { moved: false, why: `the cluster version is ${to} already` };
  const behind = all.find((x) => minor(x.v.server) !== to);
  if (behind) return { moved: false, why: `${behind.m.name} runs ${behind.v.server}` };
  const leader = all.find((x) => x.s.leaderId !== undefined && x.s.leaderId === x.s.memberId);
  const target = all.find((x) => x !== leader);
  if (!leader || !target) return { moved: false, why: 'no one leader seen' };
  try {
    await moveLeader(leader.c, target.s.memberId);
  } catch (err) {
    return { moved: false, why: `move-leader: ${(err as Error).message}` };
  }
  return { moved: true, detail: `leadership handed from ${leader.m.name} to ${target.m.name}` };
}
