import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { challengeS256, createVerifier } from '../../src/auth/pkce.js';
import { FileStore } from '@opsctl/mock/store.js';
import { mintAccessToken } from '@opsctl/mock/services/oauth/tokens.js';
import { DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET, SCOPE_BASE } from '@opsctl/mock/services/oauth/registry.js';
import { runBin } from '../helpers/bin.js';
import { LABEL_SCOPES } from '../helpers/labels.js';
import { playBrowser, postForm } from '../helpers/oauth-browser.js';
import { serveUrl } from '../helpers/serve.js';

/**
 * The mocks' own protocol deviations of issue 49, each held to the RFC's words, over real HTTP to the built
 * `opsctl mock serve` on port 0: one without token exchange (the default) and one trusting a CI key set.
 */
const dir = mkdtempSync(join(tmpdir(), 'opsctl-protocol-'));
const REDIRECT = 'http://127.0.0.1:53682/';
type Served = { child: ReturnType<typeof runBin>; url: string; store: FileStore };
let plain: Served;
let exchanging: Served;
let ciKey: CryptoKey;

async function serve(name: string, extra: string[] = []): Promise<Served> {
  const state = join(dir, `${name}.json`);
  const child = runBin(['mock', 'serve', '--port', '0', '--state', state, '--json', ...extra], { env: { OPSCTL_CONFIG_DIR: join(dir, name) } });
  const url = await serveUrl(child);
  // the first request loads the oauth service, which fills in its slice of the state
  await (await fetch(`${url}/.well-known/openid-configuration`)).text();
  return { child, url, store: new FileStore(state) };
}

beforeAll(async () => {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  ciKey = privateKey;
  writeFileSync(join(dir, 'ci-jwks.json'), JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'ci', alg: 'RS256', use: 'sig' }] }));
  [plain, exchanging] = await Promise.all([serve('plain'), serve('exchange', ['--trust-jwks', join(dir, 'ci-jwks.json')])]);
}, 120_000);
afterAll(async () => {
  for (const s of [plain, exchanging]) {
    await s?.store.close();
    s?.child.kill('SIGTERM');
    await s?.child.catch(() => undefined);
  }
  rmSync(dir, { recursive: true, force: true });
});

const mint = (s: Served, scopes: string[]) =>
  s.store.write((st) => mintAccessToken(st, { client_id: 'protocol', sub: 'ada', email: 'ada@example.com', scopes, ttlSeconds: 3600 }, Date.now()).token);
const bearer = (token?: string): Record<string, string> => (token ? { authorization: `Bearer ${token}` } : {});

describe('the label service: RFC 6750 bearer challenges', () => {
  it('§3.1: a request without credentials gets a challenge with no error code; an invalid token gets invalid_token', async () => {
    // RFC 6750 §3.1: "If the request lacks any authentication information …, the resource server SHOULD NOT
    // include an error code or other error information."
    const bare = await fetch(`${plain.url}/v2/labels`);
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toBe('Bearer realm="opsctl-mock"');
    // "invalid_token: The access token provided is expired, revoked, malformed, or invalid … (401)"
    const wrong = await fetch(`${plain.url}/v2/labels`, { headers: bearer('ya29.not-a-token') });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toBe('Bearer realm="opsctl-mock", error="invalid_token"');
    // the data API follows the same rule
    const api = await fetch(`${plain.url}/media/v3/channels?part=id&mine=true`);
    expect(api.status).toBe(401);
    expect(api.headers.get('www-authenticate')).toBe('Bearer realm="mock"');
  });

  it("§3.1 insufficient_scope: a 403 with the scope the method needs (and Google's ErrorInfo reason)", async () => {
    // RFC 6750 §3.1: "insufficient_scope: The request requires higher privileges than provided by the access
    // token. The resource server SHOULD respond with the HTTP 403 (Forbidden) status code and MAY include the
    // "scope" attribute with the scope necessary to access the protected resource."
    const media = await mint(plain, [`${SCOPE_BASE}/media.readonly`]);
    const read = await fetch(`${plain.url}/v2/labels`, { headers: bearer(media) });
    expect(read.status).toBe(403);
    expect(read.headers.get('www-authenticate')).toBe(
      `Bearer realm="opsctl-mock", error="insufficient_scope", scope="${Object.values(LABEL_SCOPES).join(' ')}"`,
    );
    expect(((await read.json()) as { error: { details: Array<{ reason: string }> } }).error.details).toEqual([
      expect.objectContaining({ reason: 'ACCESS_TOKEN_SCOPE_INSUFFICIENT' }),
    ]);
    const ro = await mint(plain, [LABEL_SCOPES.ro]);
    const write = await fetch(`${plain.url}/v2/labels`, {
      method: 'POST',
      headers: { ...bearer(ro), 'content-type': 'application/json' },
      body: JSON.stringify({ labelType: 'SHARED', properties: { title: 'refused' } }),
    });
    expect(write.status).toBe(403);
    expect(write.headers.get('www-authenticate')).toBe(
      `Bearer realm="opsctl-mock", error="insufficient_scope", scope="${LABEL_SCOPES.rw} ${LABEL_SCOPES.admin}"`,
    );
  });
});

describe('the label service: partial response (the fields parameter of every method in its discovery documents)', () => {
  it('labels(id,properties/title), a/b paths, nested selections and *; an unknown field is a 400 before the method runs', async () => {
    const token = await mint(plain, [LABEL_SCOPES.rw]);
    const call = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(`${plain.url}${path}`, {
        method,
        headers: { ...bearer(token), ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: r.status, json: (await r.json()) as Record<string, any> };
    };
    const made = await call('POST', '/v2/labels?fields=id,properties(title)', {
      labelType: 'SHARED',
      properties: { title: 'Partial', description: 'left out' },
      fields: [{ properties: { displayName: 'Owner' }, textOptions: {} }],
    });
    expect(made.status).toBe(200);
    expect(made.json).toEqual({ id: expect.any(String), properties: { title: 'Partial' } });
    await call('POST', '/v2/labels', { labelType: 'SHARED', properties: { title: 'Second' } });

    const list = await call('GET', `/v2/labels?view=LABEL_VIEW_FULL&fields=${encodeURIComponent('labels(id,properties/title),nextPageToken')}`);
    expect(list.status).toBe(200);
    expect(Object.keys(list.json)).toEqual(['labels']);
    for (const l of list.json.labels as Array<Record<string, any>>) {
      expect(Object.keys(l).sort()).toEqual(['id', 'properties']);
      expect(Object.keys(l.properties as object)).toEqual(['title']);
    }
    const nested = await call('GET', `/v2/labels/${made.json.id}?view=LABEL_VIEW_FULL&fields=${encodeURIComponent('name,fields(id,properties(displayName))')}`);
    expect(nested.json).toEqual({ name: `labels/${made.json.id}`, fields: [{ id: expect.any(String), properties: { displayName: 'Owner' } }] });
    const paths = await call('GET', `/v2/labels/${made.json.id}?view=LABEL_VIEW_FULL&fields=${encodeURIComponent('properties/title, lifecycle/state')}`);
    expect(paths.json).toEqual({ properties: { title: 'Partial' }, lifecycle: { state: 'UNPUBLISHED_DRAFT' } });
    const all = await call('GET', `/v2/labels/${made.json.id}?fields=*`);
    expect(all.json).toEqual((await call('GET', `/v2/labels/${made.json.id}`)).json);

    // Google: "Invalid field selection canAddChildren." (400); a write with a bad selection writes nothing
    const bad = await call('GET', `/v2/labels?fields=${encodeURIComponent('labels(id,nosuch)')}`);
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({ status: 'INVALID_ARGUMENT', message: 'Invalid field selection nosuch' });
    const unclosed = await call('GET', `/v2/labels?fields=${encodeURIComponent('labels(id')}`);
    expect(unclosed.status).toBe(400);
    const before = (await call('GET', '/v2/labels?fields=labels/id')).json.labels.length as number;
    expect((await call('POST', '/v2/labels?fields=nosuch', { labelType: 'SHARED', properties: { title: 'never made' } })).status).toBe(400);
    expect((await call('GET', '/v2/labels?fields=labels/id')).json.labels).toHaveLength(before);
  });
});

describe('the authorization server', () => {
  const form = (s: Served, fields: Record<string, string>) => postForm(`${s.url}/token`, fields);

  async function authorizationCode(s: Served, method: 'S256' | 'plain') {
    const verifier = createVerifier();
    const u = new URL('/o/oauth2/v2/auth', s.url);
    const q = { client_id: DEFAULT_CLIENT_ID, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid email', state: 's' };
    for (const [k, v] of Object.entries({ ...q, code_challenge: method === 'S256' ? challengeS256(verifier) : verifier, code_challenge_method: method }))
      u.searchParams.set(k, v);
    const r = await playBrowser(u.toString());
    expect(r.consentStatus).toBe(302);
    const code = new URL(r.location!).searchParams.get('code')!;
    return form(s, {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
      client_id: DEFAULT_CLIENT_ID,
      client_secret: DEFAULT_CLIENT_SECRET,
    });
  }

  it('token_type is "Bearer" from every grant: authorization code, refresh, device code and token exchange', async () => {
    // RFC 6750 §4: the token type is "Bearer" (and the seed: `token_type` (`Bearer`)), the same from every grant
    const code = await authorizationCode(exchanging, 'S256');
    expect(code.status).toBe(200);
    const refreshed = await form(exchanging, {
      grant_type: 'refresh_token',
      refresh_token: String(code.json.refresh_token),
      client_id: DEFAULT_CLIENT_ID,
      client_secret: DEFAULT_CLIENT_SECRET,
    });
    const device = await postForm(`${exchanging.url}/device/code`, { client_id: DEFAULT_CLIENT_ID, scope: 'openid email' });
    expect(device.status).toBe(200);
    const approved = await fetch(`${exchanging.url}/device`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ user_code: String(device.json.user_code), action: 'allow', login: 'alice@example.com' }).toString(),
    });
    expect(await approved.text()).toContain('Device connected');
    const polled = await form(exchanging, {
      grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
      device_code: String(device.json.device_code),
      client_id: DEFAULT_CLIENT_ID,
      client_secret: DEFAULT_CLIENT_SECRET,
    });
    const exchanged = await form(exchanging, {
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: await ciToken('opsctl'),
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
    });
    for (const [grant, r] of Object.entries({ code, refreshed, polled, exchanged })) {
      expect(r.status, `${grant}: ${JSON.stringify(r.json)}`).toBe(200);
      expect(r.json.token_type, grant).toBe('Bearer');
    }
  });

  it('RFC 8693 §2.2.2: a refused subject token is invalid_request; the metadata lists the grant only where the server takes it', async () => {
    // "If the request itself is not valid or if either the subject_token or actor_token are invalid for any
    // reason, or are unacceptable based on policy, the authorization server MUST construct an error response
    // … The value of the error parameter MUST be the invalid_request error code."
    const refused = await form(exchanging, {
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: await ciToken('another-audience'),
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
    });
    expect(refused.status).toBe(400);
    expect(refused.json.error).toBe('invalid_request');
    // RFC 8414 §2: grant_types_supported lists "the OAuth 2.0 grant type values that this authorization server supports"
    for (const doc of ['openid-configuration', 'oauth-authorization-server']) {
      const on = (await (await fetch(`${exchanging.url}/.well-known/${doc}`)).json()) as { grant_types_supported: string[] };
      expect(on.grant_types_supported).toContain('urn:ietf:params:oauth:grant-type:token-exchange');
      const off = (await (await fetch(`${plain.url}/.well-known/${doc}`)).json()) as { grant_types_supported: string[] };
      expect(off.grant_types_supported).toEqual(['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code']);
    }
    const notOn = await form(plain, {
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: await ciToken('opsctl'),
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
    });
    expect(notOn.json.error).toBe('unsupported_grant_type');
  });

  it('RFC 8414 §2: every PKCE method the metadata lists is taken, plain as well as S256', async () => {
    // "code_challenge_methods_supported: … PKCE code challenge methods supported by this authorization server"
    const meta = (await (await fetch(`${plain.url}/.well-known/oauth-authorization-server`)).json()) as { code_challenge_methods_supported: string[] };
    expect(meta.code_challenge_methods_supported).toEqual(['plain', 'S256']);
    for (const method of meta.code_challenge_methods_supported as Array<'plain' | 'S256'>) {
      const r = await authorizationCode(plain, method);
      expect(r.status, `${method}: ${JSON.stringify(r.json)}`).toBe(200);
    }
  });

  it('RFC 7009 §2.1: revocation is a POST; a GET is 405 naming POST in Allow, and revokes nothing', async () => {
    // "The client requests the revocation of a particular token by making an HTTP POST request to the token
    // revocation endpoint URL." RFC 9110 §15.5.6: a 405 response "MUST generate an Allow header field".
    const token = await mint(plain, [`${SCOPE_BASE}/media.readonly`]);
    const got = await fetch(`${plain.url}/revoke?token=${token}`);
    expect(got.status).toBe(405);
    expect(got.headers.get('allow')).toBe('POST');
    expect(((await got.json()) as { error: string }).error).toBe('method_not_allowed');
    expect((await fetch(`${plain.url}/media/v3/channels?part=id&mine=true`, { headers: bearer(token) })).status).toBe(200);
    expect((await postForm(`${plain.url}/revoke`, { token })).status).toBe(200);
    expect((await fetch(`${plain.url}/media/v3/channels?part=id&mine=true`, { headers: bearer(token) })).status).toBe(401);
  });
});

/** A CI provider's OIDC token for `aud`, signed with the key the second server trusts. */
function ciToken(aud: string): Promise<string> {
  return new SignJWT({ sub: 'repo:example/app', email: 'ci@example.com' })
    .setProtectedHeader({ alg: 'RS256', kid: 'ci' })
    .setIssuer('https://ci.example')
    .setAudience(aud)
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(ciKey);
}
