import type { OAuthTokens } from '../../config/credentials.js';
import type { Context } from '../../context.js';
import { AuthError, UsageError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './token.spec.js';

export type Options = OptionsOf<typeof spec>;

/** An ID token with less than this left is renewed first (a service checking it must see it valid). */
const ID_TOKEN_MARGIN_MS = 60_000;

/** `opsctl auth token [--account A] [--id-token | --refresh-token]`: a valid token on stdout for scripts (refreshed first when < 5 minutes remain). */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  if (opts.adc !== undefined) {
    if (opts.idToken || opts.refreshToken) throw new UsageError('--adc writes a file: leave --id-token and --refresh-token out', { field: 'adc' });
    return (await import('./adc.js')).writeAdc(ctx, opts.adc, opts.account);
  }
  if (opts.idToken && opts.refreshToken)
    throw new UsageError('--id-token and --refresh-token print different tokens: give one', { field: 'id-token', hint: 'leave one of them out' });
  if (ctx.env.OPSCTL_ACCESS_TOKEN && opts.account === undefined) {
    if (opts.idToken || opts.refreshToken) {
      throw new AuthError(`OPSCTL_ACCESS_TOKEN is set: it is an access token alone, with no ${opts.idToken ? 'ID' : 'refresh'} token`, {
        code: opts.idToken ? 'no_id_token' : 'no_refresh_token',
        hint: 'unset OPSCTL_ACCESS_TOKEN to use the stored sign-in (or OPSCTL_REFRESH_TOKEN, which refreshes itself)',
      });
    }
    return {
      data: { access_token: ctx.env.OPSCTL_ACCESS_TOKEN, source: 'environment', account: null, expires_at: null, scopes: null },
      text: ctx.env.OPSCTL_ACCESS_TOKEN,
    };
  }
  const fromEnv = Boolean(ctx.env.OPSCTL_REFRESH_TOKEN) && opts.account === undefined;
  const fetchTokens = async ({ force }: { force?: boolean } = {}): Promise<OAuthTokens> => {
    if (fromEnv) return (await import('../../auth/env-account.js')).envTokens(ctx, { force });
    return (await import('../../auth/session.js')).freshAccessToken(ctx, { account: opts.account, force });
  };
  let t = await fetchTokens();
  const source = fromEnv ? 'environment_refresh_token' : t.storage === 'keyring' ? 'keyring' : 'file';
  const who = fromEnv ? 'the OPSCTL_REFRESH_TOKEN account' : (t.account ?? 'the active account');
  if (opts.refreshToken) {
    if (!t.refresh_token)
      throw new AuthError(`${who} has no refresh token`, { code: 'no_refresh_token', hint: 'sign in again asking for offline access: opsctl login' });
    return {
      data: { refresh_token: t.refresh_token, client_id: t.client_id ?? null, issuer: t.issuer ?? null, account: t.account ?? null, source },
      text: t.refresh_token,
    };
  }
  if (opts.idToken) {
    const { idTokenClaims } = await import('../../auth/token-client.js');
    const expiry = (x: OAuthTokens) => Number(idTokenClaims(x.id_token)?.exp) * 1000;
    // An ID token near or past its expiry: renew it with the refresh token (the provider sends a new one with the access token).
    if (t.id_token && !(expiry(t) - ctx.now() > ID_TOKEN_MARGIN_MS) && t.refresh_token) t = await fetchTokens({ force: true });
    if (!t.id_token) {
      throw new AuthError(`the provider gave ${who} no ID token`, {
        code: 'no_id_token',
        hint: 'sign in again with the openid scope: opsctl login --scopes openid email …   (a provider issues ID tokens only for OpenID Connect sign-ins)',
      });
    }
    if (!(expiry(t) > ctx.now())) {
      throw new AuthError(`the ID token of ${who} has expired and the provider gave no new one on refresh`, {
        code: 'no_id_token',
        hint: 'run: opsctl login   (with the openid scope)',
      });
    }
    const claims = idTokenClaims(t.id_token) ?? {};
    return {
      data: {
        id_token: t.id_token,
        source,
        account: t.account ?? null,
        audience: claims.aud ?? null,
        issuer: claims.iss ?? null,
        expires_at: new Date(expiry(t)).toISOString(),
      },
      text: t.id_token,
    };
  }
  return {
    data: {
      access_token: t.access_token,
      source,
      account: t.account ?? null,
      expires_at: t.expires_at ? new Date(t.expires_at).toISOString() : null,
      scopes: (t.scope ?? '').split(/\s+/).filter(Boolean),
    },
    text: t.access_token,
  };
}
