import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { readCredentials } from '../helpers/credentials.js';
import { authorizationUrl, requireChromium, withChromiumPage } from '../helpers/chromium.js';
import { OIDC_CLIENT_ID, signInThroughPages, startOidcProvider, type OidcProviderHandle } from '../helpers/oidc-provider.mjs';

/**
 * The built opsctl against oidc-provider (the certified OpenID Connect implementation, written by others),
 * signing in through its own login and consent pages, which the test plays over HTTP like a browser.
 */
describe('opsctl login against oidc-provider (built binary, --no-browser)', () => {
  let op: OidcProviderHandle;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const profile = 'oidc';

  beforeAll(async () => {
    op = await startOidcProvider();
    dir = mkdtempSync(join(tmpdir(), 'opsctl-e2e-oidc-'));
    env = { OPSCTL_CONFIG_DIR: dir, OPSCTL_PROFILE: profile };
    for (const [k, v] of [
      ['issuer', op.issuer],
      ['client_id', OIDC_CLIENT_ID],
    ] as const) {
      const r = await runBin(['config', 'set', k, v, '--profile', profile], { env });
      expect(r.exitCode, r.stderr as string).toBe(0);
    }
  });
  afterAll(async () => {
    await op?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const credsFile = () => join(dir, 'credentials.json');
  const stored = () => readCredentials(credsFile())[profile]?.oauth;

  /**
   * Runs `opsctl login --no-browser`, reads the URL it prints, lets `tamper` change it (an attacker's
   * hand), signs in through oidc-provider's pages and lets the "browser" land on opsctl's listener.
   */
  async function signIn(scopes: string[], opts: { login?: string; tamper?: (u: URL) => void; envOverride?: NodeJS.ProcessEnv; command?: string[] } = {}) {
    const child = runBin([...(opts.command ?? ['login']), '--no-browser', '--timeout', '1m', '--scopes', ...scopes], { env: { ...env, ...opts.envOverride } });
    let stderr = '';
    const printed = await new Promise<string>((resolve, reject) => {
      child.stderr!.on('data', (c: Buffer) => {
        stderr += c.toString();
        const m = /(http:\/\/127\.0\.0\.1:\d+\/auth\?\S+)/.exec(stderr);
        if (m) resolve(m[1]!);
      });
      void child.then((r) => reject(new Error(`login exited ${r.exitCode} before printing a URL: ${stderr}`)));
    });
    const url = new URL(printed);
    opts.tamper?.(url);
    const { location, pages } = await signInThroughPages(url.toString(), opts.login ?? 'alice');
    const landing = await fetch(location);
    const page = await landing.text();
    const done = await child;
    return { done, url: new URL(printed), location, pages, page, status: landing.status };
  }

  it('signs in through the login and consent pages: PKCE S256, nonce, discovery cached, ID token checked, tokens stored', async () => {
    const r = await signIn(['openid', 'email', 'offline_access', 'api:read']);
    expect(r.done.exitCode, r.done.stderr as string).toBe(0);
    expect(r.pages).toEqual(['login', 'consent']);
    expect(r.url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(r.url.searchParams.get('nonce')).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(r.url.searchParams.get('prompt')).toBe('consent');
    expect(r.url.searchParams.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    // oidc-provider sends RFC 9207's iss with the code; opsctl checked it.
    expect(r.location.searchParams.get('iss')).toBe(op.issuer);
    expect(r.status).toBe(200);
    expect(r.page).toContain('Signed in to opsctl');
    // a provider on loopback named as an issuer is not opsctl's mock: no --consent-as advice
    expect(String(r.done.stderr)).not.toContain('local mock');
    // The ID token says sub "alice"; the e-mail comes from the provider's userinfo endpoint (same sub).
    expect(r.done.stdout).toContain('account:   alice@example.org');
    expect(r.done.stdout).toMatch(/granted:\s+openid email offline_access api:read/);
    const s = stored();
    expect(s).toMatchObject({ client_id: OIDC_CLIENT_ID, token_url: `${op.issuer}/token`, account: 'alice@example.org' });
    expect(s.refresh_token).toBeTruthy();
    // The metadata was fetched once and cached in the data directory.
    const cacheDir = join(dir, 'data', 'oidc-metadata');
    const [cached] = readdirSync(cacheDir);
    expect(JSON.parse(readFileSync(join(cacheDir, cached!), 'utf8')).metadata).toMatchObject({
      issuer: op.issuer,
      revocation_endpoint: `${op.issuer}/token/revocation`,
    });

    const status = await runBin(['auth', 'status', '--json'], { env });
    expect(status.exitCode, status.stderr as string).toBe(0);
    expect(JSON.parse(status.stdout as string)).toMatchObject({ account: 'alice@example.org', missing_scopes: [], refresh_token: true });
  });

  it("--consent-as is refused against a real provider on loopback (it plays only the mock's consent form): exit 2, nothing stored", async () => {
    const file = () => (existsSync(credsFile()) ? readFileSync(credsFile(), 'utf8') : undefined);
    const before = file();
    const r = await runBin(['login', '--consent-as', 'alice@example.com', '--timeout', '1m'], { env });
    expect(r.exitCode).toBe(2);
    expect(String(r.stderr)).toContain('--consent-as only works against a local mock authorization server');
    expect(file()).toBe(before);
  });

  it('partial scopes: the provider grants fewer than asked, and opsctl names the missing ones', async () => {
    const r = await signIn(['openid', 'offline_access', 'api:read', 'api:admin']);
    expect(r.done.exitCode, r.done.stderr as string).toBe(0);
    expect(r.done.stderr).toMatch(/not granted: api:admin/);
    expect(r.done.stdout).toMatch(/missing:\s+api:admin/);
    const status = await runBin(['auth', 'status', '--json'], { env });
    expect(JSON.parse(status.stdout as string).missing_scopes).toEqual(['api:admin']);
  });

  it('auth refresh --scopes asks oidc-provider only for the new scope; it ignores include_granted_scopes, so opsctl keeps the union on record and says so', async () => {
    expect((await signIn(['openid', 'email', 'offline_access', 'api:read'])).done.exitCode).toBe(0);
    const before = stored();
    const r = await signIn(['api:write'], { command: ['auth', 'refresh', '--json'] });
    expect(r.done.exitCode, r.done.stderr as string).toBe(0);
    // The API scope alone, plus the protocol scopes already granted (so the answer names the same user).
    expect(r.url.searchParams.get('scope')).toBe('openid email offline_access api:write');
    expect(r.url.searchParams.get('include_granted_scopes')).toBe('true');
    expect(r.url.searchParams.get('login_hint')).toBe('alice@example.org');
    const out = JSON.parse(r.done.stdout as string);
    // oidc-provider (no include_granted_scopes support) answers with the new scope alone: opsctl says so,
    // and keeps the earlier grant (still live at the provider through its refresh token) on record.
    expect(out).toMatchObject({ account: 'alice@example.org', added: ['api:write'], include_granted_scopes_honoured: false });
    expect(r.done.stderr).toContain('ignored include_granted_scopes');
    expect(new Set(out.scopes)).toEqual(new Set(['openid', 'email', 'offline_access', 'api:read', 'api:write']));
    const after = stored();
    expect(after.account).toBe('alice@example.org');
    expect(after.refresh_token).not.toBe(before.refresh_token);
    const status = await runBin(['auth', 'status', '--json'], { env });
    expect(status.exitCode, status.stderr as string).toBe(0);
    expect(JSON.parse(status.stdout as string)).toMatchObject({ account: 'alice@example.org', missing_scopes: [] });
    // The earlier grant still stands at the provider: its refresh token gets a token for api:read.
    const res = await fetch(`${op.issuer}/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: before.refresh_token, client_id: OIDC_CLIENT_ID }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { scope: string }).scope.split(' ')).toContain('api:read');
  });

  it('refreshes an expiring access token at the provider, and checks the refreshed ID token', async () => {
    expect((await signIn(['openid', 'email', 'offline_access'])).done.exitCode).toBe(0);
    const before = stored();
    writeFileSync(credsFile(), JSON.stringify({ [profile]: { oauth: { ...before, expires_at: Date.now() + 1000 } } }), { mode: 0o600 });
    const t = await runBin(['auth', 'token'], { env });
    expect(t.exitCode, t.stderr as string).toBe(0);
    const after = stored();
    expect((t.stdout as string).trim()).toBe(after.access_token);
    expect(after.access_token).not.toBe(before.access_token);
    expect(after.expires_at).toBeGreaterThan(Date.now() + 30 * 60 * 1000);
    // oidc-provider rotates refresh tokens of public clients: the stored one is the new one.
    expect(after.refresh_token).toBeTruthy();
  });

  it('logout revokes at the provider; the old refresh token then gets invalid_grant', async () => {
    expect((await signIn(['openid', 'offline_access'])).done.exitCode).toBe(0);
    const { refresh_token } = stored();
    const out = await runBin(['logout'], { env });
    expect(out.exitCode, out.stderr as string).toBe(0);
    expect(out.stderr).toContain('tokens revoked on the server');
    // Signed in without the email scope, the account is named by its subject; that one is gone.
    expect(stored()?.account).not.toBe('alice');
    expect(readCredentials(credsFile())[profile].accounts.map((a: { account: string }) => a.account)).not.toContain('alice');
    const res = await fetch(`${op.issuer}/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token, client_id: OIDC_CLIENT_ID }),
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toBe('invalid_grant');
  });

  it('a grant revoked elsewhere: the next refresh gets invalid_grant, exit 4 "run opsctl login"', async () => {
    expect((await signIn(['openid', 'offline_access'])).done.exitCode).toBe(0);
    const s = stored();
    expect((await runBin(['auth', 'status'], { env })).exitCode).toBe(0);
    const rv = await fetch(`${op.issuer}/token/revocation`, {
      method: 'POST',
      body: new URLSearchParams({ token: s.refresh_token, client_id: OIDC_CLIENT_ID }),
    });
    expect(rv.status).toBe(200);
    // auth status asks the provider's userinfo endpoint, which refuses the access token of the revoked grant;
    // the refresh then fails with invalid_grant.
    const st = await runBin(['auth', 'status'], { env });
    expect(st.exitCode, st.stderr as string).toBe(4);
    expect(st.stderr).toContain('invalid_grant');
    writeFileSync(credsFile(), JSON.stringify({ [profile]: { oauth: { ...s, expires_at: Date.now() - 1000 } } }), { mode: 0o600 });
    const t = await runBin(['auth', 'token'], { env });
    expect(t.exitCode).toBe(4);
    expect(t.stderr).toContain('invalid_grant');
    expect(t.stderr).toContain('run: opsctl login');
  });

  it('the nonce check: a code obtained for another nonce (injected) or without one is refused, exit 4, nothing stored', async () => {
    rmSync(credsFile(), { force: true });
    const swapped = await signIn(['openid', 'offline_access'], { tamper: (u) => u.searchParams.set('nonce', 'attacker-chosen-nonce-0123456789') });
    expect(swapped.done.exitCode).toBe(4);
    expect(swapped.done.stderr).toMatch(/ID token .*refused: its "nonce" is not the one opsctl sent/);
    expect(swapped.page).toContain('Sign-in failed');
    expect(existsSync(credsFile()) ? stored() : undefined).toBeUndefined();

    const dropped = await signIn(['openid', 'offline_access'], { tamper: (u) => u.searchParams.delete('nonce') });
    expect(dropped.done.exitCode).toBe(4);
    expect(dropped.done.stderr).toMatch(/carries no "nonce", but opsctl sent one/);
    expect(existsSync(credsFile()) ? stored() : undefined).toBeUndefined();
  });
});

describe('opsctl against oidc-provider without a revocation endpoint', () => {
  let op: OidcProviderHandle;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    op = await startOidcProvider({ revocation: false });
    dir = mkdtempSync(join(tmpdir(), 'opsctl-e2e-oidc-norevoke-'));
    env = { OPSCTL_CONFIG_DIR: dir, OPSCTL_ISSUER: op.issuer, OPSCTL_CLIENT_ID: OIDC_CLIENT_ID };
  });
  afterAll(async () => {
    await op?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('logout forgets locally, says it could not revoke, exit 0', async () => {
    const child = runBin(['login', '--no-browser', '--timeout', '1m'], { env });
    let stderr = '';
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr!.on('data', (c: Buffer) => {
        stderr += c.toString();
        const m = /(http:\/\/127\.0\.0\.1:\d+\/auth\?\S+)/.exec(stderr);
        if (m) resolve(m[1]!);
      });
      void child.then((r) => reject(new Error(`login exited ${r.exitCode}: ${stderr}`)));
    });
    // The issuer's default scopes: openid email offline_access.
    expect(new URL(url).searchParams.get('scope')).toBe('openid email offline_access');
    const { location } = await signInThroughPages(url, 'bob');
    await (await fetch(location)).text();
    const done = await child;
    expect(done.exitCode, done.stderr as string).toBe(0);

    const out = await runBin(['logout', '--json'], { env });
    expect(out.exitCode, out.stderr as string).toBe(0);
    expect(JSON.parse(out.stdout as string)).toMatchObject({ revoked: false, revocation_supported: false, removed: true });
    expect(out.stderr).toMatch(/no revocation endpoint.*could not revoke/);
    expect(readCredentials(join(dir, 'credentials.json')).embedded?.oauth).toBeUndefined();
  });
});

const haveChromium = requireChromium();

describe.skipIf(!haveChromium)('opsctl login against oidc-provider in real Chromium', () => {
  let op: OidcProviderHandle;
  let dir: string;

  beforeAll(async () => {
    op = await startOidcProvider();
    dir = mkdtempSync(join(tmpdir(), 'opsctl-e2e-oidc-chromium-'));
  });
  afterAll(async () => {
    await op?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a user fills oidc-provider's login and consent pages in the browser; opsctl stores the checked sign-in", async () => {
    const env = { OPSCTL_CONFIG_DIR: dir, OPSCTL_ISSUER: op.issuer, OPSCTL_CLIENT_ID: OIDC_CLIENT_ID };
    const child = runBin(['login', '--no-browser', '--timeout', '2m', '--scopes', 'openid', 'email', 'offline_access', 'api:read'], { env });
    const url = await authorizationUrl(child, /(http:\/\/127\.0\.0\.1:\d+\/auth\?\S+)/);
    await withChromiumPage(async (page) => {
      // The pages @import a web font; nothing leaves loopback.
      await page.route(/^https?:\/\/(?!127\.0\.0\.1)/, (route) => route.abort());
      await page.goto(url);
      await page.locator('input[name="login"]').fill('carol');
      await page.locator('input[name="password"]').fill('any password');
      await page.locator('button[type="submit"]').click();
      await page.locator('input[name="prompt"][value="consent"]').waitFor({ state: 'attached', timeout: 15_000 });
      await Promise.all([page.waitForURL(/^http:\/\/127\.0\.0\.1:\d+\/\?code=/), page.locator('button[type="submit"]').click()]);
      await page.locator('#result').waitFor({ timeout: 15_000 });
      expect(await page.locator('#result').textContent()).toBe('Signed in to opsctl');
    });
    const done = await child;
    expect(done.exitCode, done.stderr as string).toBe(0);
    expect(done.stdout).toContain('account:   carol@example.org');
    const status = await runBin(['auth', 'status', '--json'], { env });
    expect(JSON.parse(status.stdout as string)).toMatchObject({ account: 'carol@example.org', missing_scopes: [], refresh_token: true });
  });
});
