import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as client from 'openid-client';
import { request } from 'undici';
import { FileStore } from '@opsctl/mock/store.js';
import { mintAccessToken } from '@opsctl/mock/services/oauth/tokens.js';
import { DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET } from '@opsctl/mock/services/oauth/registry.js';
import { runBin } from '../helpers/bin.js';
import { LABEL_SCOPES } from '../helpers/labels.js';
import { serveUrl } from '../helpers/serve.js';

/**
 * The OAuth mock's userinfo endpoint as RFC 6750 and OIDC Core 5.3 write it, its RFC 8414 metadata, and
 * RFC 6749 §3.1's once-only parameters, through openid-client (v6, on oauth4webapi) against the built
 * `opsctl mock serve` (tokens minted into its state file, as its token endpoint stores them).
 */
let serve: ReturnType<typeof runBin>;
let dir: string;
let base: string;
let store: FileStore;
const mint = (scopes: string[], ttlSeconds = 3600) =>
  store.write((s) => mintAccessToken(s, { client_id: DEFAULT_CLIENT_ID, sub: 'ada', email: 'ada@example.com', scopes, ttlSeconds }, Date.now()).token);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'opsctl-userinfo-'));
  const statePath = join(dir, 'state.json');
  serve = runBin(['mock', 'serve', '--port', '0', '--state', statePath, '--json'], { env: { OPSCTL_CONFIG_DIR: dir } });
  base = await serveUrl(serve);
  // the first request loads the oauth service, which fills in its slice of the state
  await request(`${base}/.well-known/openid-configuration`).then((r) => r.body.dump());
  store = new FileStore(statePath);
}, 60_000);
afterAll(async () => {
  await store?.close();
  serve?.kill('SIGTERM');
  await serve?.catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

const discover = (algorithm: 'oidc' | 'oauth2' = 'oidc') =>
  client.discovery(new URL(base), DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET, undefined, { execute: [client.allowInsecureRequests], algorithm });

async function challenge(p: Promise<unknown>): Promise<{ status: number; scheme: string; parameters: Record<string, string | undefined> }> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(client.WWWAuthenticateChallengeError);
  const e = err as client.WWWAuthenticateChallengeError;
  expect(e.cause).toHaveLength(1);
  return { status: e.status, scheme: e.cause[0]!.scheme, parameters: { ...e.cause[0]!.parameters } };
}

describe('RFC 8414 metadata beside the OpenID metadata', () => {
  it('openid-client discovers the server both ways, with the same endpoints', async () => {
    const oidc = (await discover('oidc')).serverMetadata();
    const oauth2 = (await discover('oauth2')).serverMetadata();
    expect(oauth2.issuer).toBe(base);
    expect(oauth2).toEqual(oidc);
    expect(oauth2.userinfo_endpoint).toBe(`${base}/oauth2/v3/userinfo`);
    const raw = await request(`${base}/.well-known/oauth-authorization-server`);
    expect(raw.statusCode).toBe(200);
    expect(((await raw.body.json()) as Record<string, unknown>).code_challenge_methods_supported).toEqual(['plain', 'S256']);
  });
});

describe('userinfo: RFC 6750 bearer challenges, GET and POST (OIDC Core 5.3.1)', () => {
  it('answers GET (fetchUserInfo) and POST (header, or a form body) with the claims of the granted scopes', async () => {
    const config = await discover();
    const token = await mint(['openid', 'email']);
    expect(await client.fetchUserInfo(config, token, 'ada')).toEqual({ sub: 'ada', email: 'ada@example.com', email_verified: true });
    const posted = await client.fetchProtectedResource(config, token, new URL(`${base}/oauth2/v3/userinfo`), 'POST');
    expect(posted.status).toBe(200);
    expect(await posted.json()).toMatchObject({ sub: 'ada' });
    const form = await request(`${base}/oauth2/v3/userinfo`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ access_token: token }).toString(),
    });
    expect(form.statusCode).toBe(200);
    expect(await form.body.json()).toMatchObject({ sub: 'ada' });
  });

  it('a request without credentials gets a bare Bearer challenge: no error code (RFC 6750 §3.1)', async () => {
    for (const method of ['GET', 'POST'] as const) {
      const res = await request(`${base}/oauth2/v3/userinfo`, { method });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="opsctl-mock"');
      await res.body.dump();
    }
  });

  it('an unknown, expired or revoked token: 401 invalid_token', async () => {
    const config = await discover();
    expect(await challenge(client.fetchUserInfo(config, 'ya29.not-a-token', client.skipSubjectCheck))).toMatchObject({
      status: 401,
      scheme: 'bearer',
      parameters: { realm: 'opsctl-mock', error: 'invalid_token' },
    });
    const expired = await mint(['openid'], -10);
    expect((await challenge(client.fetchUserInfo(config, expired, client.skipSubjectCheck))).parameters.error).toBe('invalid_token');
  });

  it('a token without the openid scope: 403 insufficient_scope naming the scope', async () => {
    const config = await discover();
    const token = await mint([LABEL_SCOPES.rw]);
    expect(await challenge(client.fetchUserInfo(config, token, client.skipSubjectCheck))).toMatchObject({
      status: 403,
      scheme: 'bearer',
      parameters: { error: 'insufficient_scope', scope: 'openid' },
    });
  });

  it('a token sent two ways at once is a 400 invalid_request (RFC 6750 §2)', async () => {
    const token = await mint(['openid']);
    const res = await request(`${base}/oauth2/v3/userinfo?access_token=${token}`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.statusCode).toBe(400);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="opsctl-mock", error="invalid_request"/);
    expect(await res.body.json()).toMatchObject({ error: 'invalid_request' });
  });
});

describe('authorization requests: each parameter once (RFC 6749 §3.1)', () => {
  it('a parameter given twice is refused as invalid_request on the error page (the seed: shown to the user), never redirected', async () => {
    const config = await discover();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: 'http://127.0.0.1:8765/callback',
      scope: 'openid email',
      code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
      state: client.randomState(),
    });
    const ok = await request(url.href);
    expect(ok.statusCode).toBe(200);
    await ok.body.dump();
    for (const param of ['state', 'redirect_uri', 'scope']) {
      const twice = new URL(url.href);
      twice.searchParams.append(param, 'again');
      const res = await request(twice.href);
      expect(res.statusCode).toBe(400);
      expect(res.headers.location).toBeUndefined();
      const html = await res.body.text();
      expect(html).toContain('<code id="error-code">invalid_request</code>');
      expect(html).toContain(`given more than once: ${param}`);
    }
  });

  it('a token request with a parameter given twice is a 400 invalid_request naming it, and grants nothing (§3.2)', async () => {
    const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'x', client_id: DEFAULT_CLIENT_ID, client_secret: DEFAULT_CLIENT_SECRET });
    form.append('grant_type', 'authorization_code');
    const res = await request(`${base}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() });
    expect(res.statusCode).toBe(400);
    const body = (await res.body.json()) as { error: string; error_description: string };
    expect(body.error).toBe('invalid_request');
    expect(body.error_description).toContain('given more than once: grant_type');
  });

  it('the metadata lists every grant the token endpoint takes, the device grant included (token exchange only with --trust-jwks)', async () => {
    const meta = (await (await request(`${base}/.well-known/oauth-authorization-server`)).body.json()) as { grant_types_supported: string[] };
    expect(meta.grant_types_supported).toEqual(['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code']);
  });
});
