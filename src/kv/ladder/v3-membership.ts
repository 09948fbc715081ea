/**
 * The membership etcd keeps in its v3 store (the backend's "members" and "members_removed" buckets) and
 * the consistent index in its "meta" bucket, read from a snapshot of the leader before the 3.4 → 3.5 and
 * 3.5 → 3.6 hops (rules/hop-3.5.ts v3-consistent-index, rules/hop-3.6.ts v3-removed-members).
 *
 * Why (measured on 3.4.23 → 3.5.35 → 3.6.16): etcd 3.4 writes the members to its v3 store at bootstrap but
 * persists its consistent index only with a v3 write (mvcc's saveIndex) or a snapshot; a cluster that never
 * had one keeps none. 3.5.26 and later clean up "zombie" members after each ConfChange they apply to the v3
 * store (etcd-io/etcd#20995: server.go applyEntries → CleanupZombieMembersIfNeeded): on the first 3.5 start
 * the WAL's bootstrap ConfChanges are above the (missing) consistent index, so they are applied again, and
 * after the first one the v2 store (rebuilt from the WAL) knows one member while the v3 store knows all:
 * the others are put in members_removed ("Removing zombie member from v3store"), and adding them back
 * leaves the mark. 3.5 reads the v2 store and runs on. 3.6 reads the v3 store (RaftCluster.IsIDRemoved):
 * it answers their raft streams 410 Gone ("rejected stream from remote peer because it was removed"), and
 * each of them, told so, stops itself ("the member has been permanently removed from the cluster").
 */
import { closeSync, mkdtempSync, openSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BoltReader } from '../snapshot/bbolt.js';
import { saveSnapshot } from '../snapshot/save.js';
import { SnapshotShelf } from '../snapshot/shelf.js';
import { findEtcdctl } from '../cluster/etcdctl.js';
import type { ClusterObservation } from '../cluster/types.js';
import { capabilitiesOf } from '../drivers/driver.js';
import type { HopFacts } from '../rules/types.js';
import type { LadderOptions } from './record.js';
import type { Snapshotting } from '../upgrade/options.js';

/** The v3 store's membership in an etcd db file (the first `dbBytes` bytes; a snapshot's SHA-256 trailer after them). */
export interface DbMembership {
  /** The "meta" bucket's consistent_index (undefined: none was ever persisted). */
  consistentIndex?: bigint;
  /** The "members" bucket: ids in hex, as etcd keys them. */
  members: Array<{ id: string; name: string }>;
  /** The "members_removed" bucket's ids (hex). */
  removed: string[];
}

export function dbMembership(file: string, dbBytes = statSync(file).size - 32): DbMembership {
  const fd = openSync(file, 'r');
  try {
    const db = new BoltReader(fd, dbBytes);
    const ci = db.peek('meta')?.find((e) => e.key.toString('latin1') === 'consistent_index');
    const members = (db.peek('members', 100_000) ?? []).map((e) => {
      let name = '';
      try {
        name = String((JSON.parse(e.value.toString('utf8')) as { name?: string }).name ?? '');
      } catch {
        /* a member whose value is not JSON: named by its id */
      }
      return { id: e.key.toString('latin1'), name };
    });
    const removed = (db.peek('members_removed', 100_000) ?? []).map((e) => e.key.toString('latin1'));
    return { consistentIndex: ci && ci.value.length >= 8 ? ci.value.readBigUInt64BE(0) : undefined, members, removed };
  } finally {
    closeSync(fd);
  }
}

/** A member id as etcd keys it in its buckets (hex, no leading zeros) from the API's decimal string. */
export function hexId(decimal: string): string {
  return BigInt(decimal).toString(16);
}

/**
 * The leader's v3 store, read from a snapshot of it taken now (removed after, or kept on the run's shelf when
 * nothing was committed while it streamed): the consistent index, and which members of the cluster (those the
 * members answer for) are marked removed there.
 */
export async function v3MembershipFacts(o: Pick<LadderOptions, 'driver' | 'debug' | Snapshotting>, obs: ClusterObservation): Promise<HopFacts['v3Membership']> {
  const can = capabilitiesOf(o.driver);
  if (!can.etcdData) return { why: `does not apply: ${can.what} members keep no etcd v3 store`, none: true };
  const leaderId = obs.members.find((m) => m.healthy && m.leaderId)?.leaderId;
  const from = obs.members.find((m) => m.healthy && m.id === leaderId) ?? obs.members.find((m) => m.healthy);
  if (!from) return { why: 'no healthy member to take a snapshot of its v3 store from' };
  if (!from.real) return { why: `does not apply: ${from.name} is not real etcd (it keeps no etcd v3 store)`, none: true };
  const dir = mkdtempSync(join(tmpdir(), 'opsctl-v3-membership-'));
  const t0 = Date.now();
  let kept = false;
  try {
    const reach = { session: o.session, timeoutMs: o.timeouts.requestMs };
    // (the leader's raft index around the stream: the same before and after, the snapshot may stand in for the first stop's own, snapshot/shelf.ts)
    const before = o.shelf ? await SnapshotShelf.settledIndex(from.endpoint, reach) : undefined;
    const snap = await saveSnapshot({
      endpoint: from.endpoint,
      session: o.session,
      file: join(dir, 'leader.db'),
      timeoutMs: o.timeouts.snapshotMs,
      // (etcdctl as the hop's own snapshots find it, upgrade/run.ts: its stream is several times faster than the gateway's base64 JSON)
      etcdctl: o.snapshotVia === 'gateway' ? undefined : findEtcdctl(o.etcdctl),
      exec: o.exec,
    });
    const db = dbMembership(snap.file);
    if (o.shelf && before !== undefined && before === (await SnapshotShelf.settledIndex(from.endpoint, reach))) {
      o.shelf.offer({ snap, endpoint: from.endpoint, raftIndex: before });
      kept = true;
    }
    o.debug?.(
      `[kv] v3 membership: a snapshot of ${from.name} (cluster version ${from.clusterVersion ?? '?'}), ${snap.bytes} bytes via ${snap.via}, read in ${Date.now() - t0} ms${kept ? `, kept for the first stop's snapshot (raft index ${before})` : ''}`,
    );
    const live = new Map(obs.members.map((m) => [hexId(m.id), m.name]));
    return {
      on: from.name,
      via: snap.via,
      ...(db.consistentIndex !== undefined ? { consistentIndex: String(db.consistentIndex) } : {}),
      members: db.members.length,
      removedLive: db.removed.filter((id) => live.has(id)).map((id) => ({ id, name: live.get(id)! })),
    };
  } catch (err) {
    return { why: `a snapshot of ${from.name}'s v3 store could not be read: ${(err as Error).message}` };
  } finally {
    if (!kept) rmSync(dir, { recursive: true, force: true });
  }
}
