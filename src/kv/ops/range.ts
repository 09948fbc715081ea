/**
 * `get` as etcdctl asks it: one key, a range [key, end), every key under a prefix or from a key on, at a
 * revision, limited, sorted, keys only or the count only; over the JSON gateway's /kv/range (every version
 * 3.2 … 3.7 answers these fields). And the answer as etcdctl prints it: `-w simple` lines, `-w fields`, and
 * `-w json` (etcdctl's own JSON: keys and values base64, ids and revisions bare numbers), for the scripts
 * written against them (checked side by side with each version's etcdctl in test/e2e/kv-etcdctl-get.test.ts).
 */
import type { KvClient } from '../cluster/client.js';
import { asList, asObject, field, parseJsonSafe, textOf } from '../cluster/parse.js';
import { b64, leaseHex, prefixEnd64 } from './ids.js';

export const SORT_TARGETS = ['KEY', 'VERSION', 'CREATE', 'MODIFY', 'VALUE'] as const;
export const SORT_ORDERS = ['ASCEND', 'DESCEND'] as const;

export interface RangeRequest {
  key: string;
  /** The range end (exclusive); with neither it nor prefix/fromKey, the key alone. */
  end?: string;
  prefix?: boolean;
  fromKey?: boolean;
  limit?: number;
  /** The store as it was at this revision (0 or unset: now). */
  revision?: string;
  sortTarget?: (typeof SORT_TARGETS)[number];
  sortOrder?: (typeof SORT_ORDERS)[number];
  serializable?: boolean;
  keysOnly?: boolean;
  countOnly?: boolean;
  minModRevision?: string;
  maxModRevision?: string;
  minCreateRevision?: string;
  maxCreateRevision?: string;
}

/** One key as the gateway gives it: its bytes base64 (as etcdctl's JSON prints them) and read as text. */
export interface RangeKv {
  key64: string;
  value64: string;
  key: string;
  value: string;
  createRevision: string;
  modRevision: string;
  version: string;
  /** The lease id in decimal, '0' when none. */
  lease: string;
}

export interface RangeResult {
  header: { clusterId: string; memberId: string; revision: string; raftTerm: string };
  kvs: RangeKv[];
  more: boolean;
  count: string;
}

/** The request body etcd's gateway takes (uint64/int64 as decimal strings, enums by name). */
export function rangeRequestBody(r: RangeRequest): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (r.prefix) {
    body.key = b64(r.key || '\0');
    body.range_end = prefixEnd64(r.key);
  } else if (r.fromKey) {
    body.key = b64(r.key || '\0');
    body.range_end = b64('\0');
  } else {
    body.key = b64(r.key);
    if (r.end !== undefined) body.range_end = b64(r.end);
  }
  if (r.limit) body.limit = String(r.limit);
  if (r.revision && r.revision !== '0') body.revision = r.revision;
  // etcdctl's clientv3.WithSort: a sort by key ascending is the store's own order (sent as none)
  if (r.sortTarget !== undefined || r.sortOrder !== undefined) {
    const target = r.sortTarget ?? 'KEY';
    const order = target === 'KEY' && r.sortOrder === 'ASCEND' ? undefined : r.sortOrder;
    if (order) body.sort_order = order;
    // etcdctl's MODIFY is the protocol's MOD
    if (target !== 'KEY') body.sort_target = target === 'MODIFY' ? 'MOD' : target;
  }
  if (r.serializable) body.serializable = true;
  if (r.keysOnly) body.keys_only = true;
  if (r.countOnly) body.count_only = true;
  if (r.minModRevision) body.min_mod_revision = r.minModRevision;
  if (r.maxModRevision) body.max_mod_revision = r.maxModRevision;
  if (r.minCreateRevision) body.min_create_revision = r.minCreateRevision;
  if (r.maxCreateRevision) body.max_create_revision = r.maxCreateRevision;
  return body;
}

export function parseRange(text: string): RangeResult {
  const o = asObject(parseJsonSafe(text));
  const h = asObject(o.header);
  const num = (v: unknown) => textOf(v) ?? '0';
  return {
    header: {
      clusterId: num(field(h, 'cluster_id', 'clusterId')),
      memberId: num(field(h, 'member_id', 'memberId')),
      revision: num(h.revision),
      raftTerm: num(field(h, 'raft_term', 'raftTerm')),
    },
    kvs: asList(o.kvs).map((v) => {
      const kv = asObject(v);
      const key64 = textOf(kv.key) ?? '';
      const value64 = textOf(kv.value) ?? '';
      return {
        key64,
        value64,
        key: Buffer.from(key64, 'base64').toString('utf8'),
        value: Buffer.from(value64, 'base64').toString('utf8'),
        createRevision: num(field(kv, 'create_revision', 'createRevision')),
        modRevision: num(field(kv, 'mod_revision', 'modRevision')),
        version: num(kv.version),
        lease: num(kv.lease),
      };
    }),
    more: o.more === true,
    count: num(o.count),
  };
}

export async function range(c: KvClient, r: RangeRequest): Promise<RangeResult> {
  return parseRange(await c.gateway('/kv/range', rangeRequestBody(r)));
}

/** etcdctl's `-w simple` lines of a get: the key and the value per key (only the value with --print-value-only). */
export function getSimpleLines(r: RangeResult, { valueOnly }: { valueOnly: boolean }): string[] {
  return r.kvs.flatMap((kv) => (valueOnly ? [kv.value] : [kv.key, kv.value]));
}

/** Go's %q of a string, as etcdctl's `-w fields` quotes keys and values. */
function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else if (ch === '\ufffd') out += '\\ufffd';
    else out += ch;
  }
  return `${out}"`;
}

/** etcdctl's `-w fields` of a get: the header, each key's fields, More and Count. */
export function getFieldsLines(r: RangeResult): string[] {
  const out = [
    `"ClusterID" : ${r.header.clusterId}`,
    `"MemberID" : ${r.header.memberId}`,
    `"Revision" : ${r.header.revision}`,
    `"RaftTerm" : ${r.header.raftTerm}`,
  ];
  for (const kv of r.kvs) {
    out.push(
      `"Key" : ${goQuote(kv.key)}`,
      `"CreateRevision" : ${kv.createRevision}`,
      `"ModRevision" : ${kv.modRevision}`,
      `"Version" : ${kv.version}`,
      `"Value" : ${goQuote(kv.value)}`,
      `"Lease" : ${kv.lease}`,
    );
  }
  out.push(`"More" : ${r.more}`, `"Count" : ${r.count}`);
  return out;
}

/**
 * etcdctl's `-w json` of a get, byte for byte: Go's encoding of the RangeResponse (fields in the
 * protobuf's order, zero values left out, uint64 ids and revisions as bare numbers, bytes base64).
 */
export function getEtcdctlJson(r: RangeResult): string {
  const nz = (n: string) => n !== '0' && n !== '';
  const num = (name: string, n: string) => (nz(n) ? [`"${name}":${n}`] : []);
  const str = (name: string, s: string) => (s ? [`"${name}":${JSON.stringify(s)}`] : []);
  const h = r.header;
  const header = `{${[...num('cluster_id', h.clusterId), ...num('member_id', h.memberId), ...num('revision', h.revision), ...num('raft_term', h.raftTerm)].join(',')}}`;
  const kvs = r.kvs.map(
    (kv) =>
      `{${[
        ...str('key', kv.key64),
        ...num('create_revision', kv.createRevision),
        ...num('mod_revision', kv.modRevision),
        ...num('version', kv.version),
        ...str('value', kv.value64),
        ...num('lease', kv.lease),
      ].join(',')}}`,
  );
  return `{${[`"header":${header}`, ...(kvs.length ? [`"kvs":[${kvs.join(',')}]`] : []), ...(r.more ? ['"more":true'] : []), ...num('count', r.count)].join(',')}}`;
}

/** opsctl's `--json` of a get: etcdctl's fields, keys and values as text, ids in hex as etcdctl prints them, every field present. */
export function getJson(r: RangeResult, o: { keysOnly?: boolean; countOnly?: boolean } = {}) {
  const hex = (id: string) => BigInt(id).toString(16);
  return {
    header: {
      cluster_id: hex(r.header.clusterId),
      member_id: hex(r.header.memberId),
      revision: Number(r.header.revision),
      raft_term: Number(r.header.raftTerm),
    },
    kvs: r.kvs.map((kv) => ({
      key: kv.key,
      ...(o.keysOnly ? {} : { value: kv.value }),
      create_revision: Number(kv.createRevision),
      mod_revision: Number(kv.modRevision),
      version: Number(kv.version),
      lease: kv.lease === '0' ? null : leaseHex(kv.lease),
    })),
    more: r.more,
    count: Number(r.count),
  };
}
