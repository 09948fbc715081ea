/**
 * What the simulated members keep and tell each other: the stored state (member/kv.json, /peer/state),
 * a ping's answer, a leader's append, a put sent on to the leader.
 * Whatever comes from the peer port or a file is read as unknown and narrowed here.
 */
import { dict, type Dict } from '@opsctl/shared/lookup.js';
import { asObject } from '@opsctl/shared/json.js';

/** One key, as etcd's mvccpb.KeyValue (the key itself, base64, is the record's name). */
export interface Kv {
  value: string;
  create_revision: number;
  mod_revision: number;
  version: number;
}

/** member/kv.json, and a leader's answer to /peer/state. */
export interface Persisted {
  revision: number;
  /** By base64 key: prototype-free, a client's key is never a built-in. */
  kvs: Dict<Kv>;
  clusterVersion: string;
  /** etcd 3.6's downgrade: the target minor while a downgrade is enabled. */
  downgrade?: string;
  /** Client URL by member name. */
  clients: Dict<string>;
}

/** A member's answer to /peer/ping. */
export interface PingInfo {
  name: string;
  id: string;
  version: string;
  revision: number;
  leader: string;
  term: number;
  clusterVersion: string;
  clientUrl: string;
  /** The downgrade target while one is enabled ('' or absent: none). */
  downgrade?: string;
}

/** A leader's /peer/append: one write (a key put, or the keys a delete removed), which followers store when it is the next revision. */
export type Append = { leader: string; term: number; revision: number } & ({ key: string; kv: Kv } | { deleted: string[] });

/** /peer/put: a follower's client write, made by the leader. */
export interface PeerPut {
  key: string;
  value: string;
}

/** /peer/delete: a follower's client delete of a key or range ([key, range_end), base64 as the gateway's), made by the leader. */
export interface PeerDelete {
  key: string;
  range_end?: string;
}

const isText = (v: unknown): v is string => typeof v === 'string';
const isNumber = (v: unknown): v is number => typeof v === 'number';

/** A JSON object whose every value passes `each`. */
function isRecordOf<T>(v: unknown, each: (x: unknown) => x is T): v is Record<string, T> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && Object.values(v).every(each);
}

export function isKv(v: unknown): v is Kv {
  const o = asObject(v);
  return isText(o.value) && isNumber(o.create_revision) && isNumber(o.mod_revision) && isNumber(o.version);
}

export function isPing(v: unknown): v is PingInfo {
  const o = asObject(v);
  return (
    isText(o.name) &&
    isText(o.id) &&
    isText(o.version) &&
    isNumber(o.revision) &&
    isText(o.leader) &&
    isNumber(o.term) &&
    isText(o.clusterVersion) &&
    isText(o.clientUrl)
  );
}

export function isAppend(v: unknown): v is Append {
  const o = asObject(v);
  const write = (isText(o.key) && isKv(o.kv)) || (Array.isArray(o.deleted) && o.deleted.every(isText));
  return isText(o.leader) && isNumber(o.term) && isNumber(o.revision) && write;
}

export function isPeerDelete(v: unknown): v is PeerDelete {
  const o = asObject(v);
  return isText(o.key) && (o.range_end === undefined || isText(o.range_end));
}

export function isPeerPut(v: unknown): v is PeerPut {
  const o = asObject(v);
  return isText(o.key) && isText(o.value);
}

/** The stored state, its records made prototype-free; throws when `v` is not one. */
export function readState(v: unknown): Persisted {
  const o = asObject(v);
  const { revision, kvs, clusterVersion, clients } = o;
  if (!isNumber(revision) || !isText(clusterVersion) || !isRecordOf(kvs, isKv) || !isRecordOf(clients, isText)) {
    throw new Error('not a member state (revision, kvs, clusterVersion, clients)');
  }
  // Other fields, if any, are kept as they were.
  return { ...o, revision, kvs: dict(kvs), clusterVersion, clients: dict(clients) };
}
