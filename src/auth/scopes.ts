import { SCOPE_BASE } from '@opsctl/shared/oauth.js';

/** The scope identifier prefix ({scope_base} in the seed), shared with the mock authorization server. */
export { SCOPE_BASE };

/** What `opsctl login` asks for when neither --scopes nor the profile's `scopes` says otherwise. */
export const DEFAULT_SCOPES = ['openid', 'email', `${SCOPE_BASE}/media.readonly`, `${SCOPE_BASE}/drive.labels`];

/** What `opsctl login` asks an issuer (any provider) for by default: who you are, and a refresh token. */
export const DEFAULT_ISSUER_SCOPES = ['openid', 'email', 'offline_access'];

/** OpenID Connect's own scopes (Core §5.4, §11): never expanded. */
const BARE = new Set(['openid', 'email', 'profile', 'address', 'phone', 'offline_access']);

/** `media.readonly` → `https://www.googleapis.com/auth/media.readonly`; full URIs and identity scopes stay. */
export function expandScope(scope: string): string {
  if (BARE.has(scope) || scope.includes(':') || scope.includes('/')) return scope;
  return `${SCOPE_BASE}/${scope}`;
}

/**
 * Splits `--scopes` values (space- or comma-separated, repeatable), expands and de-duplicates them.
 * `expand: false` (a profile with an issuer: any provider) keeps every scope as written.
 */
export function parseScopes(values: string[] | string | undefined, opts: { expand?: boolean } = {}): string[] {
  const list = (Array.isArray(values) ? values : values ? [values] : []).flatMap((v) => v.split(/[\s,]+/)).filter(Boolean);
  return [...new Set(opts.expand === false ? list : list.map(expandScope))];
}

/** The requested scopes the server did not grant. */
export function missingScopes(requested: string[], granted: string[]): string[] {
  const g = new Set(granted);
  return requested.filter((s) => !g.has(s));
}

/** Short display form: drop the common prefix. */
export function shortScope(scope: string): string {
  return scope.startsWith(`${SCOPE_BASE}/`) ? scope.slice(SCOPE_BASE.length + 1) : scope;
}
