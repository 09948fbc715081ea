import type { KvClient } from './client.js';

/** Live keys in the whole keyspace (a count-only range), optionally at a past revision. */
export async function countKeys(c: KvClient, revision?: string): Promise<number> {
  const all = Buffer.from([0]).toString('base64');
  const text = await c.gateway('/kv/range', { key: all, range_end: all, count_only: true, ...(revision ? { revision } : {}) });
  const body = JSON.parse(text) as { count?: string | number; kvs?: unknown[] };
  return Number(body.count ?? body.kvs?.length ?? 0);
}
