import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { parseId } from '../../tracker/input.js';
import { resource, trackerClient } from './shared.js';

export async function run(opts: { resource: string; id: string }, ctx: Context): Promise<CommandResult> {
  const spec = resource(opts.resource);
  const id = parseId(spec, opts.id);
  const item = await (await trackerClient(ctx, spec)).get(spec, id);
  return { data: item };
}
