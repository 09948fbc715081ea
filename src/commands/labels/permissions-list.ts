import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { labelsClient, permissionParent, PERMISSION_COLUMNS } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './permissions-list.spec.js';

export type Options = OptionsOf<typeof spec>;

/** `labels permissions list`: every page of a label's (or a revision's) permissions. */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  const client = await labelsClient(ctx, { admin: opts.admin });
  const { parent } = await permissionParent(client, opts);
  return { data: await client.permissions(parent), columns: PERMISSION_COLUMNS };
}
