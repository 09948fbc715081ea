import type { Context } from '../../context.js';
import { AuthError, UsageError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { configuredIssuer } from '../../config/server-id.js';

export interface AuthRemoveScopesOptions {
  removeScopes: string[];
  account?: string;
}

/**
 * `opsctl auth refresh --remove-scopes S…` (gh's): the account's access tokens carry fewer scopes from
 * now on. A refresh asks for the narrower scope (RFC 6749 §6), with no browser; later refreshes keep
 * asking for it. The grant behind the refresh token stays at the server until opsctl logout.
 */
export async function run(opts: AuthRemoveScopesOptions, ctx: Context): Promise<CommandResult> {
  const [{ parseScopes, shortScope }, { oauthSettings }, { accountTokens, assertBoundHere, storeRefreshed }] = await Promise.all([
    import('../../auth/scopes.js'),
    import('../../auth/settings.js'),
    import('../../auth/accounts.js'),
  ]);
  const removing = parseScopes(opts.removeScopes, { expand: !configuredIssuer(ctx.env, await ctx.profile()) });
  if (!removing.length)
    throw new UsageError('--remove-scopes: give the scopes to remove', {
      field: 'remove-scopes',
      hint: 'e.g. opsctl auth refresh --remove-scopes media.upload',
    });
  const profile = await ctx.profileName();
  const current = await accountTokens(ctx, profile, opts.account);
  if (!current) await (await import('../../config/profile-check.js')).assertProfileExists(ctx, profile);
  if (!current) throw new AuthError(`not signed in (profile ${profile}): no scopes to remove`, { code: 'not_signed_in', hint: 'run: opsctl login' });
  await assertBoundHere(ctx, profile, current);
  const granted = (current.scope ?? '').split(/\s+/).filter(Boolean);
  const absent = removing.filter((s) => !granted.includes(s));
  if (absent.length) ctx.io.warn(`${current.account} does not have ${absent.map(shortScope).join(', ')}: nothing to remove there`);
  const remaining = granted.filter((s) => !removing.includes(s));
  if (remaining.length === granted.length) {
    return {
      data: { account: current.account, profile, scopes: granted, removed: [] },
      text: '',
      message: `nothing to remove: ${current.account} keeps ${granted.map(shortScope).join(' ')}`,
    };
  }
  if (!remaining.length) {
    throw new UsageError(`removing ${removing.map(shortScope).join(' ')} leaves ${current.account} no scope at all`, {
      field: 'remove-scopes',
      hint: `to sign the account out, run: opsctl logout --account ${current.account}`,
    });
  }
  if (!current.refresh_token)
    throw new AuthError(`${current.account} has no refresh token to narrow the scopes with`, {
      code: 'no_refresh_token',
      hint: `run: opsctl login --scopes ${remaining.map(shortScope).join(' ')}`,
    });
  const settings = await oauthSettings(ctx);
  if (current.client_id) settings.clientId = current.client_id;
  if (current.token_url && settings.stableId === undefined && !ctx.env.OPSCTL_TOKEN_URL) settings.tokenUrl = current.token_url;
  const { redeemRefreshToken } = await import('../../auth/env-account.js');
  const next = await redeemRefreshToken(ctx, settings, current.refresh_token, current, remaining.join(' '));
  next.account = current.account;
  next.requested_scope = remaining.join(' ');
  next.scope_limit = remaining.join(' ');
  const got = (next.scope ?? '').split(/\s+/).filter(Boolean);
  const kept = removing.filter((s) => got.includes(s));
  if (kept.length)
    ctx.io.warn(
      `${settings.authUrl} still granted ${kept.map(shortScope).join(', ')} (it ignores a narrower scope on refresh); to drop it there, run opsctl logout and opsctl login with fewer scopes`,
    );
  const other = await storeRefreshed(ctx, profile, current, next);
  if (other !== null)
    throw new AuthError('the stored sign-in changed while opsctl was narrowing its scopes (another opsctl ran meanwhile)', { hint: 'run this again' });
  const removed = removing.filter((s) => granted.includes(s) && !got.includes(s));
  return {
    data: { account: current.account, profile, scopes: got, removed },
    text: [`account:   ${current.account}`, `removed:   ${removed.map(shortScope).join(' ') || '(none)'}`, `granted:   ${got.map(shortScope).join(' ')}`].join(
      '\n',
    ),
    message: `${current.account}'s access tokens no longer carry ${removed.map(shortScope).join(' ')} (the grant behind the refresh token stays at the server until opsctl logout)`,
  };
}
