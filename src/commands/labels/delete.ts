import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { labelName } from '../../labels/names.js';
import { labelsClient, writableRef } from './shared.js';

export async function run(opts: { label: string; admin?: boolean }, ctx: Context): Promise<CommandResult> {
  const name = labelName(writableRef(opts.label));
  const client = await labelsClient(ctx, opts.admin);
  const current = await client.get(name);
  const ok = await (await ctx.prompter()).confirm(
    `Delete ${name} ("${current.properties?.title}") and its metadata on every item?`,
    { flag: '--yes' },
  );
  if (!ok) return { message: 'nothing deleted' };
  await client.delete(name, current.revisionId);
  return { data: { name, deleted: true }, text: '', message: `deleted ${name}` };
}
