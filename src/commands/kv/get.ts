import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { OpsError } from '../../core/errors.js';
import { reach } from './lib/ops.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './get.spec.js';

export type GetOptions = OptionsOf<typeof spec>;

/** `kv get KEY`: the value on stdout (exit 1 when the key does not exist); the first member that answers, as etcdctl. */
export async function run(opts: GetOptions, ctx: Context): Promise<CommandResult> {
  const r = await reach(ctx, opts);
  const kv = await r.any((c) => c.get(opts.kvKey));
  if (!kv) throw new OpsError(`key "${opts.kvKey}" not found`, 1, { code: 'not_found', hint: 'write it with: opsctl kv put KEY VALUE' });
  return { data: kv, text: kv.value };
}
