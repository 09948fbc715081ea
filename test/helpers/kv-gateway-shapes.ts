import { prefixOf, reply, type FakeMemberDef, type Reply } from './kv-gateway-mock.js';

/**
 * etcd's JSON gateway answers as real members write them (grpc-gateway over etcd's protobufs, as recorded
 * by test/e2e/etcd-versions.e2e.test.ts and the kv-etcdctl-* e2e tests): int64 and uint64 as decimal
 * strings, bytes base64, a `header` on every answer, fields at their zero value left out, the protobuf
 * field names (`dbSize`, `peerURLs`, `memberID`, `ID`/`TTL`).
 */
export const CLUSTER_ID = '14841639068965178418';

export const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
export const unb64 = (s: unknown) => Buffer.from(String(s), 'base64').toString('utf8');

/** The response header a member writes. */
export function header(m: Pick<FakeMemberDef, 'id'>, revision: number, raftTerm = 2): Record<string, string> {
  return { cluster_id: CLUSTER_ID, member_id: m.id, revision: String(revision), raft_term: String(raftTerm) };
}

export interface KvFact {
  key: string;
  value: string;
  create: number;
  mod: number;
  version?: number;
  /** The lease id, decimal. */
  lease?: string;
}

/** One mvccpb.KeyValue (a zero lease left out, as the gateway does). */
export function kv(k: KvFact): Record<string, string> {
  return {
    key: b64(k.key),
    create_revision: String(k.create),
    mod_revision: String(k.mod),
    version: String(k.version ?? 1),
    value: b64(k.value),
    ...(k.lease && k.lease !== '0' ? { lease: k.lease } : {}),
  };
}

/** A RangeResponse: no `kvs` and no `count` when nothing matched (zero values are left out). */
export function rangeReply(m: Pick<FakeMemberDef, 'id'>, revision: number, kvs: KvFact[]): Record<string, unknown> {
  return { header: header(m, revision), ...(kvs.length ? { kvs: kvs.map(kv), count: String(kvs.length) } : {}) };
}

export interface StatusFacts {
  leader: string;
  revision: number;
  dbSize?: number;
  dbSizeInUse?: number;
  raftIndex?: number;
  raftTerm?: number;
  isLearner?: boolean;
  errors?: string[];
}

/**
 * A StatusResponse as the member's version writes it: 3.4 adds raftAppliedIndex, dbSizeInUse and
 * isLearner (false left out); 3.6 adds storageVersion, dbSizeQuota and downgradeInfo.
 */
export function statusReply(m: Pick<FakeMemberDef, 'id' | 'version'>, s: StatusFacts): Record<string, unknown> {
  const minor = Number(m.version.split('.')[1]);
  const raftIndex = s.raftIndex ?? s.revision + 10;
  return {
    header: header(m, s.revision, s.raftTerm),
    version: m.version,
    dbSize: String(s.dbSize ?? 20480),
    leader: s.leader,
    raftIndex: String(raftIndex),
    raftTerm: String(s.raftTerm ?? 2),
    ...(minor >= 4 ? { raftAppliedIndex: String(raftIndex), dbSizeInUse: String(s.dbSizeInUse ?? 16384) } : {}),
    ...(minor >= 4 && s.isLearner ? { isLearner: true } : {}),
    ...(s.errors?.length ? { errors: s.errors } : {}),
    ...(minor >= 6 ? { storageVersion: `${m.version.split('.').slice(0, 2).join('.')}.0`, dbSizeQuota: '2147483648', downgradeInfo: {} } : {}),
  };
}

export interface MemberFact {
  id: string;
  name: string;
  peer: string;
  client: string;
  isLearner?: boolean;
}

/** A MemberListResponse (an unstarted member has no name and no client URLs). */
export function memberListReply(m: Pick<FakeMemberDef, 'id'>, revision: number, members: MemberFact[]): Record<string, unknown> {
  return {
    header: header(m, revision),
    members: members.map((x) => ({
      ID: x.id,
      ...(x.name ? { name: x.name } : {}),
      peerURLs: [x.peer],
      ...(x.client ? { clientURLs: [x.client] } : {}),
      ...(x.isLearner ? { isLearner: true } : {}),
    })),
  };
}

/** gRPC codes and the HTTP status grpc-gateway maps each to. */
const HTTP_OF: Record<number, number> = { 3: 400, 5: 404, 9: 400, 11: 400, 14: 503 };
export const GRPC = { invalidArgument: 3, notFound: 5, failedPrecondition: 9, outOfRange: 11, unavailable: 14 } as const;

/**
 * A refusal in etcd's words as the member's gateway writes it: before 3.6 (grpc-gateway v1) the message
 * twice, as `error` and `message`, with the gRPC code; 3.6+ `code`, `message` and `details`.
 */
export function grpcError(m: Pick<FakeMemberDef, 'version'>, code: number, message: string): Reply {
  const minor = Number(m.version.split('.')[1]);
  return reply(HTTP_OF[code] ?? 500, minor >= 6 ? { code, message, details: [] } : { error: message, message, code });
}

/** The member's gateway prefix (for a test that asserts the raw path). */
export const gatewayPrefix = (m: Pick<FakeMemberDef, 'version'>) => prefixOf(m.version);
