import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { principalKey } from '../../labels/names.js';
import { labelsClient, permissionParent, PERMISSION_COLUMNS, uniqueGrants } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './permissions-update.spec.js';

export type Options = OptionsOf<typeof spec>;

/**
 * `labels permissions update`: `PATCH …/permissions` (labels.updatePermissions, or
 * labels.revisions.updatePermissions with --revision), one per grant: the principal's permission is
 * created, or its role changed. Permissions are not revisioned and need no publishing.
 */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  const grants = uniqueGrants(opts.grants);
  const client = await labelsClient(ctx, { admin: opts.admin });
  const { parent } = await permissionParent(client, opts);
  const out = [];
  for (const g of grants) out.push(await client.updatePermission(parent, g));
  return { data: out, columns: PERMISSION_COLUMNS, message: `${parent}: updated ${grants.map((g) => `${principalKey(g)}=${g.role}`).join(', ')}` };
}
