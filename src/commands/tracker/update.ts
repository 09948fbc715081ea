import type { Context } from '../../context.js';
import { dataFileReader } from '../lib/file-flag.js';
import { UsageError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { buildBody, flagName, DATA_FORMS, readDataFlag, resolveId } from '../../tracker/input.js';
import type { OptionsOf } from '../spec.js';
import { checkAdvice } from '../../tracker/advice.js';
import { columns, resource, trackerClient } from './shared.js';
import type { updateSpec } from './update.spec.js';

export type UpdateOptions = OptionsOf<ReturnType<typeof updateSpec>>;

export async function run(opts: UpdateOptions, ctx: Context): Promise<CommandResult> {
  const spec = await resource(opts.resource);
  const data = await readDataFlag(opts.data, () => ctx.io.readStdin(), dataFileReader(ctx, DATA_FORMS));
  const client = await trackerClient(ctx, spec);
  const id = await resolveId(spec, opts.id, client.names);
  const body = await buildBody(spec, 'update', opts.fields, data, client.names);
  if (Object.keys(body).length === 0) {
    const flags = Object.entries(spec.fields)
      .filter(([, f]) => !f.in || f.in.includes('update'))
      .map(([n]) => flagName(n));
    throw new UsageError('nothing to update', { hint: `pass at least one of ${flags.join(', ')} or --data` });
  }
  checkAdvice((t) => ctx.io.warn(t), spec.name, [{ body }], { strict: Boolean(opts.strict) });
  const updated = await client.update(spec, id, body);
  return { data: updated, columns: columns(spec.columns), message: `updated ${spec.singular} ${id}` };
}
