import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { labelsClient, permissionParent, PERMISSION_COLUMNS, type PermissionTarget } from './shared.js';

/** `labels permissions list`: every page of a label's (or a revision's) permissions. */
export async function run(opts: PermissionTarget, ctx: Context): Promise<CommandResult> {
  const { parent } = permissionParent(opts);
  return { data: await (await labelsClient(ctx, opts.admin)).permissions(parent), columns: PERMISSION_COLUMNS };
}
