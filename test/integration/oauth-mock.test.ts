import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { challengeS256, createVerifier } from '../../src/auth/pkce.js';
import { DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET, SCOPE_BASE } from '@opsctl/mock/services/oauth/registry.js';
import { startMock } from '../helpers/mock.js';
import { playBrowser, postForm } from '../helpers/oauth-browser.js';

let mock: Awaited<ReturnType<typeof startMock>>;
const REDIRECT = 'http://127.0.0.1:53682/';
const READ = `${SCOPE_BASE}/media.readonly`;
const UPLOAD = `${SCOPE_BASE}/media.upload`;

beforeAll(async () => {
  mock = await startMock({ services: ['oauth', 'api'], options: { oauth: { refreshTokenLimit: 2 } } });
});
afterAll(async () => {
  await mock.close();
});

function authUrl(params: Record<string, string | undefined>): string {
  const u = new URL('/o/oauth2/v2/auth', mock.url);
  const defaults = { client_id: DEFAULT_CLIENT_ID, redirect_uri: REDIRECT, response_type: 'code', scope: `openid email ${READ}` };
  for (const [k, v] of Object.entries({ ...defaults, ...params })) if (v !== undefined) u.searchParams.set(k, v);
  return u.toString();
}

async function codeFor(params: Record<string, string | undefined> = {}, choice = {}) {
  const verifier = createVerifier();
  const r = await playBrowser(authUrl({ code_challenge: challengeS256(verifier), code_challenge_method: 'S256', state: 'xyz', ...params }), choice);
  expect(r.consentStatus).toBe(302);
  const loc = new URL(r.location!);
  return { code: loc.searchParams.get('code')!, verifier, location: loc };
}

const exchange = (code: string, verifier: string, extra: Record<string, string> = {}) =>
  postForm(`${mock.url}/token`, {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: REDIRECT,
    client_id: DEFAULT_CLIENT_ID,
    client_secret: DEFAULT_CLIENT_SECRET,
    ...extra,
  });

describe('token endpoint', () => {
  it('exchanges a code (S256) for tokens with id_token, no-store, and the API accepts the token', async () => {
    const { code, verifier, location } = await codeFor();
    expect(location.searchParams.get('state')).toBe('xyz');
    expect(location.hash).toBe('#state=xyz');
    const r = await exchange(code, verifier);
    expect(r.status).toBe(200);
    expect(r.headers['cache-control']).toBe('no-store');
    expect(r.json).toMatchObject({ token_type: 'Bearer', scope: `openid email ${READ}`, expires_in: 3600 });
    expect(r.json.refresh_token).toMatch(/^1\/\//);
    expect(r.json.refresh_token_expires_in).toBeUndefined();
    const claims = JSON.parse(Buffer.from(r.json.id_token.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({ aud: DEFAULT_CLIENT_ID, email: 'alice@example.com', iss: mock.url });

    const api = await request(`${mock.url}/media/v3/channels?part=snippet&mine=true`, { headers: { authorization: `Bearer ${r.json.access_token}` } });
    expect(api.statusCode).toBe(200);
    const body = (await api.body.json()) as any;
    expect(body.items[0].snippet.title).toBe("alice's channel");
    const viaQuery = await request(`${mock.url}/media/v3/channels?part=id&mine=true&access_token=${r.json.access_token}`);
    expect(viaQuery.statusCode).toBe(200);
    await viaQuery.body.dump();
  });

  it('no id_token without identity scopes; plain is the default method', async () => {
    const verifier = createVerifier();
    const page = await playBrowser(authUrl({ scope: READ, code_challenge: verifier }));
    const code = new URL(page.location!).searchParams.get('code')!;
    const r = await exchange(code, verifier);
    expect(r.status).toBe(200);
    expect(r.json.id_token).toBeUndefined();
  });

  it('a code is single-use: a replay is invalid_grant and withdraws the tokens it bought', async () => {
    const { code, verifier } = await codeFor();
    const first = await exchange(code, verifier);
    expect(first.status).toBe(200);
    const again = await exchange(code, verifier);
    expect(again.status).toBe(400);
    expect(again.json.error).toBe('invalid_grant');
    const refresh = await postForm(`${mock.url}/token`, {
      grant_type: 'refresh_token',
      refresh_token: first.json.refresh_token,
      client_id: DEFAULT_CLIENT_ID,
      client_secret: DEFAULT_CLIENT_SECRET,
    });
    expect(refresh.json.error).toBe('invalid_grant');
  });

  it('wrong verifier, missing verifier, other redirect URI → invalid_grant', async () => {
    const extras: Record<string, string>[] = [{ code_verifier: createVerifier() }, { code_verifier: '' }, { redirect_uri: 'http://127.0.0.1:1/' }];
    for (const extra of extras) {
      const { code, verifier } = await codeFor();
      const r = await exchange(code, verifier, extra);
      expect(r.status).toBe(400);
      expect(r.json.error).toBe('invalid_grant');
    }
  });

  it('client secret: wrong → 401 invalid_client; unknown grant type; missing parameters', async () => {
    const { code, verifier } = await codeFor();
    const r = await exchange(code, verifier, { client_secret: 'nope' });
    expect(r.status).toBe(401);
    expect(r.json.error).toBe('invalid_client');
    expect((await postForm(`${mock.url}/token`, { grant_type: 'password', client_id: DEFAULT_CLIENT_ID })).json.error).toBe('unsupported_grant_type');
    expect((await postForm(`${mock.url}/token`, { client_id: DEFAULT_CLIENT_ID })).json.error).toBe('invalid_request');
    expect((await postForm(`${mock.url}/token`, { grant_type: 'refresh_token', client_id: 'nobody' })).status).toBe(401);
  });

  it('HTTP Basic client authentication; a malformed Basic header is 401 invalid_client, never a 500', async () => {
    const { code, verifier } = await codeFor();
    const basic = (text: string) => ({ authorization: `Basic ${Buffer.from(text).toString('base64')}` });
    const ok = await postForm(
      `${mock.url}/token`,
      { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT },
      basic(`${DEFAULT_CLIENT_ID}:${DEFAULT_CLIENT_SECRET}`),
    );
    expect(ok.status).toBe(200);
    for (const bad of [`${DEFAULT_CLIENT_ID}:%E0%A4%A`, 'no-colon-here']) {
      const r = await postForm(`${mock.url}/token`, { grant_type: 'refresh_token', refresh_token: ok.json.refresh_token }, basic(bad));
      expect(r.status, JSON.stringify(r.json)).toBe(401);
      expect(r.json.error).toBe('invalid_client');
      expect(r.json.error_description).toMatch(/Basic/);
    }
  });

  it('mobile clients refresh without a secret', async () => {
    const verifier = createVerifier();
    const page = await playBrowser(
      authUrl({
        client_id: 'mobile-b.apps.mock',
        code_challenge: challengeS256(verifier),
        code_challenge_method: 'S256',
        redirect_uri: 'com.example.mobileb:/oauth2redirect',
      }),
    );
    const code = new URL(page.location!).searchParams.get('code')!;
    const tok = await postForm(`${mock.url}/token`, {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: 'com.example.mobileb:/oauth2redirect',
      client_id: 'mobile-b.apps.mock',
    });
    expect(tok.status).toBe(200);
    const ref = await postForm(`${mock.url}/token`, {
      grant_type: 'refresh_token',
      refresh_token: tok.json.refresh_token,
      client_id: 'mobile-b.apps.mock',
      client_secret: 'whatever',
    });
    expect(ref.status).toBe(200);
    expect(ref.json.access_token).toBeTruthy();
  });

  it('time-based access reports refresh_token_expires_in', async () => {
    const { code, verifier } = await codeFor({}, { accessDuration: 3600 });
    const r = await exchange(code, verifier);
    expect(r.json.refresh_token_expires_in).toBe(3600);
  });

  it('the refresh-token cap per client and user retires the oldest', async () => {
    const tokens: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { code, verifier } = await codeFor({}, { email: 'bob@example.com' });
      tokens.push((await exchange(code, verifier)).json.refresh_token);
    }
    const refresh = (t: string) =>
      postForm(`${mock.url}/token`, { grant_type: 'refresh_token', refresh_token: t, client_id: DEFAULT_CLIENT_ID, client_secret: DEFAULT_CLIENT_SECRET });
    expect((await refresh(tokens[0]!)).json.error).toBe('invalid_grant');
    expect((await refresh(tokens[1]!)).status).toBe(200);
    expect((await refresh(tokens[2]!)).status).toBe(200);
  });
});

describe('revoke', () => {
  it('revoking the access token revokes its refresh token; again → 400 invalid_token', async () => {
    const { code, verifier } = await codeFor();
    const t = (await exchange(code, verifier)).json;
    const rv = await postForm(`${mock.url}/revoke?token=${encodeURIComponent(t.access_token)}`, {});
    expect(rv.status).toBe(200);
    const ref = await postForm(`${mock.url}/token`, {
      grant_type: 'refresh_token',
      refresh_token: t.refresh_token,
      client_id: DEFAULT_CLIENT_ID,
      client_secret: DEFAULT_CLIENT_SECRET,
    });
    expect(ref.json.error).toBe('invalid_grant');
    const again = await postForm(`${mock.url}/revoke`, { token: t.refresh_token });
    expect(again.status).toBe(400);
    expect(again.json.error).toBe('invalid_token');
    const api = await request(`${mock.url}/media/v3/channels?part=id&mine=true`, { headers: { authorization: `Bearer ${t.access_token}` } });
    expect(api.statusCode).toBe(401);
    expect(((await api.body.json()) as any).error.status).toBe('UNAUTHENTICATED');
  });
});

describe('data API', () => {
  it('401 without a token, 403 without a reading scope, 400 without part', async () => {
    const none = await request(`${mock.url}/media/v3/channels?part=id&mine=true`);
    expect(none.statusCode).toBe(401);
    await none.body.dump();
    const { code, verifier } = await codeFor({ scope: `openid ${UPLOAD}` });
    const t = (await exchange(code, verifier)).json;
    const forbidden = await request(`${mock.url}/media/v3/channels?part=id&mine=true`, { headers: { authorization: `Bearer ${t.access_token}` } });
    expect(forbidden.statusCode).toBe(403);
    expect(((await forbidden.body.json()) as any).error).toMatchObject({ code: 403, status: 'PERMISSION_DENIED' });
  });
});

describe('authorization endpoint errors on the right channel', () => {
  const page = async (params: Record<string, string | undefined>, ua?: string) => {
    const r = await playBrowser(authUrl(params), { userAgent: ua });
    return { status: r.pageStatus, code: /id="error-code">([^<]+)</.exec(r.page)?.[1], page: r.page };
  };
  it.each([
    [{ redirect_uri: 'urn:ietf:wg:oauth:2.0:oob' }, 'redirect_uri_mismatch'],
    [{ redirect_uri: 'https://evil.example/cb' }, 'redirect_uri_mismatch'],
    [{ redirect_uri: 'com.example.app:/cb' }, 'redirect_uri_mismatch'],
    [{ client_id: 'mobile-a.apps.mock', redirect_uri: 'com.example.mobilea:/cb' }, 'invalid_request'],
    [{ client_id: 'universal.apps.mock', redirect_uri: `com.example.${'x'.repeat(40)}:/cb` }, 'redirect_uri_mismatch'],
    [{ client_id: 'nobody.apps.mock' }, 'invalid_client'],
    [{ client_id: 'deleted-recently.apps.mock' }, 'deleted_client'],
    [{ client_id: 'deleted-long-ago.apps.mock' }, 'deleted_client'],
    [{ response_type: undefined }, 'invalid_request'],
    [{ scope: undefined }, 'invalid_request'],
    [{ code_challenge: 'too-short', code_challenge_method: 'S256' }, 'invalid_grant'],
    [{ code_challenge_method: 'S256' }, 'invalid_grant'],
    [{ code_challenge: 'x'.repeat(43), code_challenge_method: 'S512' }, 'invalid_request'],
  ])('%o → %s page, no redirect', async (params, code) => {
    const r = await page(params);
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.code).toBe(code);
  });

  it('any loopback port matches, IPv6 too; custom scheme when enabled', async () => {
    expect((await page({ redirect_uri: 'http://127.0.0.1:9/cb' })).status).toBe(200);
    expect((await page({ redirect_uri: 'http://[::1]:65000' })).status).toBe(200);
    expect((await page({ client_id: 'mobile-a-schemes.apps.mock', redirect_uri: 'com.example.mobilea2:/cb' })).status).toBe(200);
  });

  it('disallowed_useragent for an embedded web view', async () => {
    const r = await page(
      {},
      'Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP1A; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/120 Mobile Safari/537.36',
    );
    expect(r.code).toBe('disallowed_useragent');
  });

  it('access_denied comes back by redirect with the state', async () => {
    const r = await playBrowser(authUrl({ state: 's<1>' }), { action: 'deny' });
    const loc = new URL(r.location!);
    expect(loc.searchParams.get('error')).toBe('access_denied');
    expect(loc.searchParams.get('state')).toBe('s<1>');
  });

  it('org_internal and admin_policy_enforced are shown on a page', async () => {
    const org = await playBrowser(authUrl({ client_id: 'internal-desktop.apps.mock' }), { email: 'carol@partner.example' });
    expect(org.location).toBeUndefined();
    expect(org.consentPage).toContain('org_internal');
    const admin = await playBrowser(authUrl({ scope: UPLOAD, login_hint: 'dave@example.com' }));
    expect(admin.consentPage).toContain('admin_policy_enforced');
  });

  it('login_hint preselects the account; granular consent grants a subset; trusted clients all-or-nothing', async () => {
    const r = await playBrowser(authUrl({ scope: `openid ${READ} ${UPLOAD}`, login_hint: 'bob@example.com' }), { scopes: [READ] });
    expect(r.page).toMatch(/data-email="bob@example.com" checked/);
    // Granular consent: one checkbox per non-identity scope, none ticked for the user.
    expect(r.page.match(/type="checkbox" name="scope"[^>]*>/g)).toHaveLength(2);
    expect(r.page).not.toMatch(/type="checkbox"[^>]* checked/);
    // Allow with nothing ticked grants the identity scopes only.
    const none = await playBrowser(authUrl({ scope: `openid ${READ}` }), { scopes: [] });
    expect(new URL(none.location!).searchParams.get('scope')).toBe('openid');
    expect(new URL(r.location!).searchParams.get('scope')).toBe(`openid ${READ}`);
    const trusted = await playBrowser(authUrl({ client_id: 'trusted-desktop.apps.mock', scope: `${READ} ${UPLOAD}` }), { scopes: [] });
    expect(trusted.page).not.toContain('type="checkbox"');
    expect(new URL(trusted.location!).searchParams.get('scope')).toBe(`${READ} ${UPLOAD}`);
  });

  it('escapes values on its pages', async () => {
    const r = await page({ scope: '<script>alert(1)</script>' });
    expect(r.page).not.toContain('<script>');
    expect(r.page).toContain('&#60;script&#62;');
  });
});

describe('client registry from a file', () => {
  it('merges clients and users from YAML; a deleted client restores within 30 days', async () => {
    const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'opsctl-clients-'));
    const file = join(dir, 'clients.yaml');
    writeFileSync(
      file,
      `clients:\n  - client_id: my-app.apps.mock\n    client_secret: s3cret\n    name: My app\n    type: desktop\n  - client_id: gone.apps.mock\n    name: Gone\n    type: desktop\n    deleted_at: "${new Date(Date.now() - 86_400_000).toISOString()}"\nusers:\n  - sub: "999"\n    email: zoe@example.com\n    name: Zoe\n`,
    );
    const m = await startMock({ services: ['oauth'], options: { oauth: { clientsFile: file } } });
    try {
      const verifier = createVerifier();
      const u = `${m.url}/o/oauth2/v2/auth?client_id=my-app.apps.mock&redirect_uri=${encodeURIComponent(REDIRECT)}&response_type=code&scope=email&code_challenge=${challengeS256(verifier)}&code_challenge_method=S256&login_hint=zoe@example.com`;
      const b = await playBrowser(u);
      const code = new URL(b.location!).searchParams.get('code')!;
      const tok = await postForm(`${m.url}/token`, {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: REDIRECT,
        client_id: 'my-app.apps.mock',
        client_secret: 's3cret',
      });
      expect(tok.status).toBe(200);
      expect(JSON.parse(Buffer.from(tok.json.id_token.split('.')[1], 'base64url').toString()).email).toBe('zoe@example.com');
      const gone = await playBrowser(
        `${m.url}/o/oauth2/v2/auth?client_id=gone.apps.mock&redirect_uri=${encodeURIComponent(REDIRECT)}&response_type=code&scope=email`,
      );
      expect(gone.page).toContain('deleted_client');
      // The developer console's restore, over HTTP.
      const restore = (id: string) =>
        request(`${m.url}/oauth2/mock/clients/${id}/restore`, { method: 'POST' }).then(async (res) => ({
          status: res.statusCode,
          json: (await res.body.json()) as any,
        }));
      expect(await restore('gone.apps.mock')).toEqual({ status: 200, json: { client_id: 'gone.apps.mock', restored: true } });
      expect((await restore('gone.apps.mock')).json.error).toBe('invalid_request');
      expect((await restore('nobody.apps.mock')).status).toBe(404);
      const old = await restore('deleted-long-ago.apps.mock');
      expect(old).toMatchObject({ status: 400, json: { error: 'deleted_client' } });
      expect(old.json.error_description).toContain('30 days');
      const back = await playBrowser(
        `${m.url}/o/oauth2/v2/auth?client_id=gone.apps.mock&redirect_uri=${encodeURIComponent(REDIRECT)}&response_type=code&scope=email`,
      );
      expect(back.pageStatus).toBe(200);
    } finally {
      await m.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
