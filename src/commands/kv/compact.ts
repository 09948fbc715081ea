import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import { UsageError } from '../../core/errors.js';
import { compact } from '../../kv/ops/maintenance.js';
import { etcdSaid, reach, shaped } from './lib/ops.js';
import type { spec } from './compact.spec.js';

/** `kv compact REV`: the history before REV is gone (etcd refuses a revision already compacted or in the future). */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  if (!/^[1-9]\d*$/.test(opts.revision))
    throw new UsageError(`revision: "${opts.revision}" is not a revision`, {
      field: 'revision',
      hint: 'give a positive whole number (opsctl kv endpoint status shows the current one)',
    });
  const r = await reach(ctx, opts);
  await r.any((c) => compact(c, opts.revision, { physical: Boolean(opts.physical) })).catch((err) => etcdSaid(err, `compact ${opts.revision}`));
  return shaped(opts, { data: { revision: Number(opts.revision), compacted: true }, simple: [`compacted revision ${opts.revision}`] });
}
