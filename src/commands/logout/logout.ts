import type { Context } from '../../context.js';
import { OpsError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './logout.spec.js';
import { authServerId } from '../../config/server-id.js';

export type Options = OptionsOf<typeof spec>;

/**
 * `opsctl logout [--account A]`: revokes the account's refresh token (which takes its access tokens with
 * it) at the server that minted it, and always forgets the account locally; the next account becomes
 * active. A 400 `invalid_token` means the server had already forgotten them.
 */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  const [{ listAccounts, withSecrets, removeAccount, unknownAccount, accountHere, serverHere }, { oauthSettings }, { revokeToken }] = await Promise.all([
    import('../../auth/accounts.js'),
    import('../../auth/settings.js'),
    import('../../auth/token-client.js'),
  ]);
  const profile = await ctx.profileName();
  const { accounts, active } = await listAccounts(ctx, profile);
  if (ctx.env.OPSCTL_ACCESS_TOKEN) ctx.io.warn('OPSCTL_ACCESS_TOKEN is set in the environment: opsctl keeps using it until you unset it');
  const record = accountHere(accounts, opts.account, active, await serverHere(ctx, profile));
  if (!record) {
    await (await import('../../config/profile-check.js')).assertProfileExists(ctx, profile);
    if (opts.account !== undefined) throw unknownAccount(profile, opts.account, accounts);
    // a tracker token is a credential too, but not a sign-in: name the command that forgets it
    const tracker = Boolean((await (await ctx.credentials()).get(profile)).tracker);
    const also = tracker
      ? ` (a tracker token is stored: opsctl auth forget-token --service tracker${ctx.globals.profile === undefined ? '' : ` --profile ${profile}`} forgets it)`
      : '';
    return { data: { profile, revoked: false, removed: false }, text: '', message: `not signed in on profile ${profile}: nothing to do${also}` };
  }

  let revoked: 'revoked' | 'already_revoked' | 'unsupported' | 'failed' = 'failed';
  let problem: string | undefined;
  let nowActive: string | undefined;
  try {
    const stored = await withSecrets(ctx, profile, record);
    const here = authServerId(ctx.env, profile, (await ctx.config()).profile(profile));
    if (stored.issuer && here !== stored.issuer) {
      // The profile points elsewhere now: revoke only where the tokens came from, never at the new server.
      if (!stored.revoke_url)
        throw new OpsError(`the tokens came from ${stored.issuer}, which the profile no longer points at, and no revocation endpoint of it was recorded`, 1);
      revoked = await revokeToken(ctx, { clientId: stored.client_id ?? '', revokeUrl: stored.revoke_url }, stored.refresh_token ?? stored.access_token);
    } else {
      const settings = await oauthSettings(ctx);
      if (stored.client_id) settings.clientId = stored.client_id;
      if (stored.revoke_url && settings.stableId === undefined && !ctx.env.OPSCTL_REVOKE_URL) settings.revokeUrl = stored.revoke_url;
      revoked = await revokeToken(ctx, settings, stored.refresh_token ?? stored.access_token);
    }
  } catch (err) {
    problem = err instanceof OpsError || err instanceof Error ? err.message : String(err);
  } finally {
    nowActive = await removeAccount(ctx, profile, record);
  }
  const account = ` ${record.account}`;
  const next = nowActive ? ` Active account now: ${nowActive}.` : '';
  const data = { profile, account: record.account, active: nowActive ?? null };
  if (revoked === 'unsupported') {
    // Nothing opsctl can do on the server: the local sign-in is gone, the grant lives until it expires.
    ctx.io.warn(`the provider has no revocation endpoint (its metadata names none and revoke_url is not set): could not revoke the tokens on the server`);
    return {
      data: { ...data, revoked: false, revocation_supported: false, removed: true },
      text: '',
      message: `Signed out${account} locally (tokens forgotten; not revoked on the server: revoke access at your provider's account page to end the grant there).${next}`,
    };
  }
  if (revoked === 'failed') {
    ctx.io.warn(`could not revoke the tokens on the server: ${problem}`);
    return {
      data: { ...data, revoked: false, removed: true, error: problem },
      text: '',
      message: `removed the local tokens of${account}; revoke access at your account's security page to be sure.${next}`,
      exitCode: 3,
    };
  }
  return {
    data: { ...data, revoked: true, already_revoked: revoked === 'already_revoked', removed: true },
    text: '',
    message: `Signed out${account} (${revoked === 'revoked' ? 'tokens revoked on the server' : 'the server had already revoked them'}; local tokens removed).${next}`,
  };
}
