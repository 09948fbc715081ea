import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPE_BASE } from '../../src/auth/scopes.js';
import { runBin } from '../helpers/bin.js';
import { authorizationUrl, requireChromium, withChromiumPage } from '../helpers/chromium.js';
import { startMock } from '../helpers/mock.js';

const haveChromium = requireChromium();

describe.skipIf(!haveChromium)('opsctl login in real Chromium (built binary, --no-browser)', () => {
  let mock: Awaited<ReturnType<typeof startMock>>;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    mock = await startMock({ services: ['oauth', 'api'] });
    dir = mkdtempSync(join(tmpdir(), 'opsctl-e2e-login-'));
    env = { OPSCTL_CONFIG_DIR: join(dir, 'config'), OPSCTL_AUTH_URL: mock.url, OPSCTL_API_URL: mock.url };
  });
  afterAll(async () => {
    await mock?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('signs in granting a subset, then status, the 0600 file, api, logout, and api fails with exit 4', async () => {
    const child = runBin(['login', '--no-browser', '--scopes', 'openid', 'email', 'media.readonly', 'media.upload', '--timeout', '2m'], { env });
    const url = await authorizationUrl(child, /(http:\/\/127\.0\.0\.1:\d+\/o\/oauth2\/v2\/auth\?\S+)/);

    await withChromiumPage(async (page) => {
      await page.goto(url);
      await page.locator('input[data-email="alice@example.com"]').check();
      // Granular consent starts with nothing ticked: the user ticks media.readonly and leaves media.upload.
      expect(await page.locator(`input[data-scope="${SCOPE_BASE}/media.upload"]`).isChecked()).toBe(false);
      await page.locator(`input[data-scope="${SCOPE_BASE}/media.readonly"]`).check();
      await Promise.all([page.waitForURL(/^http:\/\/127\.0\.0\.1:\d+\/\?code=/), page.locator('#allow').click()]);
      await page.locator('#result').waitFor({ timeout: 15_000 });
      expect(await page.locator('#result').textContent()).toBe('Signed in to opsctl');
      expect(await page.locator('#result').getAttribute('data-ok')).toBe('true');
    });

    const done = await child;
    expect(done.exitCode, done.stderr as string).toBe(0);
    expect(done.stdout).toContain('alice@example.com');
    expect(done.stderr).toMatch(/not granted: media\.upload/);

    const status = await runBin(['auth', 'status', '--json'], { env });
    expect(status.exitCode).toBe(0);
    const s = JSON.parse(status.stdout as string);
    expect(s).toMatchObject({ account: 'alice@example.com', source: 'file', missing_scopes: [`${SCOPE_BASE}/media.upload`] });
    expect(statSync(s.stored_in).mode & 0o777).toBe(0o600);

    const api = await runBin(['api', '/media/v3/channels', '-f', 'part=snippet', '-f', 'mine=true'], { env });
    expect(api.exitCode).toBe(0);
    expect(JSON.parse(api.stdout as string).items[0].snippet.title).toBe("alice's channel");

    const out = await runBin(['logout'], { env });
    expect(out.exitCode).toBe(0);
    const after = await runBin(['api', '/media/v3/channels', '-f', 'part=snippet', '-f', 'mine=true'], { env });
    expect(after.exitCode).toBe(4);
  });
});

describe.skipIf(!haveChromium)('a provider that answers after # (state only, or everything, in the fragment), in real Chromium', () => {
  for (const mode of ['state', 'all'] as const) {
    it(`recovers the response from the fragment (${mode === 'state' ? 'state only' : 'code, scope and state'} after #) and signs in`, async () => {
      const mock = await startMock({ services: ['oauth'], options: { oauth: { responseInFragment: mode } } });
      const dir = mkdtempSync(join(tmpdir(), 'opsctl-e2e-fragment-'));
      try {
        const env = { OPSCTL_CONFIG_DIR: join(dir, 'config'), OPSCTL_AUTH_URL: mock.url, DBUS_SESSION_BUS_ADDRESS: '' };
        const child = runBin(['login', '--no-browser', '--scopes', 'openid', 'email', '--timeout', '2m', '--insecure-storage'], { env });
        const url = await authorizationUrl(child, /(http:\/\/127\.0\.0\.1:\d+\/o\/oauth2\/v2\/auth\?\S+)/);
        await withChromiumPage(async (page) => {
          const seen: string[] = [];
          const csp: string[] = [];
          page.on('request', (r) => seen.push(r.url()));
          page.on('response', (r) => void r.allHeaders().then((h) => h['content-security-policy'] && csp.push(h['content-security-policy'])));
          await page.goto(url);
          await page.locator('input[data-email="alice@example.com"]').check();
          await Promise.all([page.waitForURL(/opsctl_fragment=1/), page.locator('#allow').click()]);
          await page.locator('#result').waitFor({ timeout: 15_000 });
          expect(await page.locator('#result').textContent()).toBe('Signed in to opsctl');
          // The redirect carried state only after '#': the listener saw no state until its page asked again.
          const landing = seen.find((u) => /^http:\/\/127\.0\.0\.1:\d+\/(\?|#|$)/.test(u) && !u.includes('opsctl_fragment'));
          expect(landing).toBeDefined();
          expect(new URL(landing!).searchParams.get('state')).toBeNull();
          if (mode === 'all') expect(new URL(landing!).searchParams.get('code')).toBeNull();
          // Everything the page loaded came from the listener itself; its script ran under a nonce CSP.
          const listenerOrigin = new URL(landing!).origin;
          expect(seen.filter((u) => u.startsWith(listenerOrigin)).every((u) => new URL(u).pathname === '/')).toBe(true);
          expect(csp.some((c) => /script-src 'nonce-[\w-]+'/.test(c) && c.includes("default-src 'none'"))).toBe(true);
        });
        const done = await child;
        expect(done.exitCode, done.stderr as string).toBe(0);
        expect(done.stdout).toContain('alice@example.com');
      } finally {
        await mock.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
