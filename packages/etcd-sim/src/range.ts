/**
 * A simulated member's /kv/range over its keys: one key, a range [key, end) ("\0" as the end: every key
 * from key on), with etcd's limit, count, more, keys_only, count_only and sort (by key, version, create or
 * mod revision, value). No history is kept: a read at an older revision sees the keys as they are now.
 */
import type { Dict } from '@opsctl/shared/lookup.js';
import { textOf, type JsonObject } from '@opsctl/shared/json.js';
import type { Kv } from './messages.js';

const SORT_FIELDS = { VERSION: 'version', CREATE: 'create_revision', MOD: 'mod_revision' } as const;

export function rangeOf(kvs: Dict<Kv>, input: JsonObject): { kvs: JsonObject[]; count: string; more?: boolean } {
  const key = textOf(input.key) ?? '';
  const end = input.range_end ? Buffer.from(textOf(input.range_end) ?? '', 'base64') : undefined;
  const k0 = Buffer.from(key, 'base64');
  const hits = Object.entries(kvs)
    .filter(([k]) => {
      const kb = Buffer.from(k, 'base64');
      if (!end) return kb.equals(k0);
      return Buffer.compare(kb, k0) >= 0 && (end.length === 1 && end[0] === 0 ? true : Buffer.compare(kb, end) < 0);
    })
    .sort(([a], [b]) => Buffer.compare(Buffer.from(a, 'base64'), Buffer.from(b, 'base64')));
  const target = textOf(input.sort_target) ?? 'KEY';
  const order = textOf(input.sort_order) ?? (target !== 'KEY' ? 'ASCEND' : 'NONE');
  if (target !== 'KEY' || order === 'DESCEND') {
    const field = target in SORT_FIELDS ? SORT_FIELDS[target as keyof typeof SORT_FIELDS] : undefined;
    const by = ([k, v]: [string, Kv]): Buffer | number => (field ? v[field] : target === 'VALUE' ? Buffer.from(v.value, 'base64') : Buffer.from(k, 'base64'));
    hits.sort((a, b) => {
      const x = by(a);
      const y = by(b);
      const c = typeof x === 'number' && typeof y === 'number' ? x - y : Buffer.compare(x as Buffer, y as Buffer);
      return order === 'DESCEND' ? -c : c;
    });
  }
  const count = String(hits.length);
  if (input.count_only === true) return { kvs: [], count };
  const limit = Number(textOf(input.limit) ?? 0);
  const shown = limit > 0 ? hits.slice(0, limit) : hits;
  return {
    kvs: shown.map(([k, v]) => ({
      key: k,
      ...(input.keys_only === true ? {} : { value: v.value }),
      create_revision: String(v.create_revision),
      mod_revision: String(v.mod_revision),
      version: String(v.version),
    })),
    count,
    ...(shown.length < hits.length ? { more: true } : {}),
  };
}
