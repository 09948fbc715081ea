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

/**
 * One index of an array: the key of the record at each position, and what the kind keeps of them. A kind
 * says how an appended record or a changed key is taken in; false drops the index (rebuilt on next use).
 */
interface Index {
  keyOf: (item: never) => unknown;
  /** key of the record at each position. */
  keys: unknown[];
  append(pos: number, key: unknown): boolean;
  change(pos: number, was: unknown, now: unknown): boolean;
}

/** key → position of the first record with it (`list.find`). */
class UniqueIndex implements Index {
  readonly map = new Map<unknown, number>();
  /** Two records share a key: moves cannot be kept exact, so any change drops the index. */
  dups = false;
  constructor(
    readonly keyOf: (item: never) => unknown,
    readonly keys: unknown[],
  ) {
    keys.forEach((k, i) => this.append(i, k));
  }
  append(pos: number, k: unknown): boolean {
    if (this.map.has(k)) this.dups = true;
    else this.map.set(k, pos);
    return true;
  }
  change(pos: number, was: unknown, now: unknown): boolean {
    if (this.dups || this.map.get(was) !== pos || this.map.has(now)) return false;
    this.map.delete(was);
    this.map.set(now, pos);
    return true;
  }
}

/** key → the positions of every record with it, in array order (`list.filter`). */
class GroupIndex implements Index {
  readonly map = new Map<unknown, number[]>();
  constructor(
    readonly keyOf: (item: never) => unknown,
    readonly keys: unknown[],
  ) {
    keys.forEach((k, i) => this.append(i, k));
  }
  append(pos: number, k: unknown): boolean {
    const g = this.map.get(k);
    if (g) g.push(pos);
    else this.map.set(k, [pos]);
    return true;
  }
  change(pos: number, was: unknown, now: unknown): boolean {
    const from = this.map.get(was);
    const at = from ? from.indexOf(pos) : -1;
    if (!from || at < 0) return false;
    from.splice(at, 1);
    if (from.length === 0) this.map.delete(was);
    const to = this.map.get(now) ?? [];
    if (to.length === 0) this.map.set(now, to);
    // positions stay sorted: the group reads in array order
    let i = to.length;
    while (i > 0 && to[i - 1]! > pos) i--;
    to.splice(i, 0, pos);
    return true;
  }
}

/** The least and the greatest numeric key (`Math.min(...list.map(…))`), with a position holding each. */
class ExtremesIndex implements Index {
  min?: { value: number; pos: number };
  max?: { value: number; pos: number };
  constructor(
    readonly keyOf: (item: never) => unknown,
    readonly keys: unknown[],
  ) {
    keys.forEach((k, i) => this.append(i, k));
  }
  append(pos: number, k: unknown): boolean {
    if (typeof k !== 'number') return true;
    if (!this.min || k < this.min.value) this.min = { value: k, pos };
    if (!this.max || k > this.max.value) this.max = { value: k, pos };
    return true;
  }
  change(pos: number, _was: unknown, now: unknown): boolean {
    // the position that held an extreme moved inward: only a scan knows the new one
    if (this.min?.pos === pos && !(typeof now === 'number' && now <= this.min.value)) return false;
    if (this.max?.pos === pos && !(typeof now === 'number' && now >= this.max.value)) return false;
    return this.append(pos, now);
  }
}

type Kind = new (keyOf: (item: never) => unknown, keys: unknown[]) => Index;

const byArray = new WeakMap<object, Map<string, Index>>();

/** Index builds so far (tests: a write does not rebuild an index of its collection). */
export const indexStats = { builds: 0 };

function indexFor<I extends Index>(list: readonly object[], name: string, kind: Kind, keyOf: (item: never) => unknown, fresh = false): I {
  let all = byArray.get(list);
  if (!all) byArray.set(list, (all = new Map<string, Index>()));
  let idx = fresh ? undefined : all.get(name);
  if (!idx || !(idx instanceof kind)) {
    indexStats.builds++;
    all.set(
      name,
      (idx = new kind(
        keyOf,
        list.map((item) => keyOf(item as never)),
      )),
    );
  }
  return idx as I;
}

/**
 * The first record of `list` whose `keyOf` is `key` (as `list.find` would answer), in O(1). Inside a store
 * write it returns the record as the write sees it (its changes are kept and undone with the write's).
 */
export function lookup<T extends object>(list: readonly T[], name: string, keyOf: (item: T) => unknown, key: unknown): T | undefined {
  const r = raw(list);
  for (const fresh of [false, true]) {
    const idx = indexFor<UniqueIndex>(r, name, UniqueIndex, keyOf, fresh);
    const pos = idx.map.get(key);
    if (pos === undefined) return undefined;
    const item = r[pos];
    if (item !== undefined && keyOf(item) === key) return list[pos];
  }
  return undefined;
}

/** True when two records of `list` share a key of the index `name` (a uniqueness check then scans). */
export function hasDuplicates<T extends object>(list: readonly T[], name: string, keyOf: (item: T) => unknown): boolean {
  return indexFor<UniqueIndex>(raw(list), name, UniqueIndex, keyOf).dups;
}

/** The record with this `id` (the first, as `list.find` would), in O(1). */
export function byId<T extends { id: unknown }>(list: readonly T[], id: unknown): T | undefined {
  return lookup(list, 'id', idOf, id);
}

const idOf = (item: { id: unknown }) => item.id;

/** The positions in `list` of the records whose `keyOf` is `key`, in array order; O(records found). */
export function groupPositions<T extends object>(list: readonly T[], name: string, keyOf: (item: T) => unknown, key: unknown): readonly number[] {
  const r = raw(list);
  for (const fresh of [false, true]) {
    const found = indexFor<GroupIndex>(r, name, GroupIndex, keyOf, fresh).map.get(key) ?? [];
    // every hit checked against its record: a stale index costs a rebuild, never a wrong answer
    if (found.every((pos) => r[pos] !== undefined && keyOf(r[pos]) === key)) return found;
  }
  return [];
}

/** The records of `list` whose `keyOf` is `key`, in array order (as `list.filter` would answer), in O(records found). */
export function group<T extends object>(list: readonly T[], name: string, keyOf: (item: T) => unknown, key: unknown): T[] {
  return groupPositions(list, name, keyOf, key).map((pos) => list[pos]!);
}

/** The greatest (or least) numeric `valueOf` in `list`, or undefined for an empty list; O(1) while records are only added. */
export function extreme<T extends object>(list: readonly T[], name: string, valueOf: (item: T) => number, which: 'min' | 'max'): number | undefined {
  const r = raw(list);
  for (const fresh of [false, true]) {
    const at = indexFor<ExtremesIndex>(r, name, ExtremesIndex, valueOf, fresh)[which];
    if (!at) return undefined;
    const item = r[at.pos];
    if (item !== undefined && valueOf(item) === at.value) return at.value;
  }
  return undefined;
}

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
        if (!idx.append(pos, k)) own.delete(name);
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
    if (!idx.change(pos, was, now)) {
      indexes.delete(name);
      continue;
    }
    idx.keys[pos] = now;
  }
}
