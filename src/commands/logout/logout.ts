import type { Context } from '../../context.js';
import { OpsError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';

/**
 * `opsctl logout`: revokes the refresh token (which takes its access tokens with it) on the server and
 * always removes the local tokens. A 400 `invalid_token` means the server had already forgotten them.
 */
export async function run(_opts: Record<string, never>, ctx: Context): Promise<CommandResult> {
  const [{ storedTokens }, { oauthSettings }, { revokeToken }] = await Promise.all([
    import('../../auth/session.js'),
    import('../../auth/settings.js'),
    import('../../auth/token-client.js'),
  ]);
  const profile = await ctx.profileName();
  const creds = await ctx.credentials();
  const stored = await storedTokens(ctx);
  if (ctx.env.OPSCTL_ACCESS_TOKEN) ctx.io.warn('OPSCTL_ACCESS_TOKEN is set in the environment: opsctl keeps using it until you unset it');
  if (!stored) return { data: { profile, revoked: false, removed: false }, text: '', message: `not signed in on profile ${profile}: nothing to do` };

  let revoked: 'revoked' | 'already_revoked' | 'unsupported' | 'failed' = 'failed';
  let problem: string | undefined;
  try {
    const settings = await oauthSettings(ctx);
    if (stored.client_id) settings.clientId = stored.client_id;
    revoked = await revokeToken(ctx, settings, stored.refresh_token ?? stored.access_token);
  } catch (err) {
    problem = err instanceof OpsError || err instanceof Error ? err.message : String(err);
  } finally {
    await creds.update(profile, (c) => {
      const { oauth: _gone, ...rest } = c;
      return rest;
    });
  }
  const account = stored.account ? ` ${stored.account}` : '';
  if (revoked === 'unsupported') {
    // Nothing opsctl can do on the server: the local sign-in is gone, the grant lives until it expires.
    ctx.io.warn(`the provider has no revocation endpoint (its metadata names none and revoke_url is not set): could not revoke the tokens on the server`);
    return {
      data: { profile, revoked: false, revocation_supported: false, removed: true },
      text: '',
      message: `Signed out${account} locally (tokens forgotten; not revoked on the server: revoke access at your provider's account page to end the grant there)`,
    };
  }
  if (revoked === 'failed') {
    ctx.io.warn(`could not revoke the tokens on the server: ${problem}`);
    return {
      data: { profile, revoked: false, removed: true, error: problem },
      text: '',
      message: `removed the local tokens of${account || ' this sign-in'}; revoke access at your account's security page to be sure`,
      exitCode: 3,
    };
  }
  return {
    data: { profile, revoked: true, already_revoked: revoked === 'already_revoked', removed: true },
    text: '',
    message: `Signed out${account} (${revoked === 'revoked' ? 'tokens revoked on the server' : 'the server had already revoked them'}; local tokens removed)`,
  };
}
