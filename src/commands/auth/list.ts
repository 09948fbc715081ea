import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { accountColumns } from './columns.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './list.spec.js';

export type Options = OptionsOf<typeof spec>;

/** `opsctl auth list`: the accounts signed in on the profile (gh-style), the active one marked; no secret is read. */
export async function run(_opts: Options, ctx: Context): Promise<CommandResult> {
  const [{ accountRows }, { shortScope }] = await Promise.all([import('../../auth/accounts.js'), import('../../auth/scopes.js')]);
  const profile = await ctx.profileName();
  const rows = await accountRows(ctx, [profile]);
  if (rows.length === 0) await (await import('../../config/profile-check.js')).assertProfileExists(ctx, profile);
  if (rows.length === 0) ctx.io.info(`no account is signed in on profile ${profile}: run opsctl login`);
  return { data: rows, columns: accountColumns(shortScope) };
}
