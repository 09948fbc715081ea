/**
 * The journal of a state file (`PATH.journal`): the changes made since the snapshot (`PATH`) was last
 * written, one line per store write. Its first line names the snapshot it continues (the SHA-256 of
 * its content), so a journal left beside a newer snapshot (a crash between writing the snapshot and
 * starting the next journal) is recognised and not applied twice. Each other line is a JSON array of
 * operations `[path, key, value]` (set) or `[path, key]` (delete), `path` the keys from the state's root
 * to the changed object; applied in order they turn the snapshot into the state the write left.
 */
import { parents } from './indexes.js';
import { setOwn } from './tx.js';

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
 * One write's changes as a journal line (with its newline): each changed key's value as the write left
 * it, parents before children. Undefined when a changed object is no longer where it was reached (a
 * write that changed a record and then moved it): the caller then writes a whole snapshot instead.
 */
export function journalLine(root: object, touched: Map<object, Set<string | symbol>>): string | undefined {
  const ops: Op[] = [];
  for (const [target, keys] of touched) {
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
