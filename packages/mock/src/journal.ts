/**
 * The journal of a state file (`PATH.journal`): the changes made since the snapshot (`PATH`) was last
 * written, one line per store write. Its first line names the snapshot it continues (the SHA-256 of
 * its content), so a journal left beside a newer snapshot (a crash between writing the snapshot and
 * starting the next journal) is recognised and not applied twice. Each other line is a JSON array of
 * operations `[path, key, value]` (set) or `[path, key]` (delete), `path` the keys from the state's root
 * to the changed object; applied in order they turn the snapshot into the state the write left.
 */
import { parents } from './indexes.js';
import { setOwn, transact } from './tx.js';

export const JOURNAL_FORMAT = 'opsctl-mock-journal/1';

export type Op = [path: string[], key: string, value?: unknown];

export function journalHeader(base: string): string {
  return `${JSON.stringify({ format: JOURNAL_FORMAT, base })}\n`;
}

/** The key path from `root` to `target` (checked by walking it down), or undefined when it cannot be told. */
function pathOf(root: object, target: object): string[] | undefined {
  const keys: string[] = [];
  for (let o = target; o !== root;) {
    const at = parents.get(o);
    if (!at || keys.length > 64) return undefined;
    keys.push(at.key);
    o = at.parent;
  }
  keys.reverse();
  let cur: unknown = root;
  for (const k of keys) {
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, k)) return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur === target ? keys : undefined;
}

/**
 * The objects of the state the files hold at their place (the snapshot's, those a journal line set): a
 * line may change only these, so that replaying it finds every object it names. An object made outside a
 * write (a read that filled in a default) is not among them until a snapshot holds it.
 */
export type Persisted = WeakSet<object>;

/** Adds `value` and every object inside it to `persisted` (after a snapshot, or a journal line that set it). */
export function markPersisted(persisted: Persisted, value: unknown): void {
  const todo: unknown[] = [value];
  while (todo.length > 0) {
    const v = todo.pop();
    if (v === null || typeof v !== 'object' || persisted.has(v)) continue;
    persisted.add(v);
    for (const child of Object.values(v)) if (child !== null && typeof child === 'object') todo.push(child);
  }
}

/**
 * One write's changes as a journal line (with its newline): each changed key's value as the write left
 * it, parents before children. Undefined when the line could not be replayed on the files' state: a
 * changed object is no longer where it was reached (a write that changed a record and then moved it), or
 * (with `persisted`) the files do not hold it (made in memory only, by a read). The caller then writes a
 * whole snapshot instead, so a journal never holds a line it cannot replay.
 */
export function journalLine(root: object, touched: Map<object, Set<string | symbol>>, persisted?: Persisted): string | undefined {
  const ops: Op[] = [];
  for (const [target, keys] of touched) {
    if (persisted && !persisted.has(target)) return undefined;
    const path = pathOf(root, target);
    if (!path) return undefined;
    const t = target as Record<string, unknown>;
    for (const key of keys) {
      if (typeof key === 'symbol') continue;
      ops.push(Object.hasOwn(t, key) ? [path, key, t[key]] : [path, key]);
    }
  }
  if (ops.length === 0) return '';
  // a change to a parent first: the paths of its children then lead where they do after the write
  ops.sort((a, b) => a[0].length - b[0].length);
  // what the line sets is at its place on disk once the line is (a failed append reloads the files)
  if (persisted) for (const op of ops) if (op.length === 3) markPersisted(persisted, op[2]);
  return `${JSON.stringify(ops)}\n`;
}

/** Applies one parsed journal line to `root`; throws naming what is wrong with it. */
export function applyLine(root: Record<string, unknown>, line: unknown): void {
  if (!Array.isArray(line)) throw new Error('a line is not a JSON array of changes');
  for (const op of line as unknown[]) {
    if (!Array.isArray(op) || (op.length !== 2 && op.length !== 3) || !Array.isArray(op[0]) || typeof op[1] !== 'string')
      throw new Error('a change is not [path, key, value] or [path, key]');
    let cur: unknown = root;
    for (const k of op[0] as unknown[]) {
      if (typeof k !== 'string' || cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, k))
        throw new Error(`a change's path ${JSON.stringify(op[0])} is not in the state`);
      cur = (cur as Record<string, unknown>)[k];
    }
    if (cur === null || typeof cur !== 'object') throw new Error(`a change's path ${JSON.stringify(op[0])} is not an object`);
    const t = cur as Record<string, unknown>;
    if (op.length === 3) setOwn(t, op[1], op[2]);
    else delete t[op[1]];
  }
}

/**
 * The journal's text split into its header's base and its lines. A last line without its newline is an
 * interrupted write (never acknowledged): returned apart, for the caller to ignore (and cut off).
 */
export function splitJournal(text: string): { base?: string; lines: string[]; torn?: string; headerBytes: number } {
  const end = text.lastIndexOf('\n');
  const whole = end < 0 ? '' : text.slice(0, end);
  const torn = text.slice(end + 1) || undefined;
  const all = whole ? whole.split('\n') : [];
  const first = all.shift();
  let base: string | undefined;
  if (first !== undefined) {
    let header: unknown;
    try {
      header = JSON.parse(first);
    } catch {
      header = undefined;
    }
    const h = header as { format?: unknown; base?: unknown } | undefined;
    if (!h || h.format !== JOURNAL_FORMAT || typeof h.base !== 'string')
      throw new Error(`its first line is not a journal header ({"format":"${JOURNAL_FORMAT}",…})`);
    base = h.base;
  }
  return { base, lines: all, torn, headerBytes: first === undefined ? 0 : Buffer.byteLength(first) + 1 };
}

/** A journal line that cannot be applied: its line number in the file (the header is line 1), why, and its text. */
export interface RefusedLine {
  line: number;
  problem: string;
  text: string;
}

/**
 * Applies the journal's lines (after its header) to `root` in order, each whole or not at all (a line that
 * fails half-way is undone). A line that cannot be applied is listed and the others are still applied, so
 * the caller can say exactly what a refusal would cost, or keep every line that applies (`--salvage-journal`).
 */
export function replayLines(root: Record<string, unknown>, lines: readonly string[]): { applied: number; refused: RefusedLine[] } {
  let applied = 0;
  const refused: RefusedLine[] = [];
  for (const [i, text] of lines.entries()) {
    try {
      const parsed: unknown = JSON.parse(text);
      transact(root, (s) => applyLine(s, parsed));
      applied++;
    } catch (err) {
      refused.push({ line: i + 2, problem: err instanceof SyntaxError ? 'not JSON' : (err as Error).message, text });
    }
  }
  return { applied, refused };
}
