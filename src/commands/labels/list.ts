import type { Context } from '../../context.js';
import { ValidationError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { LABEL_COLUMNS } from '../../labels/format.js';
import { labelsClient } from './shared.js';

export interface ListOptions {
  publishedOnly: boolean;
  minimumRole?: string;
  admin: boolean;
  limit?: string;
}

export async function run(opts: ListOptions, ctx: Context): Promise<CommandResult> {
  let limit: number | undefined;
  if (opts.limit !== undefined) {
    limit = Number(opts.limit);
    if (!Number.isInteger(limit) || limit < 1) throw new ValidationError('--limit', `"${opts.limit}" is not a positive whole number`);
  }
  const client = await labelsClient(ctx);
  client.admin = opts.admin;
  const labels = await client.list({ publishedOnly: opts.publishedOnly || undefined, minimumRole: opts.minimumRole }, limit);
  return { data: labels.slice(0, limit), columns: LABEL_COLUMNS };
}
