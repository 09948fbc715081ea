import type { Context } from '../../context.js';
import { formatTable, type Column, type CommandResult } from '../../core/output.js';
import { UsageError } from '../../core/errors.js';
import type { OptionsOf } from '../spec.js';
import { leaseHex } from '../../kv/ops/ids.js';
import {
  getEtcdctlJson,
  getFieldsLines,
  getJson,
  getSimpleLines,
  range,
  SORT_ORDERS,
  SORT_TARGETS,
  type RangeKv,
  type RangeRequest,
} from '../../kv/ops/range.js';
import { etcdSaid, linesText, reach } from './lib/ops.js';
import type { spec } from './get.spec.js';

export type Options = OptionsOf<typeof spec>;

/**
 * `kv get KEY [END]` with etcdctl's range flags, from the first member that answers (as etcdctl's
 * balancer). A missing key prints nothing, exit 0 (etcdctl's habit); --require makes it exit 1.
 */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  const req = request(opts);
  const r = await reach(ctx, opts);
  const got = await r
    .any((c) => range(c, req))
    .catch((err) =>
      etcdSaid(err, `get ${opts.kvKey}`, [
        [/compacted/, 'a compaction removed the history before the current compact revision: give a later --rev, or none for now'],
        [/future revision/, "that revision is not written yet: give --rev at most the store's revision (opsctl kv endpoint status)"],
      ]),
    );
  // --require: exit 1 when nothing matched (the count, with --count-only: no key comes back then)
  const exitCode = opts.require && (opts.countOnly ? got.count === '0' : got.kvs.length === 0) ? 1 : undefined;
  if (exitCode) ctx.io.warn(`no key matches ${describe(req)} (--require)`);
  const data = getJson(got, opts);
  const lines = (text: string[]) => ({ data, text: linesText(text), exitCode });
  switch (opts.writeOut) {
    case 'simple':
      return lines(opts.countOnly ? [got.count] : getSimpleLines(got, { valueOnly: opts.printValueOnly }));
    case 'fields':
      return lines(getFieldsLines(got));
    case 'json':
      return lines([getEtcdctlJson(got)]);
    default:
  }
  if (opts.countOnly) return lines([got.count]);
  if (opts.keysOnly) return lines(got.kvs.map((kv) => kv.key));
  if (opts.printValueOnly) return lines(got.kvs.map((kv) => kv.value));
  const ranged = req.prefix || req.fromKey || req.end !== undefined;
  if (!ranged && opts.writeOut === undefined) return lines(got.kvs.map((kv) => kv.value));
  // a range: a table of the keys on a terminal, tab-separated when piped; nothing at all when none matched
  const columns: Array<Column<RangeKv>> = [
    { key: 'key', get: (kv) => kv.key },
    { key: 'value', get: (kv) => kv.value },
    { key: 'create_revision', header: 'created', get: (kv) => kv.createRevision },
    { key: 'mod_revision', header: 'modified', get: (kv) => kv.modRevision },
    { key: 'version', get: (kv) => kv.version },
    { key: 'lease', get: (kv) => (kv.lease === '0' ? '' : leaseHex(kv.lease)) },
  ];
  return { data, text: got.kvs.length ? formatTable(ctx.io, got.kvs, columns) : '', exitCode };
}

/** The request the flags make, checked as etcdctl checks them (before anything is sent). */
function request(opts: Options): RangeRequest {
  if (opts.prefix && opts.fromKey)
    throw new UsageError('--prefix and --from-key: give one of them', {
      field: '--from-key',
      hint: 'opsctl kv get KEY --prefix, or opsctl kv get KEY --from-key',
    });
  if (opts.rangeEnd !== undefined && (opts.prefix || opts.fromKey))
    throw new UsageError(`a range end and ${opts.prefix ? '--prefix' : '--from-key'}: give one of them`, {
      field: 'range-end',
      hint: 'opsctl kv get KEY END (the keys in [KEY, END)), or opsctl kv get KEY --prefix',
    });
  if (opts.keysOnly && opts.countOnly) throw new UsageError('--keys-only and --count-only: give one of them', { field: '--count-only' });
  if (opts.printValueOnly && (opts.writeOut === 'json' || opts.writeOut === 'fields'))
    throw new UsageError(`--print-value-only and -w ${opts.writeOut}: the values alone are lines, not ${opts.writeOut}`, {
      field: '--print-value-only',
      hint: 'drop -w (or use -w simple) for the values alone',
    });
  const sortTarget = oneOf(opts.sortBy, SORT_TARGETS, '--sort-by');
  const sortOrder = oneOf(opts.order, SORT_ORDERS, '--order');
  if (opts.consistency !== undefined && !['l', 's'].includes(opts.consistency))
    throw new UsageError(`--consistency: "${opts.consistency}" is not l or s`, {
      field: '--consistency',
      hint: "l: linearizable (a quorum confirms the read), s: serializable (the member's own copy)",
    });
  return {
    key: opts.kvKey,
    ...(opts.rangeEnd !== undefined ? { end: opts.rangeEnd } : {}),
    prefix: opts.prefix,
    fromKey: opts.fromKey,
    ...(opts.limit !== undefined ? { limit: Number(count(opts.limit, '--limit')) } : {}),
    ...(opts.rev !== undefined ? { revision: count(opts.rev, '--rev') } : {}),
    ...(sortTarget ? { sortTarget } : {}),
    ...(sortOrder ? { sortOrder } : {}),
    serializable: opts.consistency === 's',
    keysOnly: opts.keysOnly,
    countOnly: opts.countOnly,
    ...(opts.minModRev !== undefined ? { minModRevision: count(opts.minModRev, '--min-mod-rev') } : {}),
    ...(opts.maxModRev !== undefined ? { maxModRevision: count(opts.maxModRev, '--max-mod-rev') } : {}),
    ...(opts.minCreateRev !== undefined ? { minCreateRevision: count(opts.minCreateRev, '--min-create-rev') } : {}),
    ...(opts.maxCreateRev !== undefined ? { maxCreateRevision: count(opts.maxCreateRev, '--max-create-rev') } : {}),
  };
}

/** The keys asked for, in words. */
function describe(r: RangeRequest): string {
  if (r.prefix) return `the prefix "${r.key}"`;
  if (r.fromKey) return `"${r.key}" or after`;
  if (r.end !== undefined) return `[${JSON.stringify(r.key)}, ${JSON.stringify(r.end)})`;
  return `"${r.key}"`;
}

/** A whole number ≥ 0 typed for a flag, as the decimal text the gateway takes. */
function count(text: string, flag: string): string {
  if (!/^\d{1,19}$/.test(text.trim())) throw new UsageError(`${flag}: "${text}" is not a whole number`, { field: flag, hint: `e.g. ${flag} 10` });
  return BigInt(text.trim()).toString();
}

/** A choice typed in any case (etcdctl upper-cases it), or undefined when not given. */
function oneOf<T extends string>(text: string | undefined, choices: readonly T[], flag: string): T | undefined {
  if (text === undefined) return undefined;
  const hit = choices.find((c) => c === text.toUpperCase());
  if (!hit) throw new UsageError(`${flag}: "${text}" is not one of ${choices.join(', ')}`, { field: flag });
  return hit;
}
