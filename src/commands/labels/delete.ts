import type { Context } from '../../context.js';
import { confirmDestructive, notDone } from '../../core/confirm.js';
import type { CommandResult } from '../../core/output.js';
import { labelName } from '../../labels/names.js';
import { labelsClient, writableRef } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './delete.spec.js';

export type Options = OptionsOf<typeof spec>;

export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  const client = await labelsClient(ctx, { admin: opts.admin });
  const name = labelName(await writableRef(client, opts.label));
  const current = await client.get(name);
  const what = {
    action: `delete ${name} and its metadata on every item`,
    items: [`${name} "${current.properties?.title}" (${current.lifecycle?.state})`],
    dryRun: opts.dryRun,
  };
  const decision = await confirmDestructive(ctx, what);
  if (decision !== 'proceed') return notDone(decision, what);
  await client.delete(name, current.revisionId);
  return { data: { name, deleted: true }, text: '', message: `deleted ${name}` };
}
