/**
 * Indexes over the mock's collections (arrays of records): a record found by its id, or by another key,
 * in O(1) instead of a scan of the collection. An index is built on first use (one scan) and then kept
 * current by the store's transactions (tx.ts): a record appended is added, a record whose keyed field
 * changes is moved; any other change to the array (a removal, a reorder) drops its indexes, rebuilt on
 * their next use. Keys are computed from a record's own top-level fields (an index of `name` sees
 * `record.name = …`, not a change deeper inside it). Every hit is checked against the record it points
 * at, so a stale index can cost a rebuild, never a wrong answer.
 */

/** The proxy each state object is seen through in a transaction (tx.ts) → that object (a proxy never enters the state). */
export const targets = new WeakMap<object, object>();
/** Where a state object was last reached from in a transaction: its parent and its key there. */
export const parents = new WeakMap<object, { parent: object; key: string }>();

/** The object behind a transaction's proxy (or the value itself). */
export function raw<T>(value: T): T {
  return (value !== null && typeof value === 'object' ? (targets.get(value) ?? value) : value) as T;
}

interface Index {
  keyOf: (item: never) => unknown;
  /** key → position of the first record with it. */
  map: Map<unknown, number>;
  /** key of the record at each position. */
  keys: unknown[];
  /** Two records share a key: moves cannot be kept exact, so any change drops the index. */
  dups: boolean;
}

const byArray = new WeakMap<object, Map<string, Index>>();

/** Index builds so far (tests: a write does not rebuild an index of its collection). */
export const indexStats = { builds: 0 };

function build(list: readonly object[], keyOf: (item: never) => unknown): Index {
  indexStats.builds++;
  const idx: Index = { keyOf, map: new Map(), keys: new Array<unknown>(list.length), dups: false };
  for (let i = 0; i < list.length; i++) {
    const k = keyOf(list[i] as never);
    idx.keys[i] = k;
    if (idx.map.has(k)) idx.dups = true;
    else idx.map.set(k, i);
  }
  return idx;
}

function indexFor(list: readonly object[], name: string, keyOf: (item: never) => unknown, fresh = false): Index {
  let all = byArray.get(list);
  if (!all) byArray.set(list, (all = new Map<string, Index>()));
  let idx = fresh ? undefined : all.get(name);
  if (!idx) all.set(name, (idx = build(list, keyOf)));
  return idx;
}

/**
 * The first record of `list` whose `keyOf` is `key` (as `list.find` would answer), in O(1). Inside a store
 * write it returns the record as the write sees it (its changes are kept and undone with the write's).
 */
export function lookup<T extends object>(list: readonly T[], name: string, keyOf: (item: T) => unknown, key: unknown): T | undefined {
  const r = raw(list);
  for (const fresh of [false, true]) {
    const idx = indexFor(r, name, keyOf, fresh);
    const pos = idx.map.get(key);
    if (pos === undefined) return undefined;
    const item = r[pos];
    if (item !== undefined && keyOf(item) === key) return list[pos];
  }
  return undefined;
}

/** True when two records of `list` share a key of the index `name` (a uniqueness check then scans). */
export function hasDuplicates<T extends object>(list: readonly T[], name: string, keyOf: (item: T) => unknown): boolean {
  return indexFor(raw(list), name, keyOf).dups;
}

/** The record with this `id` (the first, as `list.find` would), in O(1). */
export function byId<T extends { id: unknown }>(list: readonly T[], id: unknown): T | undefined {
  return lookup(list, 'id', idOf, id);
}

const idOf = (item: { id: unknown }) => item.id;

/**
 * Told by a transaction of each change: `t[key]` was set (`append`: one past the end of an array),
 * deleted or put back (`drop`). Keeps or drops the indexes of `t` (an array) or of the array `t` is in.
 */
export function indexChanged(t: object, key: string | symbol, kind: 'append' | 'change' | 'drop'): void {
  const own = byArray.get(t);
  if (own) {
    if (kind === 'append' && typeof key === 'string') {
      const pos = Number(key);
      const item = (t as unknown[])[pos];
      for (const [name, idx] of own) {
        if (idx.keys.length !== pos || item === null || typeof item !== 'object') {
          own.delete(name);
          continue;
        }
        const k = idx.keyOf(item as never);
        idx.keys.push(k);
        if (idx.map.has(k)) idx.dups = true;
        else idx.map.set(k, pos);
      }
    } else byArray.delete(t);
    return;
  }
  // a field of a record: the indexes of the array it was reached in
  const at = parents.get(t);
  if (!at) return;
  const indexes = byArray.get(at.parent);
  if (!indexes) return;
  const pos = Number(at.key);
  if (kind === 'drop' || (at.parent as unknown[])[pos] !== t) {
    byArray.delete(at.parent);
    return;
  }
  for (const [name, idx] of indexes) {
    const was = idx.keys[pos];
    const now = idx.keyOf(t as never);
    if (was === now) continue;
    if (idx.dups || idx.map.get(was) !== pos || idx.map.has(now)) {
      indexes.delete(name);
      continue;
    }
    idx.map.delete(was);
    idx.map.set(now, pos);
    idx.keys[pos] = now;
  }
}
