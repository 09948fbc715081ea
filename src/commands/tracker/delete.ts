import type { Context } from '../../context.js';
import { confirmDestructive, notDone } from '../../core/confirm.js';
import type { CommandResult } from '../../core/output.js';
import { resolveId } from '../../tracker/input.js';
import { resource, trackerClient } from './shared.js';
import type { OptionsOf } from '../spec.js';
import type { deleteSpec } from './delete.spec.js';

export async function run(opts: OptionsOf<ReturnType<typeof deleteSpec>>, ctx: Context): Promise<CommandResult> {
  const spec = await resource(opts.resource);
  const client = await trackerClient(ctx, spec);
  const id = await resolveId(spec, opts.id, client.names);
  // name what goes (a read, never a write); a resource without `get` is named by its id alone
  const record = spec.verbs.includes('get') ? await client.get<Record<string, unknown>>(spec, id) : undefined;
  const title = record?.name ?? record?.title ?? record?.text;
  const what = {
    action: `delete ${spec.singular} ${id}`,
    items: [`${spec.singular} ${id}${typeof title === 'string' ? ` "${title}"` : ''}`],
    dryRun: opts.dryRun,
  };
  const decision = await confirmDestructive(ctx, what);
  if (decision !== 'proceed') return notDone(decision, what);
  await client.delete(spec, id);
  return { data: { id, deleted: true }, message: `deleted ${spec.singular} ${id}`, text: '' };
}
