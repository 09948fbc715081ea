import type { Http } from './deps.js';
import { AuthError, OpsError } from '../core/errors.js';
import { assertSafeTransport } from '../core/http.js';
import type { OAuthSettings } from './settings.js';

/** A token endpoint response (RFC 6749 §5.1 plus the seed's fields). */
export interface TokenResponse {
  access_token: string;
  expires_in?: number;
  refresh_token?: string;
  refresh_token_expires_in?: number;
  scope?: string;
  token_type: string;
  id_token?: string;
}

/** An OAuth error answer from the token or revocation endpoint. */
export class OAuthError extends OpsError {
  constructor(
    readonly error: string,
    readonly description: string | undefined,
    readonly status: number,
    hint?: string,
  ) {
    super(`${error}${description ? `: ${description}` : ''}`, status === 400 || status === 401 ? 4 : 1, { code: error, hint });
  }
}

/** Why a refresh token stops working (the seed's reasons for `invalid_grant`). */
export const INVALID_GRANT_REASONS =
  'the refresh token expired (time-based access), you or an administrator revoked access, the account was deleted or disabled, or newer sign-ins retired it (too many refresh tokens)';

async function post(ctx: Http, url: string, form: Record<string, string | undefined>): Promise<{ status: number; data: unknown }> {
  assertSafeTransport(new URL(url), 'auth');
  const http = await ctx.http('auth');
  const res = await http.request<unknown>({ method: 'POST', path: url, form, auth: false, okStatuses: [400, 401, 403] });
  return { status: res.status, data: res.data };
}

/** The fields of a JSON object answer (an answer that is no object has none). */
function fieldsOf(data: unknown): Readonly<Record<string, unknown>> {
  return data !== null && typeof data === 'object' ? (data as Record<string, unknown>) : {};
}

function oauthFailure(status: number, data: unknown, what: string): OAuthError {
  const f = fieldsOf(data);
  const error = typeof f.error === 'string' ? f.error : `http_${status}`;
  const description = typeof f.error_description === 'string' ? f.error_description : typeof data === 'string' ? data.slice(0, 200) : undefined;
  return new OAuthError(error, description ?? `${what} failed with HTTP ${status}`, status);
}

function checkTokenResponse(data: unknown, settings: OAuthSettings): TokenResponse {
  const f = fieldsOf(data);
  if (typeof f.access_token !== 'string' || !f.access_token) {
    throw new OpsError(`the token endpoint ${settings.tokenUrl} answered without an access_token`, 1, {
      hint: 'check the token_url setting (opsctl config get token_url)',
    });
  }
  if (typeof f.token_type !== 'string' || f.token_type.toLowerCase() !== 'bearer') {
    throw new OpsError(`the token endpoint returned token_type "${String(f.token_type)}", not Bearer`, 1);
  }
  // access_token and token_type checked above; the optional fields are read where they are used
  return data as TokenResponse;
}

export async function exchangeCode(ctx: Http, settings: OAuthSettings, code: string, verifier: string, redirectUri: string): Promise<TokenResponse> {
  const { status, data } = await post(ctx, settings.tokenUrl, {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: redirectUri,
    client_id: settings.clientId,
    client_secret: settings.clientSecret,
  });
  if (status >= 400) {
    const err = oauthFailure(status, data, 'the code exchange');
    throw new AuthError(`sign-in failed at the token endpoint: ${err.message}`, {
      code: err.error,
      hint: err.error === 'invalid_client' ? 'check client_id and client_secret (opsctl config get client_id)' : 'run opsctl login again',
    });
  }
  return checkTokenResponse(data, settings);
}

/**
 * RFC 8693 token exchange (keyless CI): the CI provider's OIDC token (a JWT) for an access token of this
 * provider. A refusal is an AuthError (exit 4) with the server's error and description.
 */
export async function exchangeSubjectToken(ctx: Http, settings: OAuthSettings, subjectToken: string, scopes: string[]): Promise<TokenResponse> {
  const { status, data } = await post(ctx, settings.tokenUrl, {
    grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
    subject_token: subjectToken,
    subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
    requested_token_type: 'urn:ietf:params:oauth:token-type:access_token',
    scope: scopes.length ? scopes.join(' ') : undefined,
    client_id: settings.clientId,
    client_secret: settings.clientSecret,
  });
  if (status >= 400) {
    const err = oauthFailure(status, data, 'the token exchange');
    throw new AuthError(`the provider refused the CI token: ${err.message}`, {
      code: err.error,
      hint:
        err.error === 'unsupported_grant_type'
          ? 'the provider does not do RFC 8693 token exchange for this client: enable it there (or use OPSCTL_REFRESH_TOKEN)'
          : "check the CI token's audience and expiry, and that the provider trusts the CI's issuer",
    });
  }
  return checkTokenResponse(data, settings);
}

/** Refreshes; `invalid_grant` becomes an AuthError telling the user to sign in again. */
export async function refreshAccessToken(ctx: Http, settings: OAuthSettings, refreshToken: string, scope?: string): Promise<TokenResponse> {
  const { status, data } = await post(ctx, settings.tokenUrl, {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    // RFC 6749 §6: a narrower scope than granted (auth refresh --remove-scopes); absent, the whole grant.
    scope,
    client_id: settings.clientId,
    client_secret: settings.clientSecret,
  });
  if (status >= 400) {
    const err = oauthFailure(status, data, 'the refresh');
    if (err.error === 'invalid_grant') {
      throw new AuthError(`your sign-in is no longer valid (invalid_grant: ${err.description})`, {
        code: 'invalid_grant',
        hint: `run: opsctl login   (a refresh fails like this when ${INVALID_GRANT_REASONS})`,
      });
    }
    throw new AuthError(`refreshing the access token failed: ${err.message}`, {
      code: err.error,
      hint: err.error === 'invalid_client' ? 'check client_id and client_secret (opsctl config get client_id), then run opsctl login' : 'run: opsctl login',
    });
  }
  return checkTokenResponse(data, settings);
}

/** One poll of a device sign-in (RFC 8628 §3.4): the tokens, or the OAuth error the token endpoint answered (pending, slow_down…). */
export async function pollDeviceToken(
  ctx: Http,
  settings: OAuthSettings,
  deviceCode: string,
): Promise<{ tokens: TokenResponse } | { error: string; description?: string; status: number }> {
  const { status, data } = await post(ctx, settings.tokenUrl, {
    grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
    device_code: deviceCode,
    client_id: settings.clientId,
    client_secret: settings.clientSecret,
  });
  if (status >= 400) {
    const err = oauthFailure(status, data, 'the device sign-in');
    return { error: err.error, description: err.description, status };
  }
  return { tokens: checkTokenResponse(data, settings) };
}

/** RFC 8628 §3.1: asks the device authorization endpoint for a user code. */
export async function requestDeviceCode(ctx: Http, settings: OAuthSettings, url: string, scopes: string[]): Promise<Record<string, unknown>> {
  const { status, data } = await post(ctx, url, { client_id: settings.clientId, client_secret: settings.clientSecret, scope: scopes.join(' ') });
  if (status >= 400) {
    const err = oauthFailure(status, data, 'the device authorization request');
    throw new AuthError(`the provider refused the device sign-in: ${err.message}`, {
      code: err.error,
      hint:
        err.error === 'invalid_client' || err.error === 'unauthorized_client'
          ? `enable the device authorization grant for client ${settings.clientId} at the provider, or sign in with a browser: opsctl login --no-browser`
          : err.error === 'invalid_scope'
            ? 'ask only for scopes the provider knows: opsctl login --device --scopes …'
            : 'run opsctl login --device again, or sign in with a browser: opsctl login --no-browser',
    });
  }
  return fieldsOf(data);
}

export type RevokeOutcome = 'revoked' | 'already_revoked' | 'unsupported';

/** RFC 7009 revocation; the seed's 400 `invalid_token` means the token was already revoked or expired. */
export async function revokeToken(ctx: Http, settings: Pick<OAuthSettings, 'revokeUrl' | 'clientId' | 'clientSecret'>, token: string): Promise<RevokeOutcome> {
  // A provider whose metadata names no revocation endpoint (and none set by hand) cannot revoke.
  if (!settings.revokeUrl) return 'unsupported';
  const { status, data } = await post(ctx, settings.revokeUrl, { token, client_id: settings.clientId, client_secret: settings.clientSecret });
  if (status === 200) return 'revoked';
  if (status === 400 && fieldsOf(data).error === 'invalid_token') return 'already_revoked';
  throw oauthFailure(status, data, 'revocation');
}

/** The claims of an ID token, read without verifying the signature (it came straight from the token endpoint over TLS). */
export function idTokenClaims(idToken: string | undefined): Record<string, unknown> | undefined {
  if (!idToken) return undefined;
  try {
    return JSON.parse(Buffer.from(idToken.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}
