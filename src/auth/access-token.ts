import type { SessionDeps } from './deps.js';

/**
 * A valid OAuth access token for the api and labels services: OPSCTL_ACCESS_TOKEN, else the stored
 * token of `opsctl login`, refreshed first when less than 5 minutes remain (once for concurrent
 * callers); `invalid_grant` on refresh is an AuthError (exit 4) saying to run `opsctl login`.
 */
export async function accessToken(ctx: SessionDeps): Promise<string> {
  if (ctx.env.OPSCTL_ACCESS_TOKEN) return ctx.env.OPSCTL_ACCESS_TOKEN;
  // The CI account (OPSCTL_REFRESH_TOKEN): refreshed in memory, never stored.
  if (ctx.env.OPSCTL_REFRESH_TOKEN) return (await (await import('./env-account.js')).envTokens(ctx)).access_token;
  const { freshAccessToken } = await import('./session.js');
  return (await freshAccessToken(ctx)).access_token;
}

/**
 * The access token for one request of `service`: as accessToken, and, for the stored sign-in whose granted
 * scopes are known, refused locally (exit 4, nothing sent) when none of the scopes the request needs was
 * granted (seed 000: disable the features whose scope is missing), unless `force` (--force-request).
 */
export async function accessTokenFor(ctx: SessionDeps, service: string, req: { method: string; path: string }, { force }: { force: boolean }): Promise<string> {
  if (ctx.env.OPSCTL_ACCESS_TOKEN || ctx.env.OPSCTL_REFRESH_TOKEN) return accessToken(ctx);
  const { freshAccessToken } = await import('./session.js');
  const tokens = await freshAccessToken(ctx);
  if (!force && tokens.scope !== undefined) {
    const { neededScopes } = await import('./needed-scopes.js');
    const need = neededScopes(service, req.method, req.path);
    const granted = tokens.scope.split(/\s+/).filter(Boolean);
    if (need && !need.anyOf.some((s) => granted.includes(s))) {
      const { AuthError } = await import('../core/errors.js');
      throw new AuthError(
        `${tokens.account ?? 'the signed-in account'} was not granted a scope to ${need.doing} (one of: ${need.anyOf.map((s) => s.replace(/^.*\//, '')).join(', ')}): nothing was sent`,
        {
          code: 'scope_not_granted',
          field: 'scope',
          hint: `run: opsctl auth refresh --scopes ${need.ask}   (or add --force-request to send it anyway and let the server answer)`,
        },
      );
    }
  }
  return tokens.access_token;
}

/**
 * A new access token after a service refused `refused` as expired before its time (a server clock ahead
 * of ours): refreshed once, forced, whatever the stored expiry says. Undefined when there is nothing to
 * refresh with (OPSCTL_ACCESS_TOKEN, no refresh token) or the refresh gave the same token back; a
 * refresh the server refuses is the AuthError of a normal refresh (exit 4, run opsctl login).
 */
export async function renewedAccessToken(ctx: SessionDeps, refused: string): Promise<string | undefined> {
  if (ctx.env.OPSCTL_ACCESS_TOKEN) return undefined;
  ctx.debug('[auth] the service refused the access token as expired (invalid_token): refreshing it once');
  const token = ctx.env.OPSCTL_REFRESH_TOKEN
    ? (await (await import('./env-account.js')).envTokens(ctx, { force: true })).access_token
    : // without a refresh token this is the stored token again (undefined below)
      (await (await import('./session.js')).freshAccessToken(ctx, { force: true })).access_token;
  return token && token !== refused ? token : undefined;
}
