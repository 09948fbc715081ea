/**
 * Give back what was taken (issue 57): a flow that finds the cluster worse than its journal expects (a member
 * down that the journal never stopped) starts the member the journal stopped itself, on the version it last ran
 * healthy, without waiting for the others, and says what remains: each member down on its own is the
 * operator's to look at, never opsctl's to start. kv rollback and the upgrade's resume say it alike.
 */
import type { ClusterObservation } from '../cluster/types.js';

/** A member down (it does not answer at all) that the journal never stopped. */
export interface LeftDown {
  name: string;
  endpoint: string;
  /** What it does now: "does not answer (connect ECONNREFUSED …)", "not healthy (…)". */
  state: string;
}

/**
 * The members down that opsctl did not take (`took`: the members its journal stopped). One that answers but is
 * not healthy is not among them: without a quorum none is, and the member given back restores it.
 */
export function leftDown(obs: ClusterObservation, took: ReadonlySet<string>): LeftDown[] {
  return obs.members
    .filter((m) => !took.has(m.name) && !m.reachable)
    .map((m) => ({ name: m.name, endpoint: m.endpoint, state: `does not answer (${m.error ?? 'no answer'})` }));
}

/** The command that shows a member's state (the CLI gives its own, with the cluster's TLS and selection). */
export type LookCommand = (m: LeftDown) => string;

export const defaultLook: LookCommand = (m) => `opsctl kv endpoint health --endpoints ${m.endpoint}`;

/** What remains for the operator, one line per member left down. */
export function leftLines(left: readonly LeftDown[], look: LookCommand = defaultLook): string[] {
  return left.map(
    (m) =>
      `${m.name} ${m.state}: opsctl did not stop it, so it is not opsctl's to start: bring it back on its host (its service manager, its log), then look: ${look(m)}`,
  );
}
