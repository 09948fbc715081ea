/**
 * The conditions of the simulated cluster around a member: a member that never turns healthy on some
 * version, a corrupt snapshot, a raised alarm, a leader whose heartbeats stop naming it, auth turned
 * on, v2 data, a diverged keyspace, free pages in the db, a downgrade the leader is slow to end. The
 * product runs every member as it is (no condition); a test entry (packages/etcd-sim/testing/) sets a provider before the member starts.
 */
export interface Conditions {
  neverHealthyOn?: string;
  corruptSnapshot?: boolean;
  alarm?: string;
  muteHeartbeats?: boolean;
  /** Auth enabled: a range or put without a user is refused, as etcd's gateway does ("user name is empty"). */
  authEnabled?: boolean;
  /** Bytes of v2 data the member's v2 API reports (3.2/3.3, or 3.4/3.5 with enable-v2). */
  v2Bytes?: number;
  /** This member's KV diverged: its HashKV differs from the others' at the same revision. */
  divergent?: boolean;
  /** The same, only while it runs this minor version (a member that diverges after its upgrade). */
  divergentOn?: string;
  /** Free pages in the db file (dbSize counts them) until this member is defragmented. */
  freeBytes?: number;
  /** As leader, it keeps an enabled downgrade on after every member runs its target (a leader slow to end it). */
  downgradeLingers?: boolean;
  /** As leader, it leaves the cluster version where it is after every member runs a newer minor (etcd moves it within seconds). */
  clusterVersionLags?: boolean;
  /** Every member reports this cluster version, whatever its leader decides (a fresh cluster's 3.0, before etcd's leader first checks the members). */
  clusterVersionAt?: string;
}

const NONE: Conditions = Object.freeze({});
let provider: () => Conditions = () => NONE;

/** The conditions now (asked on each request and each heartbeat, so they can change while it runs). */
export function conditions(): Conditions {
  return provider();
}

/** Set before the member starts (a test entry); the member reads them from then on. */
export function setConditions(p: () => Conditions): void {
  provider = p;
}
