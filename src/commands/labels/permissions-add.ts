import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { principalKey } from '../../labels/names.js';
import { labelsClient, permissionParent, PERMISSION_COLUMNS, uniqueGrants } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './permissions-add.spec.js';

export type Options = OptionsOf<typeof spec>;

/** `labels permissions add`: one grant is a create (an upsert by principal), several are one `:batchUpdate`. */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  const grants = uniqueGrants(opts.grants);
  const client = await labelsClient(ctx, { admin: opts.admin });
  const { parent } = await permissionParent(client, opts);
  const [first] = grants;
  const out = grants.length === 1 && first ? [await client.createPermission(parent, first)] : await client.batchUpdatePermissions(parent, grants);
  return { data: out, columns: PERMISSION_COLUMNS, message: `${parent}: granted ${grants.map((g) => `${principalKey(g)}=${g.role}`).join(', ')}` };
}
