import type { Context } from '../../context.js';
import { PartialError, ValidationError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { parentName, parseGrant, parseLabelRef, parsePrincipal, principalKey, type Grant } from '../../labels/names.js';
import type { LabelPermission } from '../../labels/types.js';
import { labelsClient } from './shared.js';

export interface PermissionOptions {
  verb: 'list' | 'add' | 'remove' | 'set';
  label: string;
  revision?: string;
  grants: string[];
  admin?: boolean;
}

const COLUMNS = [{ key: 'principal', get: (p: LabelPermission) => p.email ?? p.audience ?? p.group ?? p.person }, { key: 'role' }, { key: 'name' }];

function uniqueGrants(inputs: string[]): Grant[] {
  const grants = inputs.map((g) => parseGrant(g));
  const seen = new Set<string>();
  for (const g of grants) {
    const key = principalKey(g);
    if (seen.has(key)) throw new ValidationError('grant', `${key} is given twice`);
    seen.add(key);
  }
  return grants;
}

/**
 * Permissions of a label, or of a revision with --revision. One grant is a create (an upsert by
 * principal), several are one :batchUpdate; one removal is a DELETE, several are one :batchDelete.
 */
export async function run(opts: PermissionOptions, ctx: Context): Promise<CommandResult> {
  const ref = parseLabelRef(opts.label);
  const parent = parentName(ref.id, opts.revision ?? (ref.rev && ref.rev !== 'latest' ? ref.rev : undefined));
  const grants = opts.verb === 'add' || opts.verb === 'set' ? uniqueGrants(opts.grants) : [];
  const client = await labelsClient(ctx, opts.admin);

  if (opts.verb === 'list') return { data: await client.permissions(parent), columns: COLUMNS };

  if (opts.verb === 'add') {
    const out = grants.length === 1 ? [await client.createPermission(parent, grants[0])] : await client.batchUpdatePermissions(parent, grants);
    return { data: out, columns: COLUMNS, message: `${parent}: granted ${grants.map((g) => `${principalKey(g)}=${g.role}`).join(', ')}` };
  }

  const current = await client.permissions(parent);
  if (opts.verb === 'remove') {
    const names = opts.grants.map((input) => {
      const byName = current.find((p) => p.name === input || p.name?.endsWith(`/permissions/${input}`));
      if (byName) return byName.name!;
      const key = principalKey(parsePrincipal(input));
      const found = current.find((p) => principalKey(p) === key);
      if (!found) throw new ValidationError('principal', `${parent} has no permission for ${input}`, `see: opsctl labels permissions list ${ref.id}${opts.revision ? ` --revision ${opts.revision}` : ''}`);
      return found.name!;
    });
    const unique = [...new Set(names)];
    if (unique.length === 1) await client.deletePermission(unique[0]);
    else await client.batchDeletePermissions(parent, unique);
    return { data: { removed: unique }, text: '', message: `${parent}: removed ${unique.length} permission${unique.length === 1 ? '' : 's'}` };
  }

  // set: exactly these grants
  const byKey = new Map(current.filter((p) => p.email || p.audience).map((p) => [principalKey(p), p]));
  const upserts = grants.filter((g) => byKey.get(principalKey(g))?.role !== g.role);
  const wanted = new Set(grants.map(principalKey));
  const removals = [...byKey.entries()].filter(([k]) => !wanted.has(k)).map(([, p]) => p.name!);
  if (upserts.length) await client.batchUpdatePermissions(parent, upserts);
  if (removals.length) {
    try {
      await client.batchDeletePermissions(parent, removals);
    } catch (err) {
      if (!upserts.length) throw err;
      throw new PartialError(`${parent}: granted or changed ${upserts.length}, then removing ${removals.length} failed: ${(err as Error).message}`, {
        hint: 'fix the cause and run the same set again: it sends only what is still different',
        summary: { granted: upserts.map((g) => `${principalKey(g)}=${g.role}`), notRemoved: removals },
        cause: err,
      });
    }
  }
  const after = upserts.length || removals.length ? await client.permissions(parent) : current;
  return {
    data: after,
    columns: COLUMNS,
    message: upserts.length || removals.length ? `${parent}: ${upserts.length} granted or changed, ${removals.length} removed` : `${parent}: already as given (nothing sent)`,
  };
}
