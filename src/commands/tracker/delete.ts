import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { parseId } from '../../tracker/input.js';
import { resource, trackerClient } from './shared.js';

export async function run(opts: { resource: string; id: string }, ctx: Context): Promise<CommandResult> {
  const spec = resource(opts.resource);
  const id = parseId(spec, opts.id);
  const ok = await (await ctx.prompter()).confirm(`Delete ${spec.singular} ${id}?`, { flag: '--yes' });
  if (!ok) return { message: 'nothing deleted' };
  await (await trackerClient(ctx, spec)).delete(spec, id);
  return { data: { id, deleted: true }, message: `deleted ${spec.singular} ${id}`, text: '' };
}
