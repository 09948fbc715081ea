/** The maintenance calls around a window, as etcdctl makes them: alarms, defragment, compact, move-leader, an endpoint's status and KV hash. */
import type { KvClient } from '../cluster/client.js';
import { asList, asObject, compareMinor, field, minor, parseJsonSafe, textOf } from '../cluster/parse.js';
import { needs, serverVersion } from './versions.js';

export interface Alarm {
  memberId: string;
  alarm: string;
}

function alarmsOf(text: string): Alarm[] {
  return asList(asObject(parseJsonSafe(text)).alarms)
    .map((a) => ({ memberId: textOf(field(a, 'memberID', 'member_id')) ?? '0', alarm: textOf(field(a, 'alarm')) ?? 'NONE' }))
    .filter((a) => a.alarm !== 'NONE');
}

export async function listAlarms(c: KvClient): Promise<Alarm[]> {
  return alarmsOf(await c.gateway('/maintenance/alarm', { action: 'GET' }));
}

/** Disarms every raised alarm (etcdctl alarm disarm: each one by its member and kind); returns the ones disarmed. */
export async function disarmAlarms(c: KvClient): Promise<Alarm[]> {
  const raised = await listAlarms(c);
  const done: Alarm[] = [];
  for (const a of raised) {
    done.push(...alarmsOf(await c.gateway('/maintenance/alarm', { action: 'DEACTIVATE', memberID: a.memberId, alarm: a.alarm })));
  }
  return done.length ? done : raised;
}

export async function compact(c: KvClient, revision: string, { physical }: { physical: boolean }): Promise<void> {
  await c.gateway('/kv/compaction', { revision, physical });
}

export interface EndpointStatus {
  /** The gateway's answer as it came (etcdctl -w json prints the same response). */
  raw?: string;
  id: string;
  version: string;
  dbSize: number;
  /** 3.4+: the bytes of the db in use (dbSize counts free pages too). */
  dbSizeInUse?: number;
  leader: string;
  isLeader: boolean;
  isLearner: boolean;
  raftTerm: string;
  raftIndex: string;
  raftAppliedIndex?: string;
  /** The store's revision when the member answered (its header): what `kv compact` takes. */
  revision: string;
  errors: string[];
  /** 3.6: the storage version, the db quota, the downgrade in progress. */
  storageVersion?: string;
  dbSizeQuota?: number;
  downgrade?: { target: string; enabled: boolean };
}

export async function endpointStatus(c: KvClient): Promise<EndpointStatus> {
  const raw = await c.gateway('/maintenance/status', {});
  const r = asObject(parseJsonSafe(raw));
  const id = textOf(field(r.header, 'member_id', 'memberId')) ?? '0';
  const leader = textOf(r.leader) ?? '0';
  const n = (v: unknown) => (v === undefined ? undefined : Number(textOf(v) ?? v));
  return {
    raw,
    id,
    version: textOf(r.version) ?? '',
    dbSize: n(field(r, 'dbSize', 'db_size')) ?? 0,
    ...(field(r, 'dbSizeInUse', 'db_size_in_use') !== undefined ? { dbSizeInUse: n(field(r, 'dbSizeInUse', 'db_size_in_use')) } : {}),
    leader,
    isLeader: leader === id,
    isLearner: field(r, 'isLearner', 'is_learner') === true,
    raftTerm: textOf(field(r, 'raftTerm', 'raft_term')) ?? '0',
    raftIndex: textOf(field(r, 'raftIndex', 'raft_index')) ?? '0',
    ...(field(r, 'raftAppliedIndex', 'raft_applied_index') !== undefined
      ? { raftAppliedIndex: textOf(field(r, 'raftAppliedIndex', 'raft_applied_index')) }
      : {}),
    revision: textOf(field(r.header, 'revision')) ?? '0',
    errors: asList(r.errors).filter((e): e is string => typeof e === 'string'),
    ...(textOf(r.storageVersion) !== undefined ? { storageVersion: textOf(r.storageVersion) } : {}),
    ...(r.dbSizeQuota !== undefined ? { dbSizeQuota: n(r.dbSizeQuota) } : {}),
    ...(r.downgradeInfo !== undefined
      ? { downgrade: { target: textOf(field(r.downgradeInfo, 'targetVersion', 'target_version')) ?? '', enabled: field(r.downgradeInfo, 'enabled') === true } }
      : {}),
  };
}

/**
 * One member's status as opsctl prints it (--json, the table, TSV): every fact etcdctl gives, ids in hex,
 * sizes in bytes; null where the member's version does not give the fact (3.2/3.3: no size in use, learner
 * or applied index; before 3.6: no storage version, quota or downgrade).
 */
export interface StatusFacts {
  endpoint: string;
  id: string;
  version: string;
  storage_version: string | null;
  db_size: number;
  db_size_in_use: number | null;
  /** etcdctl 3.6's "percentage not in use": 100 minus the whole percent in use. */
  not_in_use_percent: number | null;
  db_size_quota: number | null;
  leader: boolean;
  leader_id: string;
  learner: boolean | null;
  raft_term: number;
  raft_index: number;
  raft_applied_index: number | null;
  revision: number;
  errors: string[];
  downgrade_target_version: string | null;
  downgrade_enabled: boolean | null;
}

export function statusFacts(endpoint: string, s: EndpointStatus): StatusFacts {
  const hex = (id: string) => BigInt(id).toString(16);
  const from34 = !/^3\.[23]\./.test(s.version);
  return {
    endpoint,
    id: hex(s.id),
    version: s.version,
    storage_version: s.storageVersion ?? null,
    db_size: s.dbSize,
    db_size_in_use: s.dbSizeInUse ?? null,
    not_in_use_percent: s.dbSizeInUse === undefined ? null : s.dbSize ? 100 - Math.floor((s.dbSizeInUse * 100) / s.dbSize) : 0,
    db_size_quota: s.dbSizeQuota ?? null,
    leader: s.isLeader,
    leader_id: hex(s.leader),
    learner: from34 ? s.isLearner : null,
    raft_term: Number(s.raftTerm),
    raft_index: Number(s.raftIndex),
    raft_applied_index: s.raftAppliedIndex === undefined ? null : Number(s.raftAppliedIndex),
    revision: Number(s.revision),
    errors: s.errors,
    downgrade_target_version: s.downgrade ? s.downgrade.target : s.storageVersion !== undefined ? '' : null,
    downgrade_enabled: s.downgrade ? s.downgrade.enabled : s.storageVersion !== undefined ? false : null,
  };
}

/**
 * Leadership moved to `targetId` (3.3+). etcd takes it only from the leader: `leader` is a client of
 * the current leader (the caller finds it by the members' status).
 */
export async function moveLeader(leader: KvClient, targetId: string): Promise<void> {
  needs(await serverVersion(leader), 'move-leader');
  await leader.gateway('/maintenance/transfer-leadership', { targetID: targetId });
}

/** HashKV over the gateway (3.5+ answers it there; 3.3 and 3.4 only over gRPC: etcdctl). */
export async function gatewayHashKv(c: KvClient, revision?: string): Promise<{ hash: string; compactRevision: string; hashRevision?: string }> {
  const r = asObject(parseJsonSafe(await c.gateway('/maintenance/hashkv', revision ? { revision } : {})));
  return {
    hash: typeof r.hash === 'number' || typeof r.hash === 'string' ? String(r.hash) : '0',
    compactRevision: textOf(field(r, 'compact_revision', 'compactRevision')) ?? '0',
    ...(field(r, 'hash_revision', 'hashRevision') !== undefined ? { hashRevision: textOf(field(r, 'hash_revision', 'hashRevision')) } : {}),
  };
}

/** Whether this version answers HashKV on its gateway. */
export function hashKvOnGateway(version: string): boolean {
  return compareMinor(minor(version) ?? '0.0', '3.5') >= 0;
}
