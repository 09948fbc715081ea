import type { Context } from '../../context.js';
import { ValidationError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { parsePrincipal, principalKey } from '../../labels/names.js';
import { labelsClient, permissionParent, type PermissionTarget } from './shared.js';

/** `labels permissions remove`: by email, audience or permission name; one is a DELETE, several are one `:batchDelete`. */
export async function run(opts: PermissionTarget & { principals: string[] }, ctx: Context): Promise<CommandResult> {
  const { id, parent } = permissionParent(opts);
  const client = await labelsClient(ctx, opts.admin);
  const current = await client.permissions(parent);
  const names = opts.principals.map((input) => {
    const byName = current.find((p) => p.name === input || p.name?.endsWith(`/permissions/${input}`));
    if (byName) return byName.name!;
    const key = principalKey(parsePrincipal(input));
    const found = current.find((p) => principalKey(p) === key);
    if (!found) throw new ValidationError('principal', `${parent} has no permission for ${input}`, `see: opsctl labels permissions list ${id}${opts.revision ? ` --revision ${opts.revision}` : ''}`);
    return found.name!;
  });
  const unique = [...new Set(names)];
  if (unique.length === 1) await client.deletePermission(unique[0]);
  else await client.batchDeletePermissions(parent, unique);
  return { data: { removed: unique }, text: '', message: `${parent}: removed ${unique.length} permission${unique.length === 1 ? '' : 's'}` };
}
