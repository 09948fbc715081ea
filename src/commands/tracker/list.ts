import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { coerceFlag, flagAttr } from '../../tracker/input.js';
import { columns, resource, trackerClient } from './shared.js';

export interface ListOptions {
  resource: string;
  flags: Record<string, unknown>;
}

export async function run(opts: ListOptions, ctx: Context): Promise<CommandResult> {
  const spec = resource(opts.resource);
  const query: Record<string, string | number | boolean> = {};
  for (const [name, f] of Object.entries(spec.listQuery ?? {})) {
    const raw = opts.flags[flagAttr(name)];
    if (raw !== undefined) query[name] = coerceFlag(name, f, raw) as string | number | boolean;
  }
  const client = await trackerClient(ctx);
  const items = await client.list(spec, query);
  return { data: items, columns: columns(spec) };
}
