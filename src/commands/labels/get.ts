import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { LABEL_RECORD } from '../../labels/format.js';
import { labelName } from '../../labels/names.js';
import { labelRef, labelsClient } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './get.spec.js';

export type Options = OptionsOf<typeof spec>;

export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  const client = await labelsClient(ctx, opts.admin);
  const label = await client.get(labelName(await labelRef(client, opts.label)));
  return { data: label, columns: LABEL_RECORD };
}
