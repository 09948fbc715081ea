import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { buildBody, readDataFlag } from '../../tracker/input.js';
import { resource, trackerClient } from './shared.js';

export interface CreateOptions {
  resource: string;
  flags: Record<string, unknown>;
}

export async function run(opts: CreateOptions, ctx: Context): Promise<CommandResult> {
  const spec = resource(opts.resource);
  const data = await readDataFlag(opts.flags.data as string | undefined, () => ctx.io.readStdin(), ctx.cwd);
  const body = await buildBody(spec, 'create', opts.flags, data);
  const created = await (await trackerClient(ctx)).create(spec, body);
  return { data: created, message: `created ${spec.singular} ${created?.id ?? ''}`.trim() };
}
