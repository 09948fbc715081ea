import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { resolveId } from '../../tracker/input.js';
import { resource, trackerClient } from './shared.js';
import type { OptionsOf } from '../spec.js';
import type { getSpec } from './get.spec.js';

export async function run(opts: OptionsOf<ReturnType<typeof getSpec>>, ctx: Context): Promise<CommandResult> {
  const spec = resource(opts.resource);
  const client = await trackerClient(ctx, spec);
  const item = await client.get(spec, await resolveId(spec, opts.id, client.names));
  return { data: item };
}
