import type { Context } from '../../context.js';
import { UsageError } from '../../core/errors.js';
import type { Column } from '../../core/output.js';
import { TrackerClient } from '../../tracker/client.js';
import { resourceByName, type ResourceSpec } from '../../tracker/resources.js';

export async function trackerClient(ctx: Context): Promise<TrackerClient> {
  return new TrackerClient(await ctx.http('tracker'));
}

export function resource(name: string): ResourceSpec {
  const spec = resourceByName(name);
  if (!spec) throw new UsageError(`unknown tracker resource "${name}"`);
  return spec;
}

export function columns(spec: ResourceSpec): Column[] {
  return spec.columns.map((key) => ({ key }));
}
