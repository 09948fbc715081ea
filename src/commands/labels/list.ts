import type { Context } from '../../context.js';
import { ValidationError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { LABEL_COLUMNS } from '../../labels/format.js';
import { labelsClient } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './list.spec.js';

export type Options = OptionsOf<typeof spec>;

export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  let limit: number | undefined;
  if (opts.limit !== undefined) {
    limit = Number(opts.limit);
    if (!Number.isInteger(limit) || limit < 1) throw new ValidationError('--limit', `"${opts.limit}" is not a positive whole number`);
  }
  const client = await labelsClient(ctx);
  client.admin = opts.admin;
  const query = { publishedOnly: opts.publishedOnly || undefined, minimumRole: opts.minimumRole };
  if (limit === undefined) return { data: await client.list(query), columns: LABEL_COLUMNS };
  const { items, more } = await client.listUpTo(query, limit);
  // like the tracker's lists: a cut-short list says so on stderr
  if (more) ctx.io.warn(`showing ${items.length} label${items.length === 1 ? '' : 's'}; more exist: leave out --limit for all, or raise it`);
  return { data: items, columns: LABEL_COLUMNS };
}
