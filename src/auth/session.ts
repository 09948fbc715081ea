import type { OAuthTokens } from '../config/credentials.js';
import type { SessionDeps } from './deps.js';
import { AuthError, NetworkError } from '../core/errors.js';
import { oauthSettings, type OAuthSettings } from './settings.js';
import { idTokenClaims, INVALID_GRANT_REASONS, refreshAccessToken, type TokenResponse } from './token-client.js';

/** Refresh when less than this remains. */
export const REFRESH_MARGIN_MS = 5 * 60 * 1000;

/** Refreshes in flight, per credential file and profile: concurrent callers in one process share one. */
const inflight = new Map<string, Promise<OAuthTokens>>();

/** Turns a token response into what the credential file keeps. */
export function toStored(res: TokenResponse, now: number, prev: Partial<OAuthTokens>, settings: OAuthSettings, requested?: string[]): OAuthTokens {
  const claims = idTokenClaims(res.id_token);
  const account = (claims?.email as string | undefined) ?? prev.account ?? (claims?.sub as string | undefined);
  return {
    access_token: res.access_token,
    refresh_token: res.refresh_token ?? prev.refresh_token,
    token_type: 'Bearer',
    // RFC 6749 §5.1: no scope in the answer means the requested scope was granted.
    scope: res.scope ?? prev.scope ?? requested?.join(' '),
    requested_scope: requested ? requested.join(' ') : prev.requested_scope,
    id_token: res.id_token ?? prev.id_token,
    expires_at: typeof res.expires_in === 'number' ? now + res.expires_in * 1000 : undefined,
    refresh_expires_at:
      typeof res.refresh_token_expires_in === 'number' ? now + res.refresh_token_expires_in * 1000 : res.refresh_token ? undefined : prev.refresh_expires_at,
    account,
    obtained_at: now,
    client_id: settings.clientId,
    // A URL that dies with the process that signed in (settings.stableId) is not worth keeping.
    token_url: settings.stableId !== undefined ? undefined : settings.tokenUrl,
    revoke_url: settings.stableId !== undefined ? undefined : settings.revokeUrl,
    // The server that minted these tokens: they are sent nowhere else (refresh, revoke, API calls).
    issuer: prev.issuer ?? settings.stableId ?? settings.issuer ?? settings.authUrl,
  };
}

/** The profile's active account (or `account`), with its tokens; undefined when nobody is signed in. */
export async function storedTokens(ctx: SessionDeps, account?: string): Promise<(OAuthTokens & { account: string }) | undefined> {
  const { accountTokens } = await import('./accounts.js');
  return accountTokens(ctx, await ctx.profileName(), account);
}

/**
 * A valid access token from the credential file, refreshed first when less than 5 minutes remain.
 * Concurrent callers in one process wait for the same refresh.
 */
export async function freshAccessToken(ctx: SessionDeps, opts: { force?: boolean; account?: string } = {}): Promise<OAuthTokens> {
  const stored = await storedTokens(ctx, opts.account);
  if (!stored?.access_token) {
    await (await import('../config/profile-check.js')).assertProfileExists(ctx, await ctx.profileName());
    throw new AuthError('not signed in', { hint: 'run: opsctl login   (or set OPSCTL_ACCESS_TOKEN)' });
  }
  // Tokens go only to the server that minted them: a profile pointed at another issuer must sign in again.
  const { assertBoundHere } = await import('./accounts.js');
  await assertBoundHere(ctx, await ctx.profileName(), stored);
  const now = ctx.now();
  const fresh = stored.expires_at === undefined || stored.expires_at - now > REFRESH_MARGIN_MS;
  if (fresh && !opts.force) return stored;
  if (!stored.refresh_token) {
    if (stored.expires_at !== undefined && stored.expires_at > now) return stored;
    throw new AuthError('the access token has expired and there is no refresh token', { hint: 'run: opsctl login' });
  }
  if (stored.refresh_expires_at !== undefined && stored.refresh_expires_at <= now) {
    throw new AuthError('your time-based access has ended: the refresh token expired', {
      code: 'invalid_grant',
      hint: `run: opsctl login   (${INVALID_GRANT_REASONS})`,
    });
  }
  const profile = await ctx.profileName();
  const key = `${(await ctx.credentials()).path}\0${profile}\0${stored.account}`;
  let p = inflight.get(key);
  if (!p) {
    p = (async () => {
      const settings = await oauthSettings(ctx);
      if (stored.client_id) settings.clientId = stored.client_id;
      // Refresh where the tokens came from (the account is bound to this server, checked above), unless
      // OPSCTL_TOKEN_URL says otherwise for this run; a server whose URL does not outlive its process
      // (settings.stableId) listens on a new port in every process, so its current URL is right.
      if (stored.token_url && settings.stableId === undefined && !ctx.env.OPSCTL_TOKEN_URL) settings.tokenUrl = stored.token_url;
      ctx.debug(
        `[auth] refreshing the access token (${stored.expires_at === undefined ? 'forced' : `${Math.round((stored.expires_at - now) / 1000)} s left`})`,
      );
      const res = await refreshAccessToken(ctx, settings, stored.refresh_token as string, stored.scope_limit);
      if (res.id_token) {
        // A refreshed ID token is checked like the first one (minus the nonce): same issuer, audience, user.
        const { verifyIdToken } = await import('./id-token.js');
        try {
          await verifyIdToken(ctx, settings, res.id_token, { sub: idTokenClaims(stored.id_token)?.sub as string | undefined });
        } catch (err) {
          // A token that fails its checks is refused (exit 4, nothing stored). But when the keys or metadata
          // could not be fetched, the provider may already have rotated the refresh token: dropping this answer
          // would lose the sign-in, so keep the new tokens and only the previous (checked) ID token.
          if (err instanceof AuthError) throw err;
          ctx.io.warn(`could not check the refreshed ID token (${(err as Error).message}); keeping the new tokens and the previous ID token`);
          res.id_token = undefined;
        }
      }
      const next = toStored(res, ctx.now(), stored, settings);
      next.requested_scope = stored.requested_scope;
      next.account = stored.account;
      if (stored.scope_limit) next.scope_limit = stored.scope_limit;
      // Another process may have signed out, signed in or stored a rotated refresh token while this refresh
      // was on the wire: never overwrite that; use what is stored now instead.
      const { storeRefreshed } = await import('./accounts.js');
      const other = await storeRefreshed(ctx, profile, stored, next);
      if (other === null) return next;
      if (!other) throw new AuthError('signed out while opsctl was refreshing the access token (opsctl logout ran meanwhile)', { hint: 'run: opsctl login' });
      ctx.debug('[auth] the stored sign-in changed during the refresh; using the stored one');
      return other;
    })();
    inflight.set(key, p);
    p.then(
      () => inflight.delete(key),
      () => inflight.delete(key),
    );
  }
  try {
    return await p;
  } catch (err) {
    // The server could not be reached but the token still works for a while: use it.
    if (err instanceof NetworkError && stored.expires_at !== undefined && stored.expires_at > ctx.now()) {
      ctx.io.warn(
        `could not refresh the access token (${err.message}); using the current one, which expires in ${Math.round((stored.expires_at - ctx.now()) / 1000)} s`,
      );
      return stored;
    }
    throw err;
  }
}
