import type { Context } from '../../context.js';
import { UsageError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { buildBody, flagName, readDataFlag, resolveId } from '../../tracker/input.js';
import { columns, resource, trackerClient } from './shared.js';

export interface UpdateOptions {
  resource: string;
  id: string;
  flags: Record<string, unknown>;
}

export async function run(opts: UpdateOptions, ctx: Context): Promise<CommandResult> {
  const spec = resource(opts.resource);
  const data = await readDataFlag(opts.flags.data as string | undefined, () => ctx.io.readStdin(), ctx.cwd);
  const client = await trackerClient(ctx, spec);
  const id = await resolveId(spec, opts.id, client.names);
  const body = await buildBody(spec, 'update', opts.flags, data, client.names);
  if (Object.keys(body).length === 0) {
    const flags = Object.entries(spec.fields)
      .filter(([, f]) => !f.in || f.in.includes('update'))
      .map(([n]) => flagName(n));
    throw new UsageError('nothing to update', { hint: `pass at least one of ${flags.join(', ')} or --data` });
  }
  const updated = await client.update(spec, id, body);
  return { data: updated, columns: columns(spec.columns), message: `updated ${spec.singular} ${id}` };
}
