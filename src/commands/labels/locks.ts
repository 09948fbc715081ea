import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { parentName, parseLabelRef } from '../../labels/names.js';
import { labelsClient } from './shared.js';

export async function run(opts: { label: string; revision?: string }, ctx: Context): Promise<CommandResult> {
  const ref = parseLabelRef(opts.label);
  const locks = await (await labelsClient(ctx)).locks(parentName(ref.id, opts.revision ?? (ref.rev && ref.rev !== 'latest' ? ref.rev : undefined)));
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
