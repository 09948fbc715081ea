/**
 * A store write as a transaction on the live state, without copying it. The write's function sees the
 * state through proxies that note, before each change, the value it replaces (the undo log); a function
 * that throws has its changes undone in reverse order, one that returns keeps them. The cost of a write is
 * the number of values it reads and changes, not the size of the state (a deep copy per write was O(state)).
 *
 * It also tells the file store what changed, as `[path, key, value]` operations (journal.ts), and the
 * indexes (indexes.ts) which arrays and records changed, so they stay current without a rebuild.
 */
import { indexChanged, parents, targets } from './indexes.js';

type Obj = Record<string | symbol, unknown>;

/** One change: the object, its key, and what the key held before (`had` false: it was absent). */
interface Undo {
  target: Obj;
  key: string | symbol;
  had: boolean;
  old: unknown;
}

/** How many objects the last transaction saw through a proxy (tests: a write reads O(1) of a collection). */
export const txStats = { proxied: 0, changed: 0 };

export class Transaction {
  private readonly undo: Undo[] = [];
  /** (object, key) pairs already in the undo log: only a key's first old value is kept. */
  private readonly touched = new Map<object, Set<string | symbol>>();
  private readonly proxies = new WeakMap<object, object>();
  private open = true;

  constructor(private readonly root: object) {
    txStats.proxied = 0;
    txStats.changed = 0;
  }

  /** The state as the write's function sees it. */
  get state(): Record<string, unknown> {
    return this.wrap(this.root) as Record<string, unknown>;
  }

  private wrap(target: object): object {
    let p = this.proxies.get(target);
    if (p) return p;
    txStats.proxied++;
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const tx = this;
    p = new Proxy(target as Obj, {
      get(t, key) {
        const v = t[key];
        if (!tx.open || v === null || typeof v !== 'object' || typeof key === 'symbol' || Object.isFrozen(v)) return v;
        parents.set(v, { parent: t, key });
        return tx.wrap(v);
      },
      set(t, key, value) {
        if (!tx.open) return Reflect.set(t, key, value);
        let append = false;
        if (Array.isArray(t)) {
          if (key === 'length') {
            if (value === t.length) return true;
            // `arr.length = n` drops the elements past n without a trap of their own
            for (let i = (value as number) ?? 0; i < t.length; i++) tx.note(t, String(i));
          } else if (typeof key === 'string' && /^\d+$/.test(key) && Number(key) >= t.length) {
            // an element past the end makes the array longer, again without a trap
            tx.note(t, 'length');
            append = Number(key) === t.length;
          }
        }
        tx.note(t, key);
        setOwn(t, key, unwrapDeep(value));
        indexChanged(t, key, append ? 'append' : 'change');
        return true;
      },
      deleteProperty(t, key) {
        if (tx.open && Object.hasOwn(t, key)) {
          tx.note(t, key);
          indexChanged(t, key, 'drop');
        }
        return delete t[key];
      },
      defineProperty(t, key, desc) {
        if (tx.open) {
          tx.note(t, key);
          if ('value' in desc) desc = { ...desc, value: unwrapDeep(desc.value) };
        }
        const ok = Reflect.defineProperty(t, key, desc);
        if (tx.open) indexChanged(t, key, 'drop');
        return ok;
      },
    });
    this.proxies.set(target, p);
    targets.set(p, target);
    return p;
  }

  /** Notes a key's value before its first change. */
  note(t: Obj, key: string | symbol): void {
    let keys = this.touched.get(t);
    if (!keys) this.touched.set(t, (keys = new Set()));
    if (keys.has(key)) return;
    keys.add(key);
    txStats.changed++;
    this.undo.push({ target: t, key, had: Object.hasOwn(t, key), old: t[key] });
  }

  /**
   * Keeps the changes; the (object, key) pairs changed, in the order first changed. A key that ends as it
   * began (a value put back, a list replaced by an equal one, an element added and dropped again) is no
   * change: a write that changed nothing (a request refused after it looked) is not journalled.
   */
  commit(): Map<object, Set<string | symbol>> {
    this.open = false;
    for (const u of this.undo) {
      const has = Object.hasOwn(u.target, u.key);
      if (has !== u.had || (has && !sameValue(u.target[u.key], u.old))) continue;
      const keys = this.touched.get(u.target);
      keys?.delete(u.key);
      if (keys?.size === 0) this.touched.delete(u.target);
    }
    return this.touched;
  }

  /** Puts every changed key back as it was, newest change first. */
  rollback(): void {
    this.open = false;
    for (let i = this.undo.length - 1; i >= 0; i--) {
      const u = this.undo[i]!;
      if (u.had) setOwn(u.target, u.key, u.old);
      else delete u.target[u.key];
      indexChanged(u.target, u.key, 'drop');
    }
  }
}

/**
 * A value about to be stored, with every transaction proxy inside it replaced by its object. Only what the
 * write made itself is walked (a proxy is not entered: the state behind it holds none).
 */
function unwrapDeep(value: unknown, seen?: Set<object>): unknown {
  if (value === null || typeof value !== 'object') return value;
  const t = targets.get(value);
  if (t) return t;
  if (Object.isFrozen(value)) return value;
  seen ??= new Set();
  if (seen.has(value)) return value;
  seen.add(value);
  const o = value as Obj;
  for (const key of Object.keys(o)) {
    const v = o[key];
    if (v !== null && typeof v === 'object') {
      const u = unwrapDeep(v, seen);
      if (u !== v) setOwn(o, key, u);
    }
  }
  return value;
}

/** Whether two values of the state are equal as JSON holds them (the same object, or equal keys and values). */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) if (!Object.hasOwn(b, k) || !sameValue((a as Obj)[k], (b as Obj)[k])) return false;
  return true;
}

/** `t[key] = v` as an own property, `__proto__` included (an assignment would change the prototype). */
export function setOwn(t: Obj, key: string | symbol, v: unknown): void {
  if (key === '__proto__') Object.defineProperty(t, key, { value: v, writable: true, enumerable: true, configurable: true });
  else t[key] = v;
}

/** Runs `fn` as one transaction on `state`: all of its changes, or (it threw) none. */
export function transact<T>(state: object, fn: (state: Record<string, unknown>) => T): { result: T; touched: Map<object, Set<string | symbol>> } {
  const tx = new Transaction(state);
  try {
    const result = fn(tx.state);
    return { result, touched: tx.commit() };
  } catch (err) {
    tx.rollback();
    throw err;
  }
}

/**
 * A deep copy of state data (structuredClone cannot copy a transaction's proxies): plain objects, arrays
 * and primitives, as JSON holds them.
 */
export function clone<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v: unknown) => clone(v)) as T;
  const out: Obj = {};
  for (const key of Object.keys(value)) setOwn(out, key, clone((value as Obj)[key]));
  return out as T;
}
