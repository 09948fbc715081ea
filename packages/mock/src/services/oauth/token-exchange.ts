/**
 * RFC 8693 token exchange for keyless CI: a CI provider's OIDC token (GitHub Actions, GitLab) is traded
 * for an access token, as cloud CLIs do. The subject token must be a JWT signed by a key of the trusted
 * key set (`mock serve --trust-jwks FILE`, the embedded mock's OPSCTL_MOCK_TRUST_JWKS), for the audience
 * the mock expects (`--ci-audience`, default `opsctl`), not expired. The access token is the CI identity's:
 * its `email` claim, else `<sub>@ci.invalid`; no refresh token (the CI asks again for each job).
 */
import { SCOPE_BASE } from '@opsctl/shared/oauth.js';
import type { MockState } from '../../store.js';
import { oauthError } from './common.js';
import { mintAccessToken } from './tokens.js';

export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const SUBJECT_TYPES = new Set(['urn:ietf:params:oauth:token-type:jwt', 'urn:ietf:params:oauth:token-type:id_token']);
export const DEFAULT_CI_AUDIENCE = 'opsctl';
const DEFAULT_CI_SCOPES = [`${SCOPE_BASE}/media.readonly`, `${SCOPE_BASE}/drive.labels`];

export interface TokenExchangeOptions {
  /** The key set CI tokens are checked against (a JWKS document); none: the grant is refused. */
  trustJwks?: { keys: unknown[] };
  ciAudience?: string;
  accessTokenTtlSeconds?: number;
}

/** Checks the form and the subject token (outside the store write: jose is loaded here only). */
export async function checkSubjectToken(
  form: URLSearchParams,
  opts: TokenExchangeOptions,
  now: number,
): Promise<{ sub: string; email: string; scopes: string[] }> {
  if (!opts.trustJwks) {
    throw oauthError(400, 'unsupported_grant_type', 'token exchange is off: this server trusts no CI identity provider (start it with --trust-jwks FILE)');
  }
  const subjectToken = form.get('subject_token');
  if (!subjectToken) throw oauthError(400, 'invalid_request', 'Missing required parameter: subject_token');
  const type = form.get('subject_token_type');
  if (!type || !SUBJECT_TYPES.has(type)) {
    throw oauthError(400, 'invalid_request', `subject_token_type must be one of ${[...SUBJECT_TYPES].join(', ')}`);
  }
  const { createLocalJWKSet, jwtVerify } = await import('jose');
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(subjectToken, createLocalJWKSet(opts.trustJwks as never), {
      audience: opts.ciAudience ?? DEFAULT_CI_AUDIENCE,
      clockTolerance: 60,
      currentDate: new Date(now),
      requiredClaims: ['sub', 'exp', 'iss'],
    }));
  } catch (err) {
    // RFC 8693 §2.2.2: a subject token that is invalid or unacceptable "MUST" be answered invalid_request
    throw oauthError(400, 'invalid_request', `the subject token was refused: ${(err as Error).message}`);
  }
  const sub = String(payload.sub);
  const email = typeof payload.email === 'string' ? payload.email : `${sub.replace(/[^\w.-]+/g, '-')}@ci.invalid`;
  const asked = (form.get('scope') ?? '').split(/\s+/).filter(Boolean);
  return { sub, email, scopes: asked.length ? asked : DEFAULT_CI_SCOPES };
}

/** The access token of the exchange (RFC 8693 §2.2.1). */
export function exchangeAnswer(s: MockState, who: { sub: string; email: string; scopes: string[] }, clientId: string, opts: TokenExchangeOptions, now: number) {
  const ttlSeconds = opts.accessTokenTtlSeconds ?? 3600;
  const record = mintAccessToken(s, { client_id: clientId, sub: who.sub, email: who.email, scopes: who.scopes, ttlSeconds }, now);
  return {
    access_token: record.token,
    issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
    token_type: 'Bearer',
    expires_in: ttlSeconds,
    scope: who.scopes.join(' '),
  };
}
