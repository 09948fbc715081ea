import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { challengeS256, createVerifier } from '../../src/auth/pkce.js';
import { DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET, SCOPE_BASE } from '@opsctl/mock/services/oauth/registry.js';
import { runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { startMock } from '../helpers/mock.js';
import { playBrowser, postForm } from '../helpers/oauth-browser.js';

/** The seed's remaining authorization-server rules (seeds/000): redirect URIs per client type, the data API prerequisite, domain-wide delegation. */
let mock: Awaited<ReturnType<typeof startMock>>;
const READ = `${SCOPE_BASE}/media.readonly`;
const UPLOAD = `${SCOPE_BASE}/media.upload`;

beforeAll(async () => {
  mock = await startMock({ services: ['oauth', 'api'] });
});
afterAll(async () => {
  await mock.close();
});

function authUrl(params: Record<string, string | undefined>): string {
  const u = new URL('/o/oauth2/v2/auth', mock.url);
  const defaults = { client_id: DEFAULT_CLIENT_ID, redirect_uri: 'http://127.0.0.1:53682/', response_type: 'code', scope: `openid email ${READ}` };
  for (const [k, v] of Object.entries({ ...defaults, ...params })) if (v !== undefined) u.searchParams.set(k, v);
  return u.toString();
}

async function page(params: Record<string, string | undefined>) {
  const res = await request(authUrl(params));
  const html = await res.body.text();
  return {
    status: res.statusCode,
    code: /id="error-code">([^<]+)</.exec(html)?.[1],
    description: /id="error-description">([^<]*)</.exec(html)?.[1] ?? '',
    html,
  };
}

describe('each client type has its registered redirect URIs', () => {
  it.each([
    [
      'desktop',
      DEFAULT_CLIENT_ID,
      ['http://127.0.0.1:1', 'http://127.0.0.1:65535/', 'http://[::1]:8080/cb'],
      ['com.example.app:/cb', 'mock.apps.opsctl-desktop:/cb', 'http://localhost:8080/'],
    ],
    [
      'mobile A, custom scheme enabled',
      'mobile-a-schemes.apps.mock',
      ['com.example.mobilea2:/oauth2redirect', 'com.example.mobilea2:/'],
      ['com.other.app:/cb', 'http://127.0.0.1:8080/'],
    ],
    [
      'mobile B',
      'mobile-b.apps.mock',
      ['com.example.mobileb:/oauth2redirect', 'mock.apps.mobile-b:/cb'],
      ['com.other.app:/cb', 'http://127.0.0.1:8080/', 'http://[::1]:8080/'],
    ],
    ['universal desktop', 'universal.apps.mock', ['com.example.universal:/cb'], ['com.other.app:/cb']],
    ['browser extension', 'extension.apps.mock', [], ['http://127.0.0.1:8080/', 'com.example.ext:/cb']],
  ])("%s (%s): the registered forms are accepted, any other is redirect_uri_mismatch on the server's own page", async (_name, clientId, good, bad) => {
    for (const redirect_uri of good) expect((await page({ client_id: clientId, redirect_uri })).status, redirect_uri).toBe(200);
    for (const redirect_uri of bad) {
      const r = await page({ client_id: clientId, redirect_uri });
      expect([r.status, r.code], redirect_uri).toEqual([400, 'redirect_uri_mismatch']);
    }
  });

  it('a loopback redirect from a mobile client is refused as deprecated for its type, saying what to use instead', async () => {
    const a = await page({ client_id: 'mobile-a-schemes.apps.mock', redirect_uri: 'http://127.0.0.1:8080/' });
    expect(a.code).toBe('redirect_uri_mismatch');
    expect(a.description).toContain('Loopback IP redirects (http://127.0.0.1:8080/) are deprecated for mobile platform A clients');
    const b = await page({ client_id: 'mobile-b.apps.mock', redirect_uri: 'http://[::1]:8080/' });
    expect(b.code).toBe('redirect_uri_mismatch');
    expect(b.description).toContain('deprecated for mobile platform B clients');
    expect(b.description).toContain('com.example.mobileb:/');
  });

  it('mobile A with the custom scheme off (the platform default): its scheme is invalid_request, and loopback is no way around it', async () => {
    expect((await page({ client_id: 'mobile-a.apps.mock', redirect_uri: 'com.example.mobilea:/cb' })).code).toBe('invalid_request');
    expect((await page({ client_id: 'mobile-a.apps.mock', redirect_uri: 'http://127.0.0.1:8080/' })).code).toBe('redirect_uri_mismatch');
  });

  it('a mobile B sign-in through its custom scheme completes (code exchange without a secret); a code is redeemed only with its own redirect', async () => {
    const redirect = 'com.example.mobileb:/oauth2redirect';
    const codeFor = async () => {
      const verifier = createVerifier();
      const r = await playBrowser(
        authUrl({ client_id: 'mobile-b.apps.mock', redirect_uri: redirect, code_challenge: challengeS256(verifier), code_challenge_method: 'S256' }),
      );
      const loc = new URL(r.location!);
      expect(`${loc.protocol}${loc.pathname}`).toBe(redirect);
      return { code: loc.searchParams.get('code')!, verifier };
    };
    const first = await codeFor();
    const ok = await postForm(`${mock.url}/token`, {
      grant_type: 'authorization_code',
      code: first.code,
      code_verifier: first.verifier,
      redirect_uri: redirect,
      client_id: 'mobile-b.apps.mock',
    });
    expect(ok.status, JSON.stringify(ok.json)).toBe(200);
    expect(ok.json.access_token).toBeTruthy();
    const second = await codeFor();
    const other = await postForm(`${mock.url}/token`, {
      grant_type: 'authorization_code',
      code: second.code,
      code_verifier: second.verifier,
      redirect_uri: 'http://127.0.0.1:8080/',
      client_id: 'mobile-b.apps.mock',
    });
    expect(other.status).toBe(400);
    expect(other.json.error).toMatch(/invalid_grant|redirect_uri_mismatch/);
  });
});

/** A whole sign-in through the consent page (every box ticked unless told), then the code exchange. */
async function signIn(clientId: string, secret: string, scope = `openid email ${READ}`, scopes?: string[]) {
  const verifier = createVerifier();
  const redirect = 'http://127.0.0.1:53682/';
  const r = await playBrowser(authUrl({ client_id: clientId, scope, code_challenge: challengeS256(verifier), code_challenge_method: 'S256' }), { scopes });
  expect(r.consentStatus, r.consentPage).toBe(302);
  const code = new URL(r.location!).searchParams.get('code')!;
  const tok = await postForm(`${mock.url}/token`, {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: redirect,
    client_id: clientId,
    client_secret: secret,
  });
  expect(tok.status).toBe(200);
  return { ...tok.json, page: r.page } as { access_token: string; scope: string; page: string };
}

describe('a project whose data API is not enabled', () => {
  it("its tokens are refused by the data API with 403 accessNotConfigured / SERVICE_DISABLED naming the project; another project's token works", async () => {
    const off = await signIn('no-data-api.apps.mock', 'no-data-api-secret');
    const res = await request(`${mock.url}/media/v3/channels?part=id&mine=true`, { headers: { authorization: `Bearer ${off.access_token}` } });
    expect(res.statusCode).toBe(403);
    const body = (await res.body.json()) as any;
    expect(body.error.status).toBe('PERMISSION_DENIED');
    expect(body.error.errors[0]).toMatchObject({ reason: 'accessNotConfigured', domain: 'usageLimits' });
    expect(body.error.message).toContain('has not been used in project 400000000042 before or it is disabled');
    expect(body.error.details[0]).toMatchObject({ reason: 'SERVICE_DISABLED', metadata: { consumer: 'projects/400000000042' } });

    const on = await signIn(DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET);
    const ok = await request(`${mock.url}/media/v3/channels?part=id&mine=true`, { headers: { authorization: `Bearer ${on.access_token}` } });
    expect(ok.statusCode).toBe(200);
    await ok.body.dump();
  });

  it("the built binary: signed in with that client, `opsctl api` exits 1 with the server's message and a hint to enable the API (not to sign in again)", async () => {
    const { dir, cleanup } = tempConfigDir('opsctl-seed-rules-');
    try {
      const env = { OPSCTL_CONFIG_DIR: dir, OPSCTL_CLIENT_ID: 'no-data-api.apps.mock', OPSCTL_CLIENT_SECRET: 'no-data-api-secret' };
      const login = await runBin(['login', '--consent-as', 'alice@example.com'], { env });
      expect(login.exitCode, String(login.stderr)).toBe(0);
      const r = await runBin(['api', '/media/v3/channels', '-f', 'part=id', '-f', 'mine=true'], { env });
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toContain('has not been used in project 400000000042 before or it is disabled');
      expect(r.stderr).toContain(
        'the API is not enabled for the project of the client you signed in with: enable it at https://console.developers.google.com/apis/api/media.googleapis.com/overview?project=400000000042',
      );
      expect(r.stderr).not.toContain('lack a scope');
    } finally {
      cleanup();
    }
  });
});

describe('clients trusted for domain-wide delegation skip granular consent', () => {
  it('no scope boxes; with none ticked the app still gets every requested scope (all or nothing); an ordinary client gets only what was ticked', async () => {
    const delegated = await signIn('delegated-desktop.apps.mock', 'delegated-secret', `openid email ${READ} ${UPLOAD}`, []);
    expect(delegated.page).not.toContain('type="checkbox"');
    expect(delegated.page).toContain('an app with domain-wide delegation: it gets all of these or nothing');
    expect(delegated.scope.split(' ').sort()).toEqual(['email', 'openid', READ, UPLOAD].sort());

    const ordinary = await signIn(DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET, `openid email ${READ} ${UPLOAD}`, [READ]);
    expect(ordinary.page).toContain('type="checkbox"');
    expect(ordinary.scope.split(' ').sort()).toEqual(['email', 'openid', READ].sort());
  });

  it('deny still denies: access_denied by redirect, nothing granted', async () => {
    const r = await playBrowser(authUrl({ client_id: 'delegated-desktop.apps.mock', state: 's1' }), { action: 'deny' });
    expect(r.consentStatus).toBe(302);
    expect(new URL(r.location!).searchParams.get('error')).toBe('access_denied');
  });
});

describe('the built binary meets the redirect rule', () => {
  it('login with a mobile client id (a loopback listener): exit 1 naming redirect_uri_mismatch and why, nothing stored', async () => {
    const { dir, cleanup } = tempConfigDir('opsctl-seed-rules-');
    try {
      const r = await runBin(['login', '--consent-as', 'alice@example.com'], { env: { OPSCTL_CONFIG_DIR: dir, OPSCTL_CLIENT_ID: 'mobile-b.apps.mock' } });
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toContain('answered 400: redirect_uri_mismatch (Loopback IP redirects');
      expect(r.stderr).toContain('deprecated for mobile platform B clients');
      expect(r.stderr).not.toMatch(/seeded account|unexpected error/);
      expect(String(r.stdout)).toBe('');
    } finally {
      cleanup();
    }
  });
});
