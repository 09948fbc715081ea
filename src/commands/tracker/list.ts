import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { flagAttr, flagValue } from '../../tracker/input.js';
import { fetchList, moreNotice } from '../../tracker/paging.js';
import type { OptionsOf } from '../spec.js';
import type { listSpec } from './list.spec.js';
import { columns, pageFlags, resource, trackerClient } from './shared.js';

export type ListOptions = OptionsOf<ReturnType<typeof listSpec>>;

export async function run(opts: ListOptions, ctx: Context): Promise<CommandResult> {
  const spec = await resource(opts.resource);
  const paging = pageFlags(opts);
  const client = await trackerClient(ctx, spec);
  const query: Record<string, string | number | boolean> = {};
  for (const [name, f] of Object.entries(spec.listQuery ?? {})) {
    const raw = opts.fields[flagAttr(name)];
    if (raw !== undefined) query[name] = (await flagValue(name, f, raw, client.names)) as string | number | boolean;
  }
  const got = await fetchList(client.http, client.path(spec), query, undefined, paging);
  if (got.more) ctx.io.warn(moreNotice(got.items.length, spec.name, got.total));
  return { data: got.items, columns: columns(spec.columns) };
}
