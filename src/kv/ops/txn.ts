/**
 * `etcdctl txn`'s language, read the same way: three blocks separated by a blank line (compares,
 * success requests, failure requests). A compare is `TARGET("KEY") OP "VALUE"` (TARGET: ver|version,
 * c|create, m|mod, val|value, lease; OP: = != < >); a request is `get KEY [END]`, `put KEY VALUE` or
 * `del KEY [END]`, words as etcdctl splits them (double quotes with backslash escapes).
 */
import { UsageError } from '../../core/errors.js';
import type { KvClient } from '../cluster/client.js';
import { asList, asObject, parseJsonSafe, textOf } from '../cluster/parse.js';
import { b64 } from './ids.js';
import { kvOf, type KeyValue } from './keys.js';

const TARGETS = new Map([
  ['ver', 'VERSION'],
  ['version', 'VERSION'],
  ['c', 'CREATE'],
  ['create', 'CREATE'],
  ['m', 'MOD'],
  ['mod', 'MOD'],
  ['val', 'VALUE'],
  ['value', 'VALUE'],
  ['lease', 'LEASE'],
]);
const OPS = new Map([
  ['=', 'EQUAL'],
  ['!=', 'NOT_EQUAL'],
  ['<', 'LESS'],
  ['>', 'GREATER'],
]);
const FIELD = new Map([
  ['VERSION', 'version'],
  ['CREATE', 'create_revision'],
  ['MOD', 'mod_revision'],
  ['VALUE', 'value'],
  ['LEASE', 'lease'],
]);

export interface TxnRequest {
  compare: unknown[];
  success: unknown[];
  failure: unknown[];
}

/** Words as etcdctl's argify splits them: blanks between, double-quoted words with \" \\ \n \t escapes. */
export function words(line: string, where: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < line.length) {
    if (/\s/.test(line[i]!)) {
      i++;
      continue;
    }
    if (line[i] === '"') {
      let w = '';
      i++;
      for (; i < line.length && line[i] !== '"'; i++) {
        if (line[i] === '\\' && i + 1 < line.length) {
          const n = line[++i]!;
          w += n === 'n' ? '\n' : n === 't' ? '\t' : n;
        } else w += line[i];
      }
      if (line[i] !== '"') throw new UsageError(`${where}: a quote is not closed: ${line}`, { hint: 'close the value with "' });
      i++;
      out.push(w);
      continue;
    }
    let w = '';
    for (; i < line.length && !/\s/.test(line[i]!); i++) w += line[i];
    out.push(w);
  }
  return out;
}

function compareOf(line: string, where: string): unknown {
  const m = /^\s*(\w+)\("((?:[^"\\]|\\.)*)"\)\s*(=|!=|<|>)\s*(.*)$/.exec(line);
  const target = m && TARGETS.get(m[1]!);
  if (!m || !target)
    throw new UsageError(`${where}: "${line}" is not a compare`, {
      hint: 'write it as etcdctl does: mod("key") > "0", value("key") = "v", ver("key") = "1", create("key") = "0", lease("key") = "694d…"',
    });
  const key = words(`"${m[2]}"`, where)[0]!;
  const [value] = words(m[4]!, where);
  if (value === undefined) throw new UsageError(`${where}: "${line}" compares with nothing`, { hint: 'give the value after the operator, in double quotes' });
  const f = FIELD.get(target)!;
  // a lease id in hex, as etcdctl reads it (0: the key has no lease)
  if (target === 'LEASE' && !/^[0-9a-f]{1,16}$/i.test(value))
    throw new UsageError(`${where}: "${line}": lease compares with a lease id in hex`, { hint: `e.g. lease("${key}") = "694d77aa9e38260f" (0: no lease)` });
  const v = target === 'VALUE' ? b64(value) : target === 'LEASE' ? BigInt(`0x${value}`).toString() : value;
  if (target !== 'VALUE' && target !== 'LEASE' && !/^\d+$/.test(value))
    throw new UsageError(`${where}: "${line}": ${m[1]} compares with a number`, { hint: `e.g. ${m[1]}("${key}") = "0"` });
  return { key: b64(key), target, result: OPS.get(m[3]!), [f]: v };
}

function requestOf(line: string, where: string): unknown {
  const [op, key, third, ...rest] = words(line, where);
  if (op === 'put' && key !== undefined && third !== undefined && !rest.length) return { request_put: { key: b64(key), value: b64(third) } };
  if ((op === 'get' || op === 'del') && key !== undefined && !rest.length) {
    const r = { key: b64(key), ...(third !== undefined ? { range_end: b64(third) } : {}) };
    return op === 'get' ? { request_range: r } : { request_delete_range: r };
  }
  throw new UsageError(`${where}: "${line}" is not a request`, { hint: 'write get KEY [END], put KEY VALUE or del KEY [END] (quote a value with blanks)' });
}

/** The three blocks of a txn text (blank lines end each; a missing block is empty). */
export function parseTxn(text: string, source: string): TxnRequest {
  const blocks: string[][] = [[]];
  for (const raw of text.replace(/\r\n/g, '\n').split('\n')) {
    const line = raw.trimEnd();
    if (line.trim() === '') {
      if (blocks.length < 3) blocks.push([]);
      else if (blocks[2]!.length) break;
      continue;
    }
    blocks[blocks.length - 1]!.push(line);
  }
  const [cmp = [], ok = [], ko = []] = blocks;
  return {
    compare: cmp.map((l, i) => compareOf(l, `${source}: compare ${i + 1}`)),
    success: ok.map((l, i) => requestOf(l, `${source}: success request ${i + 1}`)),
    failure: ko.map((l, i) => requestOf(l, `${source}: failure request ${i + 1}`)),
  };
}

export type TxnResponse = { kind: 'put' } | { kind: 'get'; kvs: KeyValue[]; count: number } | { kind: 'del'; deleted: number };

export async function txn(c: KvClient, t: TxnRequest): Promise<{ succeeded: boolean; responses: TxnResponse[] }> {
  const r = asObject(parseJsonSafe(await c.gateway('/kv/txn', t)));
  return {
    succeeded: r.succeeded === true,
    responses: asList(r.responses).map((x): TxnResponse => {
      const o = asObject(x);
      if (o.response_range) {
        const g = asObject(o.response_range);
        return { kind: 'get', kvs: asList(g.kvs).map(kvOf), count: Number(textOf(g.count) ?? 0) };
      }
      if (o.response_delete_range) return { kind: 'del', deleted: Number(textOf(asObject(o.response_delete_range).deleted) ?? 0) };
      return { kind: 'put' };
    }),
  };
}
