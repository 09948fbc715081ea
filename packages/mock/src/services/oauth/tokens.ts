import { randomBytes } from 'node:crypto';
import { dict, own, type Dict } from '@opsctl/shared/lookup.js';
import { sliceField, type MockState } from '../../store.js';
import type { MockUser } from './registry.js';
import type { ConsoleClient, PendingRequest, SecEventsSlice, SigningKey, StoreListings } from './slice-types.js';

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

/** A refresh token: one grant of a user to a client. */
export interface RefreshTokenRecord {
  token: string;
  client_id: string;
  sub: string;
  email: string;
  scopes: string[];
  issued_at: number;
  /** Time-based access only: epoch ms; null means "until revoked". */
  expires_at: number | null;
  revoked: boolean;
  /** Why it stopped working: `revoked`, `limit` (too many refresh tokens), `code_replay`. */
  revoked_reason?: string;
}

/** An authorization code: single-use, short-lived, bound to client, redirect URI and challenge. */
export interface CodeRecord {
  code: string;
  client_id: string;
  redirect_uri: string;
  sub: string;
  email: string;
  scopes: string[];
  code_challenge?: string;
  code_challenge_method?: 'S256' | 'plain';
  nonce?: string;
  /** Seconds of time-based access the user chose (absent: until revoked). */
  access_seconds?: number;
  expires_at: number;
  used: boolean;
  /** Tokens issued from this code (revoked if the code is replayed). */
  refresh_token?: string;
}

/** The oauth service's slice of the mock state (`state.oauth`). */
export interface OAuthSlice {
  accessTokens: Dict<AccessTokenRecord>;
  refreshTokens: Dict<RefreshTokenRecord>;
  codes: Dict<CodeRecord>;
  /** The registry and pending sign-ins: filled in by the service's init (a slice made only to mint tokens has none). */
  clients?: Dict<ConsoleClient>;
  users?: MockUser[];
  pending?: Dict<PendingRequest>;
  /** The ID-token signing key, made on first need. */
  signing?: SigningKey;
  /** Security-event receivers and deliveries (the developer console's). */
  secevents?: SecEventsSlice;
  /** The store listings ownership is verified against (the developer console's). */
  store?: StoreListings;
}

/** The slice, made (with its token maps) when missing; every map keyed by id is made prototype-free. */
export function oauth(state: MockState): OAuthSlice {
  const slice = (state.oauth ??= { accessTokens: {} }) as Partial<OAuthSlice>;
  dict((slice.accessTokens ??= {}));
  dict((slice.refreshTokens ??= {}));
  dict((slice.codes ??= {}));
  // The client registry and pending sign-ins are keyed by id too (filled in by the service's init).
  if (slice.clients) dict(slice.clients);
  if (slice.pending) dict(slice.pending);
  return slice as OAuthSlice;
}

/** One field of the slice as stored, without making anything (a read must not change the state). */
export function storedField<K extends keyof OAuthSlice>(state: MockState, key: K): OAuthSlice[K] | undefined {
  return sliceField(state, 'oauth', key) as OAuthSlice[K] | undefined;
}

export type RefreshCheck = { ok: true; record: RefreshTokenRecord } | { ok: false; reason: 'missing' | 'unknown' | 'expired' | 'revoked' };

export function checkRefreshToken(state: MockState, token: string | undefined, now: number): RefreshCheck {
  if (!token) return { ok: false, reason: 'missing' };
  const record = own(storedField(state, 'refreshTokens'), token);
  if (!record) return { ok: false, reason: 'unknown' };
  if (record.revoked) return { ok: false, reason: 'revoked' };
  if (record.expires_at !== null && record.expires_at <= now) return { ok: false, reason: 'expired' };
  return { ok: true, record };
}

/** Issues a refresh token. The caller enforces the per-client/user cap with `enforceRefreshLimit`. */
export function mintRefreshToken(
  state: MockState,
  fields: Omit<RefreshTokenRecord, 'token' | 'revoked' | 'issued_at' | 'expires_at'> & { ttlSeconds?: number },
  now: number,
): RefreshTokenRecord {
  const { ttlSeconds, ...rest } = fields;
  const record: RefreshTokenRecord = {
    ...rest,
    token: `1//${randomBytes(32).toString('base64url')}`,
    issued_at: now,
    expires_at: ttlSeconds ? now + ttlSeconds * 1000 : null,
    revoked: false,
  };
  oauth(state).refreshTokens[record.token] = record;
  return record;
}

/**
 * The cap on refresh tokens: at most `perClient` live tokens per client/user pair and `perUser` per user
 * across all clients; the oldest beyond the cap stop working. Returns the tokens it retired.
 */
export function enforceRefreshLimit(state: MockState, sub: string, clientId: string, perClient: number, perUser: number, now: number): string[] {
  const live = Object.values(oauth(state).refreshTokens)
    .filter((r) => r.sub === sub && !r.revoked && (r.expires_at === null || r.expires_at > now))
    .sort((a, b) => a.issued_at - b.issued_at || (a.token < b.token ? -1 : 1));
  const retired: string[] = [];
  const retire = (r: RefreshTokenRecord) => {
    if (r.revoked) return;
    revokeGrant(state, r.token, 'limit');
    retired.push(r.token);
  };
  const mine = live.filter((r) => r.client_id === clientId);
  for (const r of mine.slice(0, Math.max(0, mine.length - perClient))) retire(r);
  const left = live.filter((r) => !r.revoked);
  for (const r of left.slice(0, Math.max(0, left.length - perUser))) retire(r);
  return retired;
}

/** Revokes a refresh token and every access token issued with it. */
export function revokeGrant(state: MockState, refreshToken: string, reason = 'revoked'): void {
  const slice = oauth(state);
  const rt = own(slice.refreshTokens, refreshToken);
  if (rt) {
    rt.revoked = true;
    rt.revoked_reason ??= reason;
  }
  for (const at of Object.values(slice.accessTokens)) if (at.refresh_token === refreshToken) at.revoked = true;
}

export type TokenCheck = { ok: true; record: AccessTokenRecord } | { ok: false; reason: 'missing' | 'unknown' | 'expired' | 'revoked' };

/** Looks a bearer token up: unknown, expired and revoked tokens are refused with the reason. */
export function checkAccessToken(state: MockState, token: string | undefined, now: number): TokenCheck {
  if (!token) return { ok: false, reason: 'missing' };
  const record = own(storedField(state, 'accessTokens'), token);
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
