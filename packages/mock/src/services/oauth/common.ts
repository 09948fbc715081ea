import { MockError, type MockReply, type MockRequest } from '../../http.js';
import type { ServiceContext } from '../../service.js';
import { emptyDict } from '@opsctl/shared/lookup.js';
import type { MockState } from '../../store.js';
import { escapeHtml, htmlPage } from '@opsctl/shared/html.js';
import type { MockUser, OAuthClient } from './registry.js';
import { oauth } from './tokens.js';
import type { PendingRequest } from './slice-types.js';
export type { PendingRequest } from './slice-types.js';

/** The mock authorization server's knobs (`createMockServer({options: {oauth: …}})`, `mock serve` flags). */
export interface OAuthMockOptions {
  /** Access-token lifetime (default 3600 s). */
  accessTokenTtlSeconds?: number;
  /** Makes every grant time-based: refresh tokens expire after this many seconds (default: until revoked). */
  refreshTokenTtlSeconds?: number;
  /** Live refresh tokens per client/user pair (default 100); the oldest stop working beyond it. */
  refreshTokenLimit?: number;
  /** Live refresh tokens per user across all clients (default 100). */
  userRefreshTokenLimit?: number;
  /** Authorization-code lifetime (default 600 s). */
  codeTtlSeconds?: number;
  /** RFC 8693 token exchange (keyless CI): the key set a CI provider's OIDC tokens are checked against. */
  trustJwks?: { keys: unknown[] };
  /** The audience a CI token must carry for the exchange (default `opsctl`). */
  ciAudience?: string;
  /** A JSON or YAML file with `{clients: [...], users: [...]}` merged into the registry (by id). */
  clientsFile?: string;
  clients?: OAuthClient[];
  users?: MockUser[];
  /**
   * Tests: answer the redirect URI with `state` only after `#` (`state`), as the seed words it, or with
   * every parameter there (`all`); default: in the query, and `state` in the fragment too.
   */
  responseInFragment?: 'state' | 'all';
}

export function oauthOptions(ctx: ServiceContext): OAuthMockOptions {
  return ctx.options.oauth ?? {};
}

/** The client registry (empty, and not stored, before the service's init has filled it in). */
export function clients(state: MockState): Record<string, OAuthClient> {
  return oauth(state).clients ?? emptyDict();
}

/** The users (none before the service's init has filled them in). */
export function users(state: MockState): MockUser[] {
  return oauth(state).users ?? [];
}

export function pending(state: MockState): Record<string, PendingRequest> {
  return (oauth(state).pending ??= emptyDict());
}

/** The OAuth error shape `{error, error_description}` with no-store caching. */
export function errorReply(err: MockError): MockReply {
  const headers: Record<string, string> = { 'cache-control': 'no-store', pragma: 'no-cache' };
  if (err.status === 401) headers['www-authenticate'] = `Basic realm="oauth", error="${err.code}"`;
  return { status: err.status, json: { error: err.code, error_description: err.message }, headers };
}

export function oauthError(status: number, error: string, description: string): MockError {
  return new MockError(status, error, description);
}

/**
 * An error shown to the user on the authorization server's own page, never redirected (the redirect
 * URI cannot be trusted, or the error is for the user, not the app).
 */
export function errorPage(status: number, error: string, description: string): MockReply {
  return {
    status,
    html: htmlPage(
      `Error ${status}: ${error}`,
      `<h1 class="err">Access blocked: authorization error</h1>
<p id="error-description">${escapeHtml(description)}</p>
<p>Error <span id="error-status">${status}</span>: <code id="error-code">${escapeHtml(error)}</code></p>
<p class="muted">If you are the developer of this app, check the request details. Nothing was sent to the app.</p>`,
    ),
    headers: { 'cache-control': 'no-store', 'x-frame-options': 'DENY' },
  };
}

/** The issuer URL as the client reached this server (its own origin). */
export function issuer(req: MockRequest): string {
  const host = String(req.headers.host ?? '127.0.0.1');
  return `http://${host}`;
}

/** A form body with repeated keys kept (URLSearchParams over the raw body). */
export function formParams(req: MockRequest): URLSearchParams {
  if (!req.contentType.includes('application/x-www-form-urlencoded')) return new URLSearchParams();
  return new URLSearchParams(req.rawBody.toString('utf8'));
}
