/** Keys as etcdctl's del, txn and watch change and follow them, over the JSON gateway. */
import type { KvClient } from '../cluster/client.js';
import { OpsError } from '../../core/errors.js';
import { JsonObjectStream } from '../cluster/json-stream.js';
import { authRefusal } from '../cluster/gateway-errors.js';
import { AUTH_ERRORS } from '../cluster/transport-rules.js';
import { asList, asObject, field, parseJsonSafe, textOf } from '../cluster/parse.js';
import { b64, leaseHex, prefixEnd64, unb64 } from './ids.js';

export interface KeyValue {
  key: string;
  value: string;
  createRevision: string;
  modRevision: string;
  version: string;
  lease?: string;
}

export function kvOf(v: unknown): KeyValue {
  const o = asObject(v);
  const lease = textOf(o.lease);
  return {
    key: unb64(o.key),
    value: unb64(o.value),
    createRevision: textOf(o.create_revision) ?? '0',
    modRevision: textOf(o.mod_revision) ?? '0',
    version: textOf(o.version) ?? '0',
    ...(lease && lease !== '0' ? { lease } : {}),
  };
}

/** A key as `kv get --json` writes it (etcd's snake_case names, revisions as numbers, the lease in hex or null). */
export function kvJson(kv: KeyValue) {
  return {
    key: kv.key,
    value: kv.value,
    create_revision: Number(kv.createRevision),
    mod_revision: Number(kv.modRevision),
    version: Number(kv.version),
    lease: kv.lease ? leaseHex(kv.lease) : null,
  };
}

/** A key, a range [key, end) or every key under a prefix, as the gateway takes it. */
export interface KeyRange {
  key: string;
  end?: string;
  prefix?: boolean;
}

export function rangeBody(r: KeyRange): { key: string; range_end?: string } {
  if (r.prefix) return { key: b64(r.key || '\0'), range_end: prefixEnd64(r.key) };
  return { key: b64(r.key), ...(r.end !== undefined ? { range_end: b64(r.end) } : {}) };
}

export interface PutRequest {
  key: string;
  /** Unset with ignoreValue: the key keeps its value. */
  value?: string;
  /** The lease (decimal id) the key lives as long as. */
  lease?: string;
  prevKv?: boolean;
  ignoreValue?: boolean;
  ignoreLease?: boolean;
}

/** A put as etcdctl's: with a lease, the value before it, the value or the lease kept as they are. */
export async function put(c: KvClient, r: PutRequest): Promise<{ revision: string; prevKv?: KeyValue }> {
  const body = {
    key: b64(r.key),
    ...(r.value !== undefined && !r.ignoreValue ? { value: b64(r.value) } : {}),
    ...(r.lease && r.lease !== '0' ? { lease: r.lease } : {}),
    ...(r.prevKv ? { prev_kv: true } : {}),
    ...(r.ignoreValue ? { ignore_value: true } : {}),
    ...(r.ignoreLease ? { ignore_lease: true } : {}),
  };
  const o = asObject(parseJsonSafe(await c.gateway('/kv/put', body)));
  return { revision: textOf(field(o.header, 'revision')) ?? '0', ...(o.prev_kv ? { prevKv: kvOf(o.prev_kv) } : {}) };
}

export async function del(c: KvClient, r: KeyRange, { prevKv }: { prevKv: boolean }): Promise<{ deleted: number; prevKvs: KeyValue[] }> {
  const o = asObject(parseJsonSafe(await c.gateway('/kv/deleterange', { ...rangeBody(r), ...(prevKv ? { prev_kv: true } : {}) })));
  return { deleted: Number(textOf(o.deleted) ?? 0), prevKvs: asList(o.prev_kvs).map(kvOf) };
}

export interface WatchEvent {
  type: 'PUT' | 'DELETE';
  kv: KeyValue;
  prevKv?: KeyValue;
}

/**
 * Follows a key or range from `startRevision` (or now): each event as it arrives, until `onEvent`
 * returns false, the member closes the stream or the deadline passes. A compacted start revision is
 * said with the revision to start from.
 */
export async function watch(
  c: KvClient,
  r: KeyRange,
  opts: { startRevision?: string; prevKv?: boolean; timeoutMs: number },
  onEvent: (e: WatchEvent, revision: string) => boolean,
): Promise<void> {
  const prefix = await c.gatewayPrefix();
  const create = { ...rangeBody(r), ...(opts.startRevision ? { start_revision: opts.startRevision } : {}), ...(opts.prevKv ? { prev_kv: true } : {}) };
  await c.gatewayStream(
    '/watch',
    async (body) => {
      const stream = new JsonObjectStream();
      for await (const chunk of body) {
        for (const m of stream.pushRaw(chunk)) {
          const msg = asObject(parseJsonSafe(m.toString('utf8')));
          if (msg.error)
            throw new OpsError(`${c.endpoint}: the watch failed: ${textOf(asObject(msg.error).message) ?? 'no reason given'}`, 1, { code: 'kv_watch' });
          const res = asObject(msg.result);
          const compacted = textOf(field(res, 'compact_revision'));
          if (compacted && compacted !== '0')
            throw new OpsError(`required revision has been compacted: the history before revision ${compacted} is gone`, 1, {
              code: 'kv_compacted',
              hint: `watch from ${compacted} or later (--rev ${compacted})`,
            });
          if (res.canceled === true) {
            // etcd cancels a watch the user may not read (or a watch sent without a user on a cluster with auth): its reason says so
            const reason = textOf(res.cancel_reason) ?? 'no reason given';
            if (AUTH_ERRORS.test(reason)) throw authRefusal(c.endpoint, reason, c.session.conn.auth?.user, prefix);
            throw new OpsError(`${c.endpoint}: the member canceled the watch: ${reason}`, 1, { code: 'kv_watch' });
          }
          const rev = textOf(field(res.header, 'revision')) ?? '0';
          for (const ev of asList(res.events)) {
            const e = asObject(ev);
            const event: WatchEvent = { type: e.type === 'DELETE' ? 'DELETE' : 'PUT', kv: kvOf(e.kv), ...(e.prev_kv ? { prevKv: kvOf(e.prev_kv) } : {}) };
            if (!onEvent(event, rev)) return;
          }
        }
      }
    },
    opts.timeoutMs,
    { create_request: create },
  );
}
