/**
 * The ladder's pure planner: from the cluster as observed to the hops that take it to a target
 * minor, one rolling upgrade per minor (the ladder's table, @opsctl/shared/etcd-ladder: 3.2 → … → 3.7),
 * with a patch hop inside a minor when a member runs a release below the floor the next minor's guide
 * sets (3.5 before 3.5.32 ahead of 3.6, 3.6 before 3.6.11 ahead of 3.7).
 */
import { LADDER_MINORS } from '@opsctl/shared/etcd-ladder.js';
import { compareMinor, compareVersion, minor, nextMinor } from '../cluster/parse.js';
import { unreachable } from '../upgrade/planner.js';
import { floorOf } from '../rules/floor.js';
import type { ClusterObservation } from '../cluster/types.js';

/** The minors the ladder knows, oldest first (the table's). */
export { LADDER_MINORS };

export interface Hop {
  from: string;
  to: string;
  /** A rolling restart onto a newer patch release of the same minor (3.5.x → 3.5.32+, 3.6.x → 3.6.11+). */
  patch: boolean;
}

export type LadderPlan = { ok: true; from: string; hops: Hop[] } | { ok: false; reasons: string[] };

/** The hop's name, as the plan and the journal write it. */
export function hopName(h: Hop): string {
  return h.patch ? `${h.from} → ${h.to} (patch)` : `${h.from} → ${h.to}`;
}

/**
 * The hops from the cluster as it is to `to`. The members may stand on one minor, or on two next to
 * each other with the cluster version at the lower (a hop that stopped half-way: it is the first
 * hop). Anything else is refused: a member on an unexpected version, a cluster version that is not
 * the lowest member's, a target below the cluster (a downgrade).
 */
export function planLadder(obs: ClusterObservation, to: string): LadderPlan {
  if (!LADDER_MINORS.includes(to)) return { ok: false, reasons: [`--to ${to}: the ladder knows ${LADDER_MINORS.join(', ')}`] };
  const seen = obs.members.filter((m) => m.reachable && m.serverVersion);
  if (!seen.length) {
    const down = obs.members.filter((m) => !m.reachable).map(unreachable);
    return { ok: false, reasons: down.length ? down : ['no member answered with its version'] };
  }
  const reasons: string[] = [];
  const minors = [...new Set(seen.map((m) => minor(m.serverVersion)!))].sort(compareMinor);
  const low = minors[0]!;
  const high = minors.at(-1)!;
  for (const m of seen) {
    const v = minor(m.serverVersion)!;
    if (!LADDER_MINORS.includes(v)) reasons.push(`member ${m.name} runs ${m.serverVersion}, which the ladder does not know (${LADDER_MINORS.join(', ')})`);
  }
  if (minors.length > 2 || (minors.length === 2 && nextMinor(low) !== high)) {
    reasons.push(
      `the members run ${seen.map((m) => `${m.name} ${m.serverVersion}`).join(', ')}: more than one hop apart, which no upgrade leaves behind; bring every member to one minor first (opsctl kv rollback, or the member's own version)`,
    );
  }
  const clusterVersions = [...new Set(seen.filter((m) => m.clusterVersion && m.clusterVersion !== 'not_decided').map((m) => minor(m.clusterVersion)!))];
  if (clusterVersions.length > 1) reasons.push(`members disagree on the cluster version (${clusterVersions.join(', ')})`);
  const cluster = clusterVersions[0];
  if (cluster && cluster !== low && !(minors.length === 1 && cluster === low)) {
    reasons.push(`the cluster version is ${cluster} while the lowest member runs ${low}: not a state an upgrade leaves; check the members (opsctl kv status)`);
  }
  if (compareMinor(to, high) < 0) {
    reasons.push(
      `--to ${to}: member ${seen.find((m) => minor(m.serverVersion) === high)!.name} runs ${high}, newer than ${to}: that is a downgrade, which kv upgrade does not do (to undo an upgrade whose cluster version has not moved yet: opsctl kv rollback)`,
    );
  }
  if (reasons.length) return { ok: false, reasons };
  const hops: Hop[] = [];
  // The next minor's guide may set a patch floor (3.6 joins only from 3.5.32, 3.7 from 3.6.11): members
  // already on the minor below it get a patch hop inside their minor first.
  const needsPatch = (at: string) => {
    const floor = compareMinor(to, at) > 0 ? floorOf(nextMinor(at)) : undefined;
    return floor !== undefined && seen.some((m) => compareVersion(m.serverVersion!, floor) < 0);
  };
  if (low === high && needsPatch(low)) hops.push({ from: low, to: low, patch: true });
  for (let at = low; compareMinor(at, to) < 0; at = nextMinor(at)) hops.push({ from: at, to: nextMinor(at), patch: false });
  // (The release a hop into a minor brings is known only from its binary: the next hop's floor rule checks it.)
  return { ok: true, from: low, hops };
}
