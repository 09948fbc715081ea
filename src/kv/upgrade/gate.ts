import type { MemberSpec } from '../cluster/cluster-file.js';
import { KvClient } from '../cluster/client.js';
import { membershipChange } from '../cluster/membership.js';
import { observeCluster } from '../cluster/observe.js';
import type { MemberListEntry } from '../cluster/parse.js';
import type { Look, StepEnv } from './options.js';
import type { ClusterObservation } from '../cluster/types.js';
import { waitFor, WaitFatal, WaitTimeout } from '../cluster/wait.js';

/** The whole-cluster look right before a stop said no: the member was not touched. */
export class GateRefused extends Error {}

/** While a member is down for its upgrade, another one was lost (or the cluster changed): `lost` names it. */
export class MemberLost extends WaitFatal {
  constructor(
    readonly lost: string[],
    message: string,
  ) {
    super(message);
  }
}

/** The member list, asked of each member of `order` in turn (the first that answers). */
async function memberListOf(env: StepEnv<'debug' | 'session' | 'timeouts'>, order: MemberSpec[]): Promise<MemberListEntry[]> {
  const errors: string[] = [];
  for (const x of order) {
    try {
      return await new KvClient(x.endpoint, { timeoutMs: env.o.timeouts.requestMs, debug: env.o.debug, session: env.o.session }).members();
    } catch (err) {
      errors.push(`${x.name}: ${(err as Error).message}`);
    }
  }
  throw new Error(`no member answers the member list (${errors.join('; ')})`);
}

/**
 * Before each backup copy that runs while `down` is stopped: the cluster's member list is as it was at
 * pre-flight, every other member answers (one that does not is lost: MemberLost at once, so the down
 * member can be brought back without delay), they agree on one leader that is not the down member,
 * and no alarm is raised. Members that answer but are not healthy yet, or have no common leader (the
 * election after the old leader's stop), are polled until the healthy timeout; still so then, they are
 * lost too. Not ended by Ctrl-C: the member is down, the safe point is after it is back.
 */
export async function gateWhileDown(env: StepEnv<Look | 'now'>, down: MemberSpec, waited?: (ms: number) => void): Promise<ClusterObservation> {
  const { o } = env;
  const others = o.cluster.members.filter((x) => x.name !== down.name);
  let last = '';
  // When the first look found the others not healthy yet or without a leader (the election after a
  // leader's stop), how long the cluster took from then: its own wait, not opsctl's.
  let firstNotYet: number | undefined;
  const notYet = () => {
    firstNotYet ??= o.now();
    return undefined;
  };
  try {
    const obs = await waitFor(
      async () => {
        const all = await observeCluster(o.cluster.members, { session: o.session, timeoutMs: o.timeouts.requestMs, debug: o.debug, memberList: true });
        const rest = all.members.filter((x) => x.name !== down.name);
        const gone = rest.filter((x) => !x.reachable);
        if (gone.length) {
          throw new MemberLost(
            gone.map((x) => x.name),
            gone.map((x) => `${x.name} does not answer (${x.error ?? x.healthDetail})`).join(', '),
          );
        }
        const list = all.memberList ?? (await memberListOf(env, others));
        const changed = membershipChange(env.membership, list);
        if (changed) throw new MemberLost([], changed);
        if (all.alarms.length) throw new MemberLost([], `alarm ${all.alarms.map((a) => a.alarm).join(', ')} raised`);
        const sick = rest.filter((x) => !x.healthy);
        if (sick.length) {
          last = sick.map((x) => `${x.name} is not healthy (${x.error ?? x.healthDetail})`).join(', ');
          return notYet();
        }
        const downId = all.members.find((x) => x.name === down.name)?.id || env.membership.find((e) => e.name === down.name)?.id;
        const leaders = new Set(rest.map((x) => x.leaderId ?? ''));
        const [leader] = leaders;
        if (leaders.size !== 1 || !leader || leader === '0' || leader === downId) {
          last = 'the other members do not agree on one leader';
          return notYet();
        }
        return all;
      },
      { timeoutMs: o.timeouts.healthyMs, pollMs: o.timeouts.pollMs, now: o.now, what: `the other members healthy while ${down.name} is down` },
    );
    if (firstNotYet !== undefined) waited?.(o.now() - firstNotYet);
    return obs;
  } catch (err) {
    if (err instanceof WaitTimeout) {
      const names = others.map((x) => x.name).filter((n) => last.includes(n));
      throw new MemberLost(names, `${last || err.message} for ${o.timeouts.healthyMs} ms`);
    }
    if (err instanceof MemberLost) throw err;
    throw new MemberLost([], (err as Error).message);
  }
}
