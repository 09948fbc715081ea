import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import { UsageError } from '../../core/errors.js';
import { del, kvJson } from '../../kv/ops/keys.js';
import { kvLines } from '../../kv/ops/simple.js';
import { etcdSaid, reach, shaped } from './lib/ops.js';
import type { spec } from './del.spec.js';

/** `kv del KEY [END] [--prefix]`: how many keys were deleted (0 is not an error, as etcdctl); with --prev-kv --json, each key as `kv get --json` writes it. */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  if (opts.prefix && opts.rangeEnd !== undefined)
    throw new UsageError('--prefix and a range end: give one of them', { hint: 'opsctl kv del KEY --prefix, or opsctl kv del KEY END' });
  const r = await reach(ctx, opts);
  const d = await r
    .any((c) => del(c, { key: opts.kvKey, end: opts.rangeEnd, prefix: opts.prefix }, { prevKv: Boolean(opts.prevKv) }))
    .catch((err) => etcdSaid(err, `del ${opts.kvKey}`));
  return shaped(opts, {
    data: { deleted: d.deleted, ...(opts.prevKv ? { prev_kvs: d.prevKvs.map(kvJson) } : {}) },
    columns: ['deleted'],
    simple: [String(d.deleted), ...d.prevKvs.flatMap(kvLines)],
  });
}
