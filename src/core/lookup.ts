/**
 * Lookups by a string from outside (a token, a code, an id, a member name) in records kept by key. A plain
 * object answers `tokens['__proto__']` or `tokens['constructor']` with a built-in, and writing through one
 * pollutes `Object.prototype`; these helpers see own keys only, and `dict` makes a record prototype-free in
 * place (O(1); the JSON on disk is the same). The simulated kv member uses them; src/mock keeps its own copy
 * (mock/lookup.ts) until the mock package imports this one.
 */

export type Dict<T> = Record<string, T>;

/** The record stored under `key`, never an inherited member. */
export function own<T>(map: Readonly<Dict<T>> | null | undefined, key: string): T | undefined {
  return map != null && Object.hasOwn(map, key) ? map[key] : undefined;
}

/** True when `key` is one of the map's own keys (never a built-in such as `toString`). */
export function hasOwn(map: Readonly<Dict<unknown>> | null | undefined, key: string): boolean {
  return map != null && Object.hasOwn(map, key);
}

/**
 * The same object, with no prototype: `map[key]` then reads and writes own keys only, whatever the
 * key. State loaded from JSON comes with Object.prototype; the slice accessors pass each map through this.
 */
export function dict<T>(map: Dict<T>): Dict<T> {
  if (Object.getPrototypeOf(map) !== null) Object.setPrototypeOf(map, null);
  return map;
}

/** A new, empty prototype-free record. */
export function emptyDict<T>(): Dict<T> {
  return Object.create(null) as Dict<T>;
}
