import type { Context } from '../../context.js';
import { confirmDestructive, notDone } from '../../core/confirm.js';
import { PartialError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { principalKey } from '../../labels/names.js';
import { labelsClient, permissionParent, PERMISSION_COLUMNS, uniqueGrants } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './permissions-set.spec.js';

export type Options = OptionsOf<typeof spec>;

/** `labels permissions set`: exactly these grants; one `:batchUpdate` for new and changed, one `:batchDelete` for the rest. */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  const grants = uniqueGrants(opts.grants);
  const client = await labelsClient(ctx, { admin: opts.admin });
  const { parent } = await permissionParent(client, opts);
  const current = await client.permissions(parent);
  const byKey = new Map(current.filter((p) => p.email || p.audience).map((p) => [principalKey(p), p]));
  const upserts = grants.filter((g) => byKey.get(principalKey(g))?.role !== g.role);
  const wanted = new Set(grants.map(principalKey));
  const removed = [...byKey.entries()].filter(([k]) => !wanted.has(k));
  const removals = removed.map(([, p]) => p.name!);
  if (opts.dryRun) {
    ctx.io.info(`dry run: would grant or change ${upserts.length} and remove ${removals.length} permission${removals.length === 1 ? '' : 's'} of ${parent}`);
    for (const g of upserts) ctx.io.info(`  + ${principalKey(g)}=${g.role}`);
    for (const [k, p] of removed) ctx.io.info(`  - ${k} (${p.role})`);
    return {
      data: { dry_run: true, grant: upserts.map((g) => `${principalKey(g)}=${g.role}`), remove: removed.map(([k]) => k), changed: false },
      text: '',
      message: 'dry run: nothing changed',
    };
  }
  if (removals.length) {
    // removing permissions: the one confirmation rule
    const what = {
      action: `remove ${removals.length} permission${removals.length === 1 ? '' : 's'} of ${parent}`,
      items: removed.map(([k, p]) => `${k} (${p.role})`),
    };
    const decision = await confirmDestructive(ctx, what);
    if (decision !== 'proceed') return notDone(decision, what);
  }
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
    columns: PERMISSION_COLUMNS,
    message:
      upserts.length || removals.length
        ? `${parent}: ${upserts.length} granted or changed, ${removals.length} removed`
        : `${parent}: already as given (nothing sent)`,
  };
}
