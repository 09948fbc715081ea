import type { Context } from '../../context.js';
import { confirmDestructive, notDone } from '../../core/confirm.js';
import { ValidationError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { parsePrincipal, principalKey } from '../../labels/names.js';
import { labelsClient, permissionParent } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './permissions-remove.spec.js';

export type Options = OptionsOf<typeof spec>;

/** `labels permissions remove`: by email, audience or permission name; one is a DELETE, several are one `:batchDelete`. */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  const client = await labelsClient(ctx, { admin: opts.admin });
  const { id, parent } = await permissionParent(client, opts);
  const current = await client.permissions(parent);
  const names = opts.principals.map((input) => {
    const byName = current.find((p) => p.name === input || p.name?.endsWith(`/permissions/${input}`));
    if (byName) return byName.name!;
    const key = principalKey(parsePrincipal(input));
    const found = current.find((p) => principalKey(p) === key);
    if (!found)
      throw new ValidationError(
        'principal',
        `${parent} has no permission for ${input}`,
        `see: opsctl labels permissions list ${id}${opts.revision ? ` --revision ${opts.revision}` : ''}`,
      );
    return found.name!;
  });
  const unique = [...new Set(names)];
  const who = (n: string) => {
    const p = current.find((x) => x.name === n);
    return p ? `${principalKey(p)} (${p.role}) ${n}` : n;
  };
  const what = { action: `remove ${unique.length} permission${unique.length === 1 ? '' : 's'} of ${parent}`, items: unique.map(who), dryRun: opts.dryRun };
  const decision = await confirmDestructive(ctx, what);
  if (decision !== 'proceed') return notDone(decision, what);
  const [first] = unique;
  if (unique.length === 1 && first !== undefined) await client.deletePermission(first);
  else await client.batchDeletePermissions(parent, unique);
  return { data: { removed: unique }, text: '', message: `${parent}: removed ${unique.length} permission${unique.length === 1 ? '' : 's'}` };
}
