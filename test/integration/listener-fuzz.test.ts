import { execa } from 'execa';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { rawRequest, seeded, type RawRequest, type Rng } from '../helpers/fuzz.js';
import { startMock } from '../helpers/mock.js';
import { followRedirect, playBrowser } from '../helpers/oauth-browser.js';

/**
 * The loopback listener of a running `opsctl login` (the built binary) under a few hundred malformed
 * requests from a local process: each is answered (400 for what cannot be parsed, 404 for a stray
 * path), none ends the sign-in, and a valid callback afterwards still completes it.
 */
const SEED = 20;
const COUNT = 300;

let mock: Awaited<ReturnType<typeof startMock>>;
let cfg: ReturnType<typeof tempConfigDir>;
beforeAll(async () => {
  mock = await startMock({ services: ['oauth', 'api'] });
});
afterAll(async () => {
  await mock.close();
});
beforeEach(() => {
  cfg = tempConfigDir('opsctl-listener-fuzz-');
});
afterEach(() => cfg.cleanup());

/** Known-bad request lines and headers first, then random ones. */
function requests(rng: Rng, n: number): RawRequest[] {
  const fixed: RawRequest[] = [
    { method: 'GET', target: 'http://[x/', label: 'absolute URL with a broken IPv6 host' },
    { method: 'GET', target: '//[::1', label: 'scheme-relative broken host' },
    { method: 'GET', target: 'http://', label: 'scheme only' },
    { method: 'GET', target: '/?code=a&state=%ZZ', label: 'bad percent escape' },
    { method: 'G\u0001T', target: '/', label: 'control character in the method' },
    { method: 'FOO BAR', target: '/', label: 'space in the method' },
    { method: 'POST', target: '/?code=x&state=y', body: 'code=x', label: 'POST to the callback' },
    { method: 'GET', target: '/', headers: { 'x-big': 'a'.repeat(20_000) }, label: 'headers over the limit' },
    { method: 'GET', target: '/\u0000', label: 'NUL in the target' },
    { method: 'GET', target: '/?code=abc&state=wrong', label: 'wrong state' },
    { method: 'GET', target: '/', headers: { 'content-length': '-1' }, label: 'negative content-length' },
    { method: 'GET', target: '/', headers: { 'transfer-encoding': 'chunked', 'content-length': '3' }, label: 'both TE and CL' },
  ];
  const methods = ['GET', 'POST', 'PUT', 'DELETE', 'HEAD', 'OPTIONS', 'BREW', 'G ET', '\u00ff', ''];
  const targets = [
    'http://[x/',
    '/',
    '*',
    '/?code=',
    '/?state=',
    '/favicon.ico',
    'http://[',
    '%',
    '/?code=%00',
    'http://a:b@[::1/',
    '/'.repeat(300),
    '/?' + 'a=b&'.repeat(200),
    'http://127.0.0.1:99999/',
    '\\\\',
    '/?code=x&error=y',
  ];
  const out = [...fixed];
  while (out.length < n) {
    const target = rng.pick(targets) + (rng.int(3) === 0 ? String.fromCharCode(rng.int(256)) : '');
    const headers: Record<string, string> = {};
    if (rng.int(4) === 0) headers['x-junk'] = 'v'.repeat(rng.int(3) === 0 ? 17_000 : 10);
    if (rng.int(6) === 0) headers.host = '[';
    out.push({ method: rng.pick(methods), target, headers, label: `random #${out.length}` });
  }
  return out;
}

function looksLikeFragmentRedirect(target: string): boolean {
  if (!URL.canParse(target, 'http://127.0.0.1')) return false;
  const u = new URL(target, 'http://127.0.0.1');
  return u.pathname === '/' && !u.searchParams.get('state') && [...u.searchParams.keys()].every((k) => ['code', 'error', 'state', 'scope'].includes(k));
}

describe('the loopback listener of opsctl login (built binary) under malformed requests', () => {
  it(`answers ${COUNT} malformed requests without ending the sign-in; a valid callback then completes it`, async () => {
    const child = execa(process.execPath, [BIN, 'login', '--no-browser', '--scopes', 'openid', 'email', '--timeout', '2m'], {
      reject: false,
      env: { NO_COLOR: '1', OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_AUTH_URL: mock.url, OPSCTL_API_URL: mock.url },
      stdin: 'pipe',
    });
    let stderr = '';
    const authUrl = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no sign-in URL within 20 s; stderr: ${stderr}`)), 20_000);
      child.stderr.on('data', (c: Buffer) => {
        stderr += c.toString();
        const m = /(http:\/\/127\.0\.0\.1:\d+\/o\/oauth2\/v2\/auth\?\S+)/.exec(stderr);
        if (m && stderr.includes('Waiting for the browser')) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
    });
    const port = Number(new URL(new URL(authUrl).searchParams.get('redirect_uri')!).port);
    const statuses = new Map<string, number>();
    const failures: string[] = [];
    for (const r of requests(seeded(SEED), COUNT)) {
      const out = await rawRequest(port, r, 5_000);
      const key = String(out.status);
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
      // 200 only for what a real redirect with its response after `#` looks like (`GET /`, maybe with a
      // code but no state): the fragment page, which changes nothing and ends nothing
      const fragmentPage = out.status === 200 && r.method === 'GET' && looksLikeFragmentRedirect(r.target);
      if (!fragmentPage && (typeof out.status !== 'number' || out.status >= 500 || out.status < 400)) failures.push(`${r.label}: ${JSON.stringify(out)}`);
      expect(child.exitCode, `${r.label} ended opsctl login: ${stderr}`).toBeNull();
    }
    expect(failures).toEqual([]);
    // the fixed known-bad ones specifically get a 400
    expect(statuses.get('400')).toBeGreaterThanOrEqual(8);
    console.log(`listener fuzz: ${COUNT} requests, seed ${SEED}, statuses ${JSON.stringify(Object.fromEntries(statuses))}`);

    const consent = await playBrowser(authUrl, { email: 'alice@example.com' });
    expect(consent.location).toBeTruthy();
    const back = await followRedirect(consent.location!);
    expect(back.status).toBe(200);
    const r = await child;
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/TypeError|unexpected error/);
    const list = await execa(process.execPath, [BIN, 'auth', 'list', '--json'], {
      reject: false,
      env: { NO_COLOR: '1', OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_AUTH_URL: mock.url, OPSCTL_API_URL: mock.url },
    });
    expect(list.exitCode, list.stderr).toBe(0);
    expect((JSON.parse(list.stdout) as Array<{ account: string; active: boolean }>).filter((a) => a.active).map((a) => a.account)).toEqual([
      'alice@example.com',
    ]);
  }, 120_000);
});
