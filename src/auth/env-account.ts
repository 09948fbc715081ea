import type { OAuthTokens } from '../config/credentials.js';
import type { SettingsDeps } from './deps.js';
import { AuthError, UsageError } from '../core/errors.js';
import { REFRESH_MARGIN_MS, toStored } from './session.js';
import { oauthSettings, type OAuthSettings } from './settings.js';

/**
 * The CI account: a refresh token from the environment (OPSCTL_REFRESH_TOKEN, with OPSCTL_CLIENT_ID and
 * OPSCTL_ISSUER or OPSCTL_AUTH_URL naming the client and server), refreshed like a stored account —
 * ahead of expiry, once for concurrent callers — but kept in this process's memory only: nothing of it
 * is ever written to disk. A job longer than an access token's life gets a new one when it needs one.
 */
export const REFRESH_TOKEN_ENV = 'OPSCTL_REFRESH_TOKEN';

/** Per process: the tokens each environment refresh token got last (a rotated refresh token replaces the first). */
const held = new Map<string, Promise<OAuthTokens>>();

export function hasEnvAccount(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env[REFRESH_TOKEN_ENV]?.trim());
}

/** Refreshes `refreshToken` at the profile's server as `settings.clientId`; the ID token (if any) is checked. */
export async function redeemRefreshToken(
  ctx: SettingsDeps,
  settings: OAuthSettings,
  refreshToken: string,
  prev: Partial<OAuthTokens> = {},
  scope?: string,
): Promise<OAuthTokens> {
  const { refreshAccessToken, idTokenClaims } = await import('./token-client.js');
  const res = await refreshAccessToken(ctx, settings, refreshToken, scope);
  if (res.id_token) {
    const { verifyIdToken } = await import('./id-token.js');
    await verifyIdToken(ctx, settings, res.id_token, { sub: idTokenClaims(prev.id_token)?.sub as string | undefined });
  }
  const next = toStored(res, ctx.now(), { ...prev, refresh_token: prev.refresh_token ?? refreshToken }, settings);
  return next;
}

/** The environment account's tokens, refreshed when less than 5 minutes remain (or `force`). */
export async function envTokens(ctx: SettingsDeps, opts: { force?: boolean } = {}): Promise<OAuthTokens> {
  const original = (ctx.env[REFRESH_TOKEN_ENV] ?? '').trim();
  if (!original || /\s/.test(original)) {
    throw new UsageError(`${REFRESH_TOKEN_ENV} must hold one refresh token (no white space)`, {
      field: REFRESH_TOKEN_ENV,
      hint: `set ${REFRESH_TOKEN_ENV} to the refresh token alone, or unset it`,
    });
  }
  const current = await held.get(original)?.catch(() => undefined);
  const now = ctx.now();
  if (current && !opts.force && (current.expires_at === undefined || current.expires_at - now > REFRESH_MARGIN_MS)) return current;
  const p = (async () => {
    const settings = await oauthSettings(ctx);
    ctx.debug(`[auth] refreshing the access token of ${REFRESH_TOKEN_ENV} (kept in memory only)`);
    try {
      return await redeemRefreshToken(ctx, settings, current?.refresh_token ?? original, current ?? {});
    } catch (err) {
      if (err instanceof AuthError && err.code === 'invalid_grant') {
        throw new AuthError(`the refresh token in ${REFRESH_TOKEN_ENV} no longer works (invalid_grant)`, {
          code: 'invalid_grant',
          hint: `put a new refresh token in the job's ${REFRESH_TOKEN_ENV} (opsctl auth token --refresh-token prints one after opsctl login on a workstation); check that OPSCTL_CLIENT_ID and OPSCTL_ISSUER name the client and server it was issued to`,
        });
      }
      throw err;
    }
  })();
  held.set(original, p);
  return p;
}
