/**
 * Leases over the JSON gateway, as etcdctl's lease verbs ask them: grant, revoke, time-to-live (with the
 * keys attached), the list (3.3+) and one keep-alive. The paths under /kv/lease/ are the ones every
 * version from 3.2 to 3.6 answers (3.4 added /lease/… aliases; 3.2 and 3.3 have only these).
 */
import type { KvClient } from '../cluster/client.js';
import { asList, asObject, parseJsonSafe, textOf } from '../cluster/parse.js';
import { unb64 } from './ids.js';
import { needs, serverVersion } from './versions.js';

export interface LeaseTtl {
  id: string;
  /** Seconds left; -1 once it expired (or was revoked). */
  ttl: number;
  /** Seconds it was granted with; 0 once it expired. */
  grantedTtl: number;
  keys?: string[];
  expired: boolean;
}

const num = (v: unknown) => Number(textOf(v) ?? 0);

export async function grant(c: KvClient, ttl: number): Promise<{ id: string; ttl: number }> {
  const r = asObject(parseJsonSafe(await c.gateway('/lease/grant', { TTL: String(ttl) })));
  if (textOf(r.error)) throw new Error(textOf(r.error));
  return { id: textOf(r.ID) ?? '0', ttl: num(r.TTL) };
}

export async function revoke(c: KvClient, id: string): Promise<void> {
  await c.gateway('/kv/lease/revoke', { ID: id });
}

export async function timeToLive(c: KvClient, id: string, { keys }: { keys: boolean }): Promise<LeaseTtl> {
  const r = asObject(parseJsonSafe(await c.gateway('/kv/lease/timetolive', { ID: id, keys })));
  const ttl = num(r.TTL);
  const grantedTtl = num(r.grantedTTL);
  return {
    id: textOf(r.ID) ?? id,
    ttl,
    grantedTtl,
    ...(keys ? { keys: asList(r.keys).map(unb64) } : {}),
    // etcd answers TTL -1 with no granted TTL for a lease it no longer has (etcdctl: "already expired")
    expired: ttl === -1 && grantedTtl === 0,
  };
}

export async function list(c: KvClient): Promise<string[]> {
  needs(await serverVersion(c), 'lease list');
  return asList(asObject(parseJsonSafe(await c.gateway('/kv/lease/leases', {}))).leases).map((l) => textOf(asObject(l).ID) ?? '0');
}

/** One keep-alive (the gateway's stream with one message each way): the TTL the lease has again; 0 when it is gone. */
export async function keepAliveOnce(c: KvClient, id: string): Promise<{ id: string; ttl: number }> {
  const r = asObject(asObject(parseJsonSafe(await c.gateway('/lease/keepalive', { ID: id }))).result);
  return { id: textOf(r.ID) ?? id, ttl: num(r.TTL) };
}
