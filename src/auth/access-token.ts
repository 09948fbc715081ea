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
