import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { LABEL_RECORD } from '../../labels/format.js';
import { labelName, parseLabelRef } from '../../labels/names.js';
import { labelsClient } from './shared.js';

export async function run(opts: { label: string; admin?: boolean }, ctx: Context): Promise<CommandResult> {
  const label = await (await labelsClient(ctx, opts.admin)).get(labelName(parseLabelRef(opts.label)));
  return { data: label, columns: LABEL_RECORD };
}
