import { randomBytes } from 'node:crypto';
import type { MockState } from '../../store.js';

/**
 * The contract between the mock authorization server and the services that accept its bearer tokens
 * (the data API and the label service): access tokens live in `state.oauth.accessTokens`.
 */
export interface AccessTokenRecord {
  token: string;
  client_id: string;
  /** The user's subject id and e-mail. */
  sub: string;
  email: string;
  /** Granted scopes. */
  scopes: string[];
  expires_at: number;
  revoked: boolean;
  /** The refresh token this access token was issued with, if any (revocation cascades). */
  refresh_token?: string;
}

export interface OAuthSlice {
  accessTokens: Record<string, AccessTokenRecord>;
  [key: string]: any;
}

export function oauth(state: MockState): OAuthSlice {
  state.oauth ??= { accessTokens: {} };
  state.oauth.accessTokens ??= {};
  return state.oauth as OAuthSlice;
}

export type TokenCheck =
  | { ok: true; record: AccessTokenRecord }
  | { ok: false; reason: 'missing' | 'unknown' | 'expired' | 'revoked' };

/** Looks a bearer token up: unknown, expired and revoked tokens are refused with the reason. */
export function checkAccessToken(state: MockState, token: string | undefined, now: number): TokenCheck {
  if (!token) return { ok: false, reason: 'missing' };
  const record = (state.oauth?.accessTokens as Record<string, AccessTokenRecord> | undefined)?.[token];
  if (!record) return { ok: false, reason: 'unknown' };
  if (record.revoked) return { ok: false, reason: 'revoked' };
  if (record.expires_at <= now) return { ok: false, reason: 'expired' };
  return { ok: true, record };
}

/** Issues an access token (the token endpoint uses this; tests use it to mint a token directly). */
export function mintAccessToken(
  state: MockState,
  fields: Omit<AccessTokenRecord, 'token' | 'revoked' | 'expires_at'> & { ttlSeconds: number },
  now: number,
): AccessTokenRecord {
  const { ttlSeconds, ...rest } = fields;
  const record: AccessTokenRecord = {
    ...rest,
    token: `ya29.${randomBytes(24).toString('base64url')}`,
    expires_at: now + ttlSeconds * 1000,
    revoked: false,
  };
  oauth(state).accessTokens[record.token] = record;
  return record;
}

/** The bearer token of a request: `Authorization: Bearer …` or the `access_token` query parameter. */
export function bearerToken(headers: Record<string, string | string[] | undefined>, query: URLSearchParams): string | undefined {
  const h = headers.authorization;
  const value = Array.isArray(h) ? h[0] : h;
  const m = value ? /^Bearer\s+(\S+)$/i.exec(value) : null;
  return m?.[1] ?? query.get('access_token') ?? undefined;
}
