import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { parentName } from '../../labels/names.js';
import { labelRef, labelsClient } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './locks.spec.js';

export type Options = OptionsOf<typeof spec>;

export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  if (opts.revision !== undefined) parentName('x', opts.revision);
  const client = await labelsClient(ctx);
  const ref = await labelRef(client, opts.label);
  const locks = await client.locks(parentName(ref.id, opts.revision ?? (ref.rev && ref.rev !== 'latest' ? ref.rev : undefined)));
  return {
    data: locks,
    columns: [
      { key: 'name' },
      { key: 'fieldId', header: 'field' },
      { key: 'choiceId', header: 'choice' },
      { key: 'state' },
      { key: 'createTime', header: 'created' },
    ],
  };
}
