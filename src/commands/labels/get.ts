import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { LABEL_RECORD } from '../../labels/format.js';
import { labelName } from '../../labels/names.js';
import { labelRef, labelsClient } from './shared.js';

export async function run(opts: { label: string; admin?: boolean }, ctx: Context): Promise<CommandResult> {
  const client = await labelsClient(ctx, opts.admin);
  const label = await client.get(labelName(await labelRef(client, opts.label)));
  return { data: label, columns: LABEL_RECORD };
}
