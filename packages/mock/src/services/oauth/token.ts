import { createHash, timingSafeEqual } from 'node:crypto';
import { MockError, type MockReply, type MockRequest } from '../../http.js';
import { bearerChallenge } from '../../bearer.js';
import type { Route, ServiceContext } from '../../service.js';
import { own } from '@opsctl/shared/lookup.js';
import { itemAt } from '../../arrays.js';
import type { MockState } from '../../store.js';
import { clients, formParams, issuer, oauthError, oauthOptions, users } from './common.js';
import { jwks, signingKey, signJwt } from './jwt.js';
import { checkSubjectToken, exchangeAnswer, TOKEN_EXCHANGE } from './token-exchange.js';
import type { LazyConsole } from './admin-lazy.js';
import { DEVICE_CODE_PATH, DEVICE_GRANT, deviceCodeGrant, slowDownPolls } from './device.js';
import {
  consoleGate,
  findClient,
  gateReady,
  hasReceivers,
  integrityEvidence,
  loadIntegrityGate,
  makeSigningKey,
  signingKeyMissing,
  sweepUnused,
  unusedDays,
} from './console-core.js';
import { clientUsable, IDENTITY_SCOPES, KNOWN_SCOPES, type OAuthClient } from './registry.js';
import {
  bearerToken,
  checkAccessToken,
  checkRefreshToken,
  enforceRefreshLimit,
  mintAccessToken,
  mintRefreshToken,
  oauth,
  revokeGrant,
  storedField,
  type AccessTokenRecord,
  type RefreshTokenRecord,
} from './tokens.js';

const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
const PUBLIC_TYPES = new Set(['mobile_a', 'mobile_b', 'extension']);

/** `/token`, `/revoke`, `/tokeninfo`, discovery, JWKS and userinfo. */
export function tokenRoutes(ctx: ServiceContext, admin: Pick<LazyConsole, 'kick'>): Route[] {
  return [
    { method: 'POST', path: '/token', handler: (req) => token(ctx, req) },
    // RFC 7009 §2.1: revocation is a POST (a GET is 405 with Allow: POST, from the pipeline)
    { method: 'POST', path: '/revoke', handler: (req) => revoke(ctx, req, admin) },
    { method: 'GET', path: '/tokeninfo', handler: (req) => tokeninfo(ctx, req) },
    { method: 'GET', path: '/oauth2/v3/certs', handler: async () => ({ status: 200, json: jwks(await ctx.store.read((s) => storedField(s, 'signing'))) }) },
    { method: 'GET', path: '/oauth2/v3/userinfo', handler: (req) => userinfo(ctx, req) },
    { method: 'POST', path: '/oauth2/v3/userinfo', handler: (req) => userinfo(ctx, req) },
    { method: 'GET', path: '/.well-known/openid-configuration', handler: (req) => ({ status: 200, json: discovery(issuer(req), oauthOptions(ctx)) }) },
    // RFC 8414: the OAuth 2.0 authorization server metadata, beside the OpenID one (the same document)
    {
      method: 'GET',
      path: '/.well-known/oauth-authorization-server',
      handler: (req) => ({ status: 200, json: discovery(issuer(req), oauthOptions(ctx)) }),
    },
  ];
}

/**
 * The metadata (OpenID Discovery, RFC 8414): what the server does, and nothing it refuses. The token-exchange
 * grant is listed only when it is on (a trusted CI key set: --trust-jwks); `plain` PKCE is listed because the
 * authorization and token endpoints take it (the seed: the default method when none is given).
 */
export function discovery(iss: string, opts: { trustJwks?: unknown } = {}): Record<string, unknown> {
  return {
    issuer: iss,
    authorization_endpoint: `${iss}/o/oauth2/v2/auth`,
    token_endpoint: `${iss}/token`,
    revocation_endpoint: `${iss}/revoke`,
    device_authorization_endpoint: `${iss}${DEVICE_CODE_PATH}`,
    userinfo_endpoint: `${iss}/oauth2/v3/userinfo`,
    jwks_uri: `${iss}/oauth2/v3/certs`,
    response_types_supported: ['code'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['RS256'],
    scopes_supported: Object.keys(KNOWN_SCOPES),
    token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic', 'none'],
    code_challenge_methods_supported: ['plain', 'S256'],
    grant_types_supported: ['authorization_code', 'refresh_token', DEVICE_GRANT, ...(opts.trustJwks ? [TOKEN_EXCHANGE] : [])],
    claims_supported: ['aud', 'email', 'email_verified', 'exp', 'iat', 'iss', 'name', 'sub'],
  };
}

/** client_id/client_secret from the form body or HTTP Basic (RFC 6749 §2.3.1). */
function clientCredentials(req: MockRequest, form: URLSearchParams): { id?: string; secret?: string } {
  const auth = String(req.headers.authorization ?? '');
  const basic = /^Basic\s+(\S+)$/i.exec(auth);
  if (basic) {
    const text = Buffer.from(itemAt(basic, 1), 'base64').toString('utf8');
    const colon = text.indexOf(':');
    if (colon < 0) throw oauthError(401, 'invalid_client', 'HTTP Basic client authentication needs client_id:client_secret.');
    const dec = (s: string) => {
      try {
        return decodeURIComponent(s.replace(/\+/g, ' '));
      } catch {
        throw oauthError(401, 'invalid_client', 'HTTP Basic client credentials must be form-urlencoded (RFC 6749 §2.3.1); this one has a malformed % escape.');
      }
    };
    return { id: dec(text.slice(0, colon)), secret: dec(text.slice(colon + 1)) };
  }
  return { id: form.get('client_id') ?? undefined, secret: form.get('client_secret') ?? undefined };
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

type Outcome = { ok: true; json: Record<string, unknown> } | { ok: false; err: MockError };
const fail = (status: number, error: string, description: string): Outcome => ({ ok: false, err: oauthError(status, error, description) });

async function token(ctx: ServiceContext, req: MockRequest): Promise<MockReply> {
  if (!req.contentType.includes('application/x-www-form-urlencoded')) {
    throw oauthError(400, 'invalid_request', 'the token endpoint takes Content-Type: application/x-www-form-urlencoded');
  }
  const form = formParams(req);
  // RFC 6749 §3.2: "Request and response parameters MUST NOT be included more than once" (invalid_request)
  const doubled = [...new Set([...form.keys()].filter((k, i, all) => all.indexOf(k) !== i))];
  if (doubled.length) {
    throw oauthError(400, 'invalid_request', `Parameter${doubled.length > 1 ? 's' : ''} given more than once: ${doubled.join(', ')} (each may appear once)`);
  }
  const grantType = form.get('grant_type');
  if (!grantType) throw oauthError(400, 'invalid_request', 'Missing required parameter: grant_type');
  if (grantType === TOKEN_EXCHANGE) {
    // keyless CI (RFC 8693): the CI's OIDC token is the credential; a client_id, if sent, is recorded
    const opts = oauthOptions(ctx);
    const now = ctx.now();
    const who = await checkSubjectToken(form, opts, now);
    const clientId = form.get('client_id') ?? 'ci-token-exchange';
    return { status: 200, json: await ctx.store.write((s) => exchangeAnswer(s, who, clientId, opts, now)), headers: { 'cache-control': 'no-store' } };
  }
  if (grantType !== 'authorization_code' && grantType !== 'refresh_token' && grantType !== DEVICE_GRANT) {
    throw oauthError(400, 'unsupported_grant_type', `Invalid grant_type: ${grantType}`);
  }
  const creds = clientCredentials(req, form);
  if (!creds.id) throw oauthError(400, 'invalid_request', 'Missing required parameter: client_id');
  const now = ctx.now();
  const opts = oauthOptions(ctx);
  const iss = issuer(req);

  // An ID token is signed inside the write: a missing signing key is made first, outside the state file's
  // lock (an RSA key takes a while), as is the integrity module for a client whose check is switched on.
  // The write changes nothing when one of them must come first, and is tried again after it.
  const attempt = () =>
    ctx.store.write((s): Outcome | 'make-key' | 'load-integrity' => {
      if (signingKeyMissing(s)) return 'make-key';
      if (!gateReady(findClient(s, creds.id as string))) return 'load-integrity';
      return grant(s);
    });
  const grant = (s: MockState): Outcome => {
    sweepUnused(s, now, unusedDays(ctx));
    const client = own(clients(s), creds.id as string);
    if (!client) return fail(401, 'invalid_client', 'The OAuth client was not found.');
    const usable = clientUsable(client, now);
    if (!usable.ok) return fail(401, 'deleted_client', usable.description);
    // Mobile and extension clients have no secret and none is checked; the others must send theirs.
    if (!PUBLIC_TYPES.has(client.type) && client.client_secret) {
      if (!creds.secret) return fail(401, 'invalid_client', 'client_secret is missing.');
      if (!sameSecret(creds.secret, client.client_secret)) return fail(401, 'invalid_client', 'Unauthorized: the client secret is wrong.');
    }
    // The console's side: last use, and the integrity check of mobile B clients.
    const refused = consoleGate(s, client, integrityEvidence(req.headers, form), now);
    if (refused) return fail(refused.status, refused.error, refused.description);
    prune(s, now);
    if (grantType === DEVICE_GRANT) {
      const device = deviceCodeGrant(s, client.client_id, form, now, slowDownPolls(ctx.options.oauth));
      return device.ok ? exchangeCode(s, client, device.form, now, opts, iss) : device;
    }
    return grantType === 'authorization_code' ? exchangeCode(s, client, form, now, opts, iss) : refresh(s, client, form, now, opts, iss);
  };
  let outcome = await attempt();
  for (let tries = 0; typeof outcome === 'string'; tries++) {
    if (tries === 3) throw new Error(`the token endpoint still needs a step first after 3 tries (${outcome})`);
    if (outcome === 'make-key') await makeSigningKey(ctx);
    else await loadIntegrityGate();
    outcome = await attempt();
  }
  if (!outcome.ok) throw outcome.err;
  return { status: 200, json: outcome.json, headers: NO_STORE };
}

function exchangeCode(s: MockState, client: OAuthClient, form: URLSearchParams, now: number, opts: ReturnType<typeof oauthOptions>, iss: string): Outcome {
  const codeValue = form.get('code');
  if (!codeValue) return fail(400, 'invalid_request', 'Missing required parameter: code');
  const redirectUri = form.get('redirect_uri');
  if (!redirectUri) return fail(400, 'invalid_request', 'Missing required parameter: redirect_uri');
  const slice = oauth(s);
  const code = own(slice.codes, codeValue);
  if (!code) return fail(400, 'invalid_grant', 'Malformed auth code.');
  if (code.used) {
    // A replayed code: refuse it and withdraw what it already bought (RFC 6749 §4.1.2).
    if (code.refresh_token) revokeGrant(s, code.refresh_token, 'code_replay');
    return fail(400, 'invalid_grant', 'The authorization code was already used.');
  }
  code.used = true; // single use, even when this attempt fails
  if (code.expires_at <= now) return fail(400, 'invalid_grant', 'The authorization code has expired.');
  if (code.client_id !== client.client_id) return fail(400, 'invalid_grant', 'The authorization code was issued to another client.');
  if (code.redirect_uri !== redirectUri) return fail(400, 'invalid_grant', 'redirect_uri does not match the one of the authorization request.');
  const verifier = form.get('code_verifier');
  if (code.code_challenge) {
    if (!verifier) return fail(400, 'invalid_grant', 'Missing code verifier.');
    if (!VERIFIER.test(verifier)) return fail(400, 'invalid_grant', 'Invalid code verifier: 43 to 128 characters of A-Z a-z 0-9 - . _ ~');
    const computed = code.code_challenge_method === 'S256' ? createHash('sha256').update(verifier, 'ascii').digest('base64url') : verifier;
    if (computed !== code.code_challenge) return fail(400, 'invalid_grant', 'Invalid code verifier.');
  } else if (verifier) {
    return fail(400, 'invalid_grant', 'code_verifier was sent but the authorization request had no code_challenge.');
  }
  const user = users(s).find((u) => u.sub === code.sub);
  if (!user || user.disabled) return fail(400, 'invalid_grant', 'The user account is deleted or disabled.');

  const rt = mintRefreshToken(s, { client_id: client.client_id, sub: code.sub, email: code.email, scopes: code.scopes, ttlSeconds: code.access_seconds }, now);
  code.refresh_token = rt.token;
  enforceRefreshLimit(s, code.sub, client.client_id, opts.refreshTokenLimit ?? 100, opts.userRefreshTokenLimit ?? 100, now);
  const at = mintAccessToken(
    s,
    {
      client_id: client.client_id,
      sub: code.sub,
      email: code.email,
      scopes: code.scopes,
      refresh_token: rt.token,
      ttlSeconds: opts.accessTokenTtlSeconds ?? 3600,
    },
    now,
  );
  return { ok: true, json: { ...tokenJson(s, at, rt, now, iss, code.nonce), refresh_token: rt.token } };
}

function refresh(s: MockState, client: OAuthClient, form: URLSearchParams, now: number, opts: ReturnType<typeof oauthOptions>, iss: string): Outcome {
  const value = form.get('refresh_token');
  if (!value) return fail(400, 'invalid_request', 'Missing required parameter: refresh_token');
  const check = checkRefreshToken(s, value, now);
  if (!check.ok) return fail(400, 'invalid_grant', check.reason === 'expired' ? 'Token has been expired.' : 'Token has been expired or revoked.');
  const rt = check.record;
  if (rt.client_id !== client.client_id) return fail(400, 'invalid_grant', 'The refresh token was issued to another client.');
  const user = users(s).find((u) => u.sub === rt.sub);
  if (!user || user.disabled) return fail(400, 'invalid_grant', 'The user account is deleted or disabled.');
  let scopes = rt.scopes;
  const asked = form.get('scope');
  if (asked) {
    const wanted = asked.split(/\s+/).filter(Boolean);
    const extra = wanted.filter((x) => !rt.scopes.includes(x));
    if (extra.length) return fail(400, 'invalid_scope', `Scopes not granted to this refresh token: ${extra.join(' ')}`);
    scopes = wanted;
  }
  const at = mintAccessToken(
    s,
    { client_id: client.client_id, sub: rt.sub, email: rt.email, scopes, refresh_token: rt.token, ttlSeconds: opts.accessTokenTtlSeconds ?? 3600 },
    now,
  );
  return { ok: true, json: tokenJson(s, at, rt, now, iss) };
}

function tokenJson(s: MockState, at: AccessTokenRecord, rt: RefreshTokenRecord, now: number, iss: string, nonce?: string): Record<string, unknown> {
  const out: Record<string, unknown> = {
    access_token: at.token,
    expires_in: Math.max(0, Math.round((at.expires_at - now) / 1000)),
    scope: at.scopes.join(' '),
    token_type: 'Bearer',
  };
  if (rt.expires_at !== null) out.refresh_token_expires_in = Math.max(0, Math.round((rt.expires_at - now) / 1000));
  if (at.scopes.some((x) => IDENTITY_SCOPES.includes(x))) {
    const user = users(s).find((u) => u.sub === at.sub);
    const iat = Math.floor(now / 1000);
    const claims: Record<string, unknown> = { iss, azp: at.client_id, aud: at.client_id, sub: at.sub, iat, exp: iat + 3600 };
    if (at.scopes.includes('email')) Object.assign(claims, { email: at.email, email_verified: true });
    if (at.scopes.includes('profile') && user) claims.name = user.name;
    if (nonce) claims.nonce = nonce;
    claims.at_hash = createHash('sha256').update(at.token).digest().subarray(0, 16).toString('base64url');
    out.id_token = signJwt(signingKey(s), claims);
  }
  return out;
}

/** Forget codes and access tokens long past their expiry, so the state file stays small. */
function prune(s: MockState, now: number): void {
  const slice = oauth(s);
  for (const [k, c] of Object.entries(slice.codes)) if (c.expires_at < now - 3_600_000) delete slice.codes[k];
  for (const [k, t] of Object.entries(slice.accessTokens)) if (t.expires_at < now - 86_400_000) delete slice.accessTokens[k];
}

/** Revokes an access token (and its refresh token) or a refresh token (and its access tokens). */
async function revoke(ctx: ServiceContext, req: MockRequest, admin: Pick<LazyConsole, 'kick'>): Promise<MockReply> {
  const form = formParams(req);
  const value = req.query.get('token') ?? form.get('token');
  if (!value) throw oauthError(400, 'invalid_request', 'Missing required parameter: token');
  const now = ctx.now();
  const iss = issuer(req);
  // A token-revoked SET is signed inside the write when some receiver is registered: then the events
  // module and the signing key come first (the key outside the state file's lock). The write changes
  // nothing when one of them is missing, and is tried again after it.
  let events: typeof import('./events.js') | undefined;
  const attempt = () =>
    ctx.store.write((s): boolean | 'load-events' | 'make-key' => {
      if (hasReceivers(s)) {
        if (!events) return 'load-events';
        if (signingKeyMissing(s, true)) return 'make-key';
      }
      const hook = (token: string) => events?.refreshRevoked(s, token, iss, now);
      const at = checkAccessToken(s, value, now);
      if (at.ok) {
        at.record.revoked = true;
        if (at.record.refresh_token) {
          const live = checkRefreshToken(s, at.record.refresh_token, now).ok;
          revokeGrant(s, at.record.refresh_token);
          if (live) hook(at.record.refresh_token);
        }
        return true;
      }
      const rt = checkRefreshToken(s, value, now);
      if (rt.ok) {
        revokeGrant(s, value);
        hook(value);
        return true;
      }
      return false;
    });
  let ok = await attempt();
  for (let tries = 0; typeof ok === 'string'; tries++) {
    if (tries === 3) throw new Error(`the revocation endpoint still needs a step first after 3 tries (${ok})`);
    if (ok === 'make-key') await makeSigningKey(ctx);
    else events = await import('./events.js');
    ok = await attempt();
  }
  if (!ok) throw oauthError(400, 'invalid_token', 'Token expired or revoked');
  if (events) await admin.kick();
  return { status: 200, json: {}, headers: NO_STORE };
}

async function tokeninfo(ctx: ServiceContext, req: MockRequest): Promise<MockReply> {
  const value = req.query.get('access_token') ?? bearerToken(req.headers, new URLSearchParams());
  const now = ctx.now();
  const check = await ctx.store.read((s) => checkAccessToken(s, value, now));
  if (!check.ok) throw oauthError(400, 'invalid_token', 'Invalid Value');
  const r = check.record;
  return {
    status: 200,
    json: {
      azp: r.client_id,
      aud: r.client_id,
      sub: r.sub,
      scope: r.scopes.join(' '),
      exp: String(Math.floor(r.expires_at / 1000)),
      expires_in: String(Math.max(0, Math.round((r.expires_at - now) / 1000))),
      ...(r.scopes.includes('email') ? { email: r.email, email_verified: 'true' } : {}),
      access_type: 'offline',
    },
    headers: NO_STORE,
  };
}

/** The realm of the userinfo endpoint's challenges. */
const USERINFO_REALM = 'opsctl-mock';

/**
 * A refusal of the userinfo endpoint as RFC 6750 §3 writes it: a `WWW-Authenticate: Bearer` challenge,
 * with no error code when the request carried no credentials (§3.1: "SHOULD NOT include an error code"),
 * else `invalid_request` (400), `invalid_token` (401) or `insufficient_scope` (403, naming the scope needed).
 */
function bearerRefusal(status: 400 | 401 | 403, error?: string, description?: string, scope?: string): MockReply {
  return {
    status,
    headers: { ...NO_STORE, 'www-authenticate': bearerChallenge(USERINFO_REALM, { error, description, scope }) },
    ...(error ? { json: { error, ...(description ? { error_description: description } : {}) } } : { text: '' }),
  };
}

/**
 * The access token of a userinfo request, from exactly one of the places RFC 6750 §2 allows: the
 * Authorization header, a form-encoded POST body, or the `access_token` query parameter.
 */
function userinfoToken(req: MockRequest): { token?: string; problem?: string } {
  const value: string | undefined = req.headers.authorization;
  const places: string[] = [];
  let token: string | undefined;
  if (value !== undefined) {
    const m = /^Bearer\s+(\S+)$/i.exec(value);
    if (!m) return { problem: 'the Authorization header must be "Bearer <access token>"' };
    token = m[1];
    places.push('the Authorization header');
  }
  const form = req.method === 'POST' ? formParams(req).getAll('access_token') : [];
  const query = req.query.getAll('access_token');
  if (form.length + query.length > 1) return { problem: 'access_token is given more than once' };
  for (const [found, where] of [
    [form[0], 'the form body'],
    [query[0], 'the query'],
  ] as const) {
    if (found === undefined) continue;
    token = found;
    places.push(where);
  }
  if (places.length > 1) return { problem: `the access token is sent in more than one way (${places.join(' and ')}); use one` };
  return { token };
}

/** GET and POST `/oauth2/v3/userinfo` (OIDC Core 5.3.1: both methods), a bearer-protected resource (RFC 6750). */
async function userinfo(ctx: ServiceContext, req: MockRequest): Promise<MockReply> {
  const now = ctx.now();
  const given = userinfoToken(req);
  if (given.problem) return bearerRefusal(400, 'invalid_request', given.problem);
  if (given.token === undefined) return bearerRefusal(401);
  const check = await ctx.store.read((s) => {
    const c = checkAccessToken(s, given.token, now);
    return c.ok ? { ...c, user: users(s).find((u) => u.sub === c.record.sub) } : c;
  });
  if (!check.ok) return bearerRefusal(401, 'invalid_token', `The access token is ${check.reason}.`);
  const r = check.record;
  if (!r.scopes.some((x) => IDENTITY_SCOPES.includes(x))) {
    return bearerRefusal(403, 'insufficient_scope', 'The access token was not granted the openid scope (or email, profile).', 'openid');
  }
  const out: Record<string, unknown> = { sub: r.sub };
  if (r.scopes.includes('email')) Object.assign(out, { email: r.email, email_verified: true });
  if (r.scopes.includes('profile') && 'user' in check && check.user) out.name = check.user.name;
  return { status: 200, json: out, headers: NO_STORE };
}
