import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Agent } from 'undici';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli.js';
import { createContext, type WiredContext } from '../../src/wiring/context.js';
import { IOStreams } from '../../src/core/io.js';
import { accessToken } from '../../src/auth/access-token.js';
import { SCOPE_BASE } from '../../src/auth/scopes.js';
import { DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET } from '@opsctl/mock/services/oauth/registry.js';
import { runCli, tempConfigDir } from '../helpers/cli.js';
import { readCredentials } from '../helpers/credentials.js';
import { startMock, type TestState } from '../helpers/mock.js';
import { followRedirect, playBrowser, postForm, type ConsentChoice } from '../helpers/oauth-browser.js';

const READ = `${SCOPE_BASE}/media.readonly`;
const UPLOAD = `${SCOPE_BASE}/media.upload`;
let mock: Awaited<ReturnType<typeof startMock>>;
let clockOffset = 0;
let cfg: ReturnType<typeof tempConfigDir>;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  mock = await startMock({ services: ['oauth', 'api'], now: () => Date.now() + clockOffset });
});
afterAll(async () => {
  await mock.close();
});
beforeEach(() => {
  cfg = tempConfigDir();
  clockOffset = 0;
  // DISPLAY makes login "open a browser": the test's openBrowser plays the user over HTTP.
  env = { OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_AUTH_URL: mock.url, OPSCTL_API_URL: mock.url, DISPLAY: ':99' };
});
afterEach(() => cfg.cleanup());

/** A browser that consents as told and follows the redirect to the listener; records what it saw. */
function browser(choice: ConsentChoice = {}, seen: { page?: string; status?: number; url?: string } = {}) {
  return async (url: string) => {
    seen.url = url;
    void (async () => {
      const r = await playBrowser(url, choice);
      if (!r.location) return;
      const back = await followRedirect(r.location);
      seen.page = back.body;
      seen.status = back.status;
    })();
    return true;
  };
}

/** Polls for a condition (no fixed sleeps). */
async function until<T>(fn: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const login = (args: string[], choice: ConsentChoice = {}, seen = {}) => runCli(['login', ...args], { env, openBrowser: browser(choice, seen) });
const cli = (...argv: string[]) => runCli(argv, { env });
const creds = () => readCredentials(join(cfg.dir, 'credentials.json'));

describe('opsctl login with the test playing the browser', () => {
  it('all scopes granted: stores tokens 0600 in a 0700 dir, prints account and scopes; status, token, api work', async () => {
    const seen: { page?: string; status?: number; url?: string } = {};
    const r = await login(['--scopes', 'openid', 'email', 'media.readonly', '--login-hint', 'bob@example.com'], {}, seen);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('http://127.0.0.1:');
    expect(r.stderr).toContain('/o/oauth2/v2/auth?');
    expect(r.stdout).toContain('account:   bob@example.com');
    expect(r.stdout).toContain('media.readonly');
    expect(r.stderr).not.toContain('not granted');
    const u = new URL(seen.url!);
    expect(u.searchParams.get('code_challenge_method')).toBe('S256');
    expect(u.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(u.searchParams.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    await until(() => seen.page);
    expect(seen.status).toBe(200);
    expect(seen.page).toContain('Signed in to opsctl');

    const file = join(cfg.dir, 'credentials.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(cfg.dir).mode & 0o777).toBe(0o700);
    expect(creds().embedded.oauth).toMatchObject({ account: 'bob@example.com', client_id: DEFAULT_CLIENT_ID });
    expect(r.stdout + r.stderr).not.toContain(creds().embedded.oauth.access_token);

    const status = await cli('auth', 'status', '--json');
    expect(status.code).toBe(0);
    expect(status.json()).toMatchObject({
      account: 'bob@example.com',
      source: 'file',
      missing_scopes: [],
      scopes: ['openid', 'email', READ],
      refresh_token: true,
      stored_in: file,
    });
    const token = await cli('auth', 'token');
    expect(token.stdout.trim()).toBe(creds().embedded.oauth.access_token);
    const api = await cli('api', '/media/v3/channels', '-f', 'part=snippet', '-f', 'mine=true');
    expect(api.code).toBe(0);
    expect(JSON.parse(api.stdout).items[0].snippet.title).toBe("bob's channel");
  });

  it('a subset granted: warns naming the missing scope; auth status shows it; the API call is refused locally, and says 403 when forced', async () => {
    const r = await login(['--scopes', 'openid', 'email', 'media.upload', 'media.readonly'], { scopes: [UPLOAD] });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/not granted: media\.readonly/);
    const status = await cli('auth', 'status', '--json');
    expect(status.json().missing_scopes).toEqual([READ]);
    const text = await cli('auth', 'status');
    expect(text.stdout).toMatch(/missing:\s+media\.readonly/);
    // the feature whose scope is missing is off: refused before sending (exit 4), the fix named
    const refused = await cli('api', '/media/v3/channels', '-f', 'part=id', '-f', 'mine=true');
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain('opsctl auth refresh --scopes media.readonly');
    // --force-request sends it: the server's 403
    const api = await cli('api', '/media/v3/channels', '-f', 'part=id', '-f', 'mine=true', '--force-request');
    expect(api.code).toBe(1);
    expect(api.stderr).toContain('HTTP 403');
    expect(api.stderr).toContain('opsctl login --scopes');
    expect(JSON.parse(api.stdout).error.status).toBe('PERMISSION_DENIED');
  });

  it('denied: exit 4, nothing stored, the browser sees an error page', async () => {
    const seen: { page?: string } = {};
    const r = await login([], { action: 'deny' }, seen);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('access was denied');
    expect(existsSync(join(cfg.dir, 'credentials.json'))).toBe(false);
    await until(() => seen.page);
    expect(seen.page).toContain('Access denied');
    expect((await cli('auth', 'status')).code).toBe(4);
  });

  it('a callback with the wrong state is refused and the login carries on', async () => {
    let wrongPage = '';
    const r = await runCli(['login'], {
      env,
      openBrowser: async (url) => {
        void (async () => {
          const redirect = new URL(url).searchParams.get('redirect_uri')!;
          const forged = await followRedirect(`${redirect}?code=forged&state=not-the-state`);
          wrongPage = `${forged.status} ${forged.body}`;
          const real = await playBrowser(url);
          await followRedirect(real.location!);
        })();
        return true;
      },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(wrongPage).toMatch(/^400 /);
    expect(r.stderr).toContain('wrong state');
  });

  it('times out: exit 4, nothing stored', async () => {
    const r = await runCli(['login', '--timeout', '300ms'], { env, openBrowser: async () => false });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('could not open a browser');
    expect(r.stderr).toMatch(/timed out/);
    expect(existsSync(join(cfg.dir, 'credentials.json'))).toBe(false);
  });

  it('--consent-as (demo, local mock only) signs in without a browser; a consent it cannot give ends the wait at once (exit 2)', async () => {
    const ok = await cli('login', '--consent-as', 'bob@example.com');
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stderr).toContain('Signing in at 127.0.0.1');
    expect(ok.stderr).toContain("as bob@example.com: opsctl submits the mock's consent form itself (no browser)");
    // no browser is involved: no browser instructions, no URL to open, no wait for a browser
    expect(ok.stderr).not.toMatch(/in your browser|Waiting for the browser|Open this URL|client_id=/);
    expect(creds().embedded.oauth.account).toBe('bob@example.com');
    const bad = await cli('login', '--consent-as', 'nobody@example.com', '--timeout', '10m');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--consent-as: no consent form for nobody@example.com');
    expect(creds().embedded.oauth.account).toBe('bob@example.com');
  });

  it('Ctrl-C while waiting: exit 130, the listener is closed, nothing stored', async () => {
    let ctx: WiredContext | undefined;
    let redirect = '';
    const stderr = new PassThrough();
    let err = '';
    stderr.on('data', (c: Buffer) => (err += c.toString()));
    const io = new IOStreams({ stdin: new PassThrough(), stdout: new PassThrough(), stderr, env: { ...env, NO_COLOR: '1' } });
    const run = main(
      ['login'],
      {
        env: { ...env, NO_COLOR: '1' },
        io,
        openBrowser: async (url) => {
          redirect = new URL(url).searchParams.get('redirect_uri')!;
          return true;
        },
      },
      (c) => (ctx = c),
    );
    await until(() => err.includes('Waiting for the browser'));
    ctx!.abort.abort();
    expect(await run).toBe(130);
    expect(err).toContain('nothing was stored');
    await expect(followRedirect(`${redirect}?code=late&state=x`)).rejects.toThrow();
    expect(existsSync(join(cfg.dir, 'credentials.json'))).toBe(false);
  });

  it('--port in use: exit 2 naming --port', async () => {
    const busy = createServer();
    await new Promise<void>((res) => busy.listen(0, '127.0.0.1', () => res()));
    const port = (busy.address() as { port: number }).port;
    const r = await runCli(['login', '--port', String(port)], { env });
    busy.close();
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--port: port ${port}`);
  });

  it('--no-browser: prints the URL, never opens a browser, and accepts the redirected URL pasted back', async () => {
    const stdin = new PassThrough();
    const stderr = new PassThrough();
    const stdout = new PassThrough();
    let err = '';
    let opened = false;
    stderr.on('data', (c: Buffer) => {
      err += c.toString();
      const m = /(http:\/\/\S+\/o\/oauth2\/v2\/auth\?\S+)/.exec(err);
      if (m && !err.includes('#pasted')) {
        err += '#pasted';
        void playBrowser(m[1]!).then((b) => stdin.write(`garbage\n${b.location}\n`));
      }
    });
    stdout.resume();
    const io = new IOStreams({ stdin, stdout, stderr, env: { ...env, NO_COLOR: '1' }, stdinTTY: true, stdoutTTY: false, stderrTTY: false });
    const code = await main(['login', '--no-browser'], { env: { ...env, NO_COLOR: '1' }, io, openBrowser: async () => (opened = true) });
    expect(code, err).toBe(0);
    expect(opened).toBe(false);
    expect(err).toContain('paste it here');
    expect(err).toContain('that is not a URL');
    expect(creds().embedded.oauth.account).toBe('alice@example.com');
  });
});

describe('tokens over time', () => {
  it('refreshes when less than 5 minutes remain, once for concurrent callers', async () => {
    await mock.close();
    mock = await startMock({ services: ['oauth', 'api'], now: () => Date.now() + clockOffset, options: { oauth: { accessTokenTtlSeconds: 120 } } });
    env.OPSCTL_AUTH_URL = env.OPSCTL_API_URL = mock.url;
    expect((await login([])).code).toBe(0);
    const before = creds().embedded.oauth.access_token;
    mock.requests.length = 0;
    const ctx = createContext({ env, io: new IOStreams({ stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough(), env }) });
    const tokens = await Promise.all([accessToken(ctx), accessToken(ctx), accessToken(ctx)]);
    await ctx.cleanup();
    expect(new Set(tokens).size).toBe(1);
    expect(tokens[0]).not.toBe(before);
    expect(mock.requests.filter((r) => r.path === '/token')).toHaveLength(1);
    expect(creds().embedded.oauth.access_token).toBe(tokens[0]);
    // The refreshed token works on the API.
    expect((await cli('api', '/media/v3/channels', '-f', 'part=id', '-f', 'mine=true')).code).toBe(0);
  });

  it('a refresh never overwrites a logout or a new sign-in that another process made meanwhile', async () => {
    await mock.close();
    mock = await startMock({ services: ['oauth', 'api'], now: () => Date.now() + clockOffset, options: { oauth: { accessTokenTtlSeconds: 120 } } });
    // A token endpoint that refreshes at once but holds the answer until the test lets it through.
    let release!: () => void;
    let gate = Promise.resolve();
    let held = 0;
    const proxy = createHttpServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        void (async () => {
          const out = await postForm(`${mock.url}/token`, Object.fromEntries(new URLSearchParams(body)));
          if (body.includes('grant_type=refresh_token')) {
            held++;
            await gate;
          }
          res.writeHead(out.status, { 'content-type': 'application/json' }).end(JSON.stringify(out.json));
        })();
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    const own = new Agent();
    try {
      env = {
        ...env,
        OPSCTL_AUTH_URL: mock.url,
        OPSCTL_API_URL: mock.url,
        OPSCTL_TOKEN_URL: `http://127.0.0.1:${(proxy.address() as { port: number }).port}/token`,
      };
      const hold = () => {
        gate = new Promise<void>((r) => (release = r));
        held = 0;
      };

      expect((await login([])).code).toBe(0);
      hold();
      const refreshing = cli('auth', 'token');
      await until(() => held === 1);
      // "Another process": its own connection pool (one process's shutdown waits for its own requests only).
      expect((await runCli(['logout'], { env, dispatcher: own })).code).toBe(0);
      release();
      const r = await refreshing;
      expect(r.code).toBe(4);
      expect(r.stderr).toContain('signed out while');
      expect(creds().embedded?.oauth).toBeUndefined();

      expect((await login([])).code).toBe(0);
      hold();
      const again = cli('auth', 'token');
      await until(() => held === 1);
      // Alice signs in again elsewhere while her refresh is on the wire: the refresh must not overwrite that.
      expect((await runCli(['login'], { env, dispatcher: own, openBrowser: browser() })).code).toBe(0);
      const alices = creds().embedded.oauth.access_token;
      release();
      const t = await again;
      expect(t.code, t.stderr).toBe(0);
      expect(t.stdout.trim()).toBe(alices);
      expect(creds().embedded.oauth).toMatchObject({ account: 'alice@example.com', access_token: alices });
    } finally {
      release?.();
      proxy.close();
      await own.close();
    }
  });

  it('the embedded mock (a new port in every process): a later process refreshes, and a new sign-in revokes the old one', async () => {
    const embeddedEnv = { OPSCTL_CONFIG_DIR: cfg.dir, DISPLAY: ':99' };
    const signIn = () => runCli(['login'], { env: embeddedEnv, openBrowser: browser() });
    expect((await signIn()).code).toBe(0);
    const first = creds().embedded.oauth;
    // Make the access token due for a refresh in the next process.
    const file = join(cfg.dir, 'credentials.json');
    const all = creds();
    all.embedded.oauth.expires_at = Date.now() + 60_000;
    writeFileSync(file, JSON.stringify(all));
    const t = await runCli(['auth', 'token'], { env: embeddedEnv });
    expect(t.code, t.stderr).toBe(0);
    expect(t.stderr).not.toContain('could not refresh');
    expect(t.stdout.trim()).not.toBe(first.access_token);
    expect(creds().embedded.oauth.access_token).toBe(t.stdout.trim());
    // Signing in again withdraws the grant it replaces, on the embedded server too.
    expect((await signIn()).code).toBe(0);
    const state = JSON.parse(readFileSync(join(cfg.dir, 'data', 'mock-state.json'), 'utf8'));
    expect(state.oauth.refreshTokens[first.refresh_token].revoked).toBe(true);
  });

  it('a service whose clock runs ahead refuses the token as expired: refreshed once, the request sent again', async () => {
    await mock.close();
    mock = await startMock({
      services: ['oauth', 'api'],
      now: () => Date.now() + clockOffset,
      options: { oauth: { accessTokenTtlSeconds: 3600, refreshTokenTtlSeconds: 86_400 } },
    });
    env.OPSCTL_AUTH_URL = env.OPSCTL_API_URL = mock.url;
    expect((await login([])).code).toBe(0);
    const before = creds().embedded.oauth.access_token;
    clockOffset = 3_700_000; // our copy says 59 minutes are left; the server's clock says the token has ended
    mock.requests.length = 0;
    const r = await cli('api', '/media/v3/channels', '-f', 'part=id', '-f', 'mine=true', '--debug');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('invalid_token: sending again with renewed credentials');
    // (the refreshed ID token is checked against the server's metadata and keys in between)
    expect(mock.requests.map((q) => q.path).filter((p) => p === '/token' || p.startsWith('/media/'))).toEqual([
      '/media/v3/channels',
      '/token',
      '/media/v3/channels',
    ]);
    expect(creds().embedded.oauth.access_token).not.toBe(before);
    expect(r.stderr).not.toContain(before);

    // a token that cannot be renewed (OPSCTL_ACCESS_TOKEN) is refused as before: exit 4, one request
    clockOffset = 7_400_000;
    mock.requests.length = 0;
    const fixed = await runCli(['api', '/media/v3/channels', '-f', 'part=id', '-f', 'mine=true'], { env: { ...env, OPSCTL_ACCESS_TOKEN: before } });
    expect(fixed.code).toBe(4);
    expect(mock.requests.map((q) => q.path)).toEqual(['/media/v3/channels']);
  });

  it('an expired refresh token: auth token exits 4 telling to run opsctl login', async () => {
    await mock.close();
    mock = await startMock({
      services: ['oauth', 'api'],
      now: () => Date.now() + clockOffset,
      options: { oauth: { accessTokenTtlSeconds: 60, refreshTokenTtlSeconds: 600 } },
    });
    env.OPSCTL_AUTH_URL = env.OPSCTL_API_URL = mock.url;
    expect((await login([])).code).toBe(0);
    expect((await cli('auth', 'status', '--json')).json().refresh_token_expires_at).toBeTruthy();
    clockOffset = 700_000; // the server's clock passes the refresh token's expiry
    const r = await cli('auth', 'token');
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('invalid_grant');
    expect(r.stderr).toContain('run: opsctl login');
    expect(r.stderr).toMatch(/revoked access/);
  });

  it('logout revokes on the server (the refresh token stops working), removes the tokens, and api then exits 4', async () => {
    expect((await login([])).code).toBe(0);
    const saved = creds().embedded.oauth;
    const out = await cli('logout');
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toContain('revoked on the server');
    expect(creds().embedded?.oauth).toBeUndefined();
    const refresh = await postForm(`${mock.url}/token`, {
      grant_type: 'refresh_token',
      refresh_token: saved.refresh_token,
      client_id: DEFAULT_CLIENT_ID,
      client_secret: DEFAULT_CLIENT_SECRET,
    });
    expect(refresh.json.error).toBe('invalid_grant');
    const api = await cli('api', '/media/v3/channels', '-f', 'part=id', '-f', 'mine=true');
    expect(api.code).toBe(4);
    // Logging out again is harmless.
    expect((await cli('logout')).code).toBe(0);
  });

  it('logout when the server already revoked the grant (400 invalid_token) still forgets locally', async () => {
    expect((await login([])).code).toBe(0);
    const saved = creds().embedded.oauth;
    await postForm(`${mock.url}/revoke`, { token: saved.refresh_token });
    const out = await cli('logout');
    expect(out.code).toBe(0);
    expect(out.stderr).toContain('already revoked');
    expect(creds().embedded?.oauth).toBeUndefined();
  });

  it('logout when the server cannot be reached still forgets locally, and says so with exit 3', async () => {
    expect((await login([])).code).toBe(0);
    const closed = createServer();
    await new Promise<void>((res) => closed.listen(0, '127.0.0.1', () => res()));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((res) => closed.close(() => res()));
    const out = await runCli(['logout', '--json'], { env: { ...env, OPSCTL_REVOKE_URL: `http://127.0.0.1:${port}/revoke` } });
    expect(out.code).toBe(3);
    expect(out.json()).toMatchObject({ revoked: false, removed: true });
    expect(out.stderr).toContain('could not revoke');
    expect(creds().embedded?.oauth).toBeUndefined();
  });

  it('OPSCTL_ACCESS_TOKEN beats stored tokens', async () => {
    expect((await login([], { email: 'bob@example.com' })).code).toBe(0);
    const other = await playBrowser(
      `${mock.url}/o/oauth2/v2/auth?client_id=${DEFAULT_CLIENT_ID}&redirect_uri=http://127.0.0.1:9/&response_type=code&scope=${encodeURIComponent(`email ${READ}`)}`,
      { email: 'alice@example.com' },
    );
    const code = new URL(other.location!).searchParams.get('code')!;
    const tok = await postForm(`${mock.url}/token`, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: 'http://127.0.0.1:9/',
      client_id: DEFAULT_CLIENT_ID,
      client_secret: DEFAULT_CLIENT_SECRET,
    });
    env.OPSCTL_ACCESS_TOKEN = tok.json.access_token;
    const status = await cli('auth', 'status', '--json');
    expect(status.json()).toMatchObject({ source: 'environment', account: 'alice@example.com' });
    const api = await cli('api', '/media/v3/channels', '-f', 'part=snippet', '-f', 'mine=true');
    expect(JSON.parse(api.stdout).items[0].snippet.title).toBe("alice's channel");
    expect((await cli('auth', 'token')).stdout.trim()).toBe(tok.json.access_token);
  });

  it('auth status asks the server: a grant revoked elsewhere exits 4; a refused access token with a live grant is refreshed', async () => {
    expect((await login([])).code).toBe(0);
    const saved = creds().embedded.oauth;
    await mock.store.write((s: TestState) => void delete (s.oauth.accessTokens as Record<string, unknown>)[saved.access_token]);
    const ok = await cli('auth', 'status', '--json');
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.json()).toMatchObject({ account: 'alice@example.com', source: 'file' });
    expect(creds().embedded.oauth.access_token).not.toBe(saved.access_token);
    // Revoked at the account's security page: the refresh token goes too.
    expect((await postForm(`${mock.url}/revoke`, { token: saved.refresh_token })).status).toBe(200);
    const gone = await cli('auth', 'status');
    expect(gone.code).toBe(4);
    expect(gone.stderr).toContain('invalid_grant');
    expect(gone.stderr).toContain('run: opsctl login');
  });

  it('auth status with an OPSCTL_ACCESS_TOKEN the server rejects: exit 4 naming the variable; tokeninfo is asked on the token host', async () => {
    const bad = await runCli(['auth', 'status', '--json'], { env: { ...env, OPSCTL_ACCESS_TOKEN: 'ya29.revoked-or-made-up' } });
    expect(bad.code).toBe(4);
    expect(bad.stderr).toContain('OPSCTL_ACCESS_TOKEN');
    expect(bad.stderr).toContain('invalid_token');
    // Google serves tokeninfo on the token endpoint's host, not on the authorization host.
    expect((await login([])).code).toBe(0);
    mock.requests.length = 0;
    const good = await runCli(['auth', 'status', '--json'], {
      env: { ...env, OPSCTL_AUTH_URL: 'http://127.0.0.1:9', OPSCTL_TOKEN_URL: `${mock.url}/token`, OPSCTL_ACCESS_TOKEN: creds().embedded.oauth.access_token },
    });
    expect(good.code, good.stderr).toBe(0);
    expect(good.json()).toMatchObject({ source: 'environment', account: 'alice@example.com' });
    expect(mock.requests.some((r) => r.path === '/tokeninfo')).toBe(true);
  });

  it('not signed in: auth status and auth token exit 4', async () => {
    expect((await cli('auth', 'status')).code).toBe(4);
    const t = await cli('auth', 'token');
    expect(t.code).toBe(4);
    expect(t.stderr).toContain('opsctl login');
  });
});

describe('profiles and real servers', () => {
  it('the authorization endpoint accepts TLS only: a plain-HTTP authorize URL off loopback is refused before anything is printed or opened (exit 2)', async () => {
    const opened: string[] = [];
    const plain = { ...env, OPSCTL_AUTH_URL: 'http://auth.example.test', OPSCTL_CLIENT_ID: 'abc' };
    for (const args of [['--no-browser'], []]) {
      const r = await runCli(['login', ...args], { env: plain, openBrowser: async (url) => (opened.push(url), true) });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain('the authorization endpoint http://auth.example.test/o/oauth2/v2/auth is plain HTTP: it accepts TLS only');
      expect(r.stderr).toContain('opsctl config set auth https://');
      expect(r.stdout + r.stderr).not.toContain('response_type=code');
    }
    // an authorize URL set by hand is held to the same rule
    const byHand = await runCli(['login', '--no-browser'], {
      env: { ...plain, OPSCTL_AUTH_URL: 'https://auth.example.test', OPSCTL_AUTHORIZE_URL: 'http://auth.example.test/authorize' },
      openBrowser: async (url) => (opened.push(url), true),
    });
    expect(byHand.code).toBe(2);
    expect(JSON.stringify(byHand.stderr)).toContain('http://auth.example.test/authorize is plain HTTP');
    expect(opened).toEqual([]);
  });

  it('--profile keeps the tokens per profile; a new sign-in of the same account revokes the one it replaces, another account is added', async () => {
    expect((await runCli(['login', '--profile', 'work'], { env, openBrowser: browser() })).code).toBe(0);
    const first = creds().work.oauth;
    expect(creds().embedded).toBeUndefined();
    expect((await runCli(['login', '--profile', 'work'], { env, openBrowser: browser({ email: 'bob@example.com' }) })).code).toBe(0);
    expect(creds().work.oauth.account).toBe('bob@example.com');
    const kept = await postForm(`${mock.url}/token`, {
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      client_id: DEFAULT_CLIENT_ID,
      client_secret: DEFAULT_CLIENT_SECRET,
    });
    expect(kept.status).toBe(200);
    expect((await runCli(['login', '--profile', 'work'], { env, openBrowser: browser() })).code).toBe(0);
    expect(creds().work.accounts.map((a: { account: string }) => a.account)).toEqual(['bob@example.com', 'alice@example.com']);
    const old = await postForm(`${mock.url}/token`, {
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      client_id: DEFAULT_CLIENT_ID,
      client_secret: DEFAULT_CLIENT_SECRET,
    });
    expect(old.json.error).toBe('invalid_grant');
  });

  it('a wrong client secret: the exchange fails with invalid_client, exit 4 naming the settings, the browser is told, nothing stored', async () => {
    const seen: { page?: string; status?: number } = {};
    const r = await runCli(['login'], {
      env: { ...env, OPSCTL_CLIENT_ID: DEFAULT_CLIENT_ID, OPSCTL_CLIENT_SECRET: 'sekrit-7f3a' },
      openBrowser: browser({}, seen),
    });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('invalid_client');
    expect(r.stderr).toContain('client_secret');
    expect(r.stderr).not.toContain('sekrit-7f3a');
    await until(() => seen.page);
    expect(seen.status).toBe(400);
    expect(seen.page).toContain('Sign-in failed');
    expect(existsSync(join(cfg.dir, 'credentials.json'))).toBe(false);
  });

  it('a client_secret an older opsctl left in config.json: auth status reads and leaves it; login signs in with it and moves it out, saying so', async () => {
    const file = join(cfg.dir, 'config.json');
    expect((await cli('config', 'set', 'client_id', DEFAULT_CLIENT_ID, '--profile', 'old')).code).toBe(0);
    const cfgJson = JSON.parse(readFileSync(file, 'utf8'));
    cfgJson.profiles.old.client_secret = DEFAULT_CLIENT_SECRET;
    writeFileSync(file, JSON.stringify(cfgJson));
    const text = readFileSync(file, 'utf8');
    // reading (no sign-in stored: exit 4) writes nothing
    const status = await cli('auth', 'status', '--profile', 'old');
    expect(status.stderr).not.toContain('moved');
    expect(readFileSync(file, 'utf8')).toBe(text);
    const r = await runCli(['login', '--profile', 'old'], { env, openBrowser: browser() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`moved the client_secret of profile old out of ${file}`);
    expect(readFileSync(file, 'utf8')).not.toContain(DEFAULT_CLIENT_SECRET);
    expect(creds().old.client_secret).toEqual({ storage: 'file', value: DEFAULT_CLIENT_SECRET });
    expect(creds().old.oauth.account).toBe('alice@example.com');
  });

  it('a real (non-loopback) server without a client_id: exit 2 naming client_id, before any request', async () => {
    const r = await runCli(['login'], { env: { ...env, OPSCTL_AUTH_URL: 'https://accounts.example.invalid' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('client_id');
    expect(r.stderr).toContain('opsctl config set client_id');
  });
});

describe('opsctl api', () => {
  it('sends -f as the query for GET and as a JSON body otherwise; --service picks endpoint and credentials', async () => {
    const tm = await startMock({ services: ['tracker'] });
    const tenv = { ...env, OPSCTL_TRACKER_URL: tm.url, OPSCTL_TRACKER_TOKEN: tm.trackerToken };
    const created = await runCli(['api', '/api/v3/labels', '--service', 'tracker', '-X', 'POST', '-f', 'name=from-api', '-f', 'color=#00ff00'], { env: tenv });
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ name: 'from-api', color: '#00ff00' });
    const listed = await runCli(['api', '/api/v3/labels', '--service', 'tracker', '--json'], { env: tenv });
    expect(listed.json().map((l: { name: string }) => l.name)).toContain('from-api');
    await tm.close();
  });

  it("a full URL must be on the service's own origin: the token is never sent elsewhere (exit 2)", async () => {
    expect((await login([])).code).toBe(0);
    let hits = 0;
    const other = createServer((socket) => {
      hits++;
      socket.destroy();
    });
    await new Promise<void>((res) => other.listen(0, '127.0.0.1', () => res()));
    const port = (other.address() as { port: number }).port;
    try {
      const r = await cli('api', `http://127.0.0.1:${port}/media/v3/channels`, '-f', 'part=id', '-f', 'mine=true');
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('path:');
      expect(r.stderr).toContain('--service');
      expect(hits).toBe(0);
      const same = await cli('api', `${mock.url}/media/v3/channels`, '-f', 'part=id', '-f', 'mine=true');
      expect(same.code, same.stderr).toBe(0);
    } finally {
      other.close();
    }
  });

  it('a 401 for a stored token refreshes once and retries; a revoked sign-in exits 4 saying to run opsctl login', async () => {
    expect((await login([])).code).toBe(0);
    const saved = creds().embedded.oauth;
    // The server forgets the access token (as after a clock skew); the refresh token still works.
    await mock.store.write((s: TestState) => void delete (s.oauth.accessTokens as Record<string, unknown>)[saved.access_token]);
    const retried = await cli('api', '/media/v3/channels', '-f', 'part=id', '-f', 'mine=true');
    expect(retried.code, retried.stderr).toBe(0);
    expect(JSON.parse(retried.stdout).items).toHaveLength(1);
    expect(creds().embedded.oauth.access_token).not.toBe(saved.access_token);
    // Revoked elsewhere (the account's security page): the refresh fails too.
    await postForm(`${mock.url}/revoke`, { token: creds().embedded.oauth.access_token });
    const revoked = await cli('api', '/media/v3/channels', '-f', 'part=id', '-f', 'mine=true');
    expect(revoked.code).toBe(4);
    expect(revoked.stderr).toContain('invalid_grant');
    expect(revoked.stderr).toContain('run: opsctl login');
    // An environment token the server refuses: exit 4, no refresh, a hint about the variable.
    const bad = await runCli(['api', '/media/v3/channels', '-f', 'part=id', '-f', 'mine=true'], { env: { ...env, OPSCTL_ACCESS_TOKEN: 'ya29.not-a-token' } });
    expect(bad.code).toBe(4);
    expect(bad.stderr).toContain('OPSCTL_ACCESS_TOKEN');
    expect(JSON.parse(bad.stdout).error.status).toBe('UNAUTHENTICATED');
  });

  it('refuses bad input before sending (exit 2)', async () => {
    expect((await cli('api', '/media/v3/channels', '-f', 'novalue')).code).toBe(2);
    // a path without its leading / is the same path (as gh api); another scheme is no path at all
    expect((await cli('api', 'gopher://x/media/v3/channels')).code).toBe(2);
    for (const argv of [
      ['--scopes', ''],
      ['--login-hint', ' '],
      ['--timeout', 'soon'],
      ['--port', '70000'],
    ]) {
      const bad = await cli('login', ...argv);
      expect(bad.code, argv.join(' ')).toBe(2);
      expect(bad.stderr).toContain(argv[0]);
      expect(bad.stderr.trim().split('\n').length, 'a hint under the error').toBeGreaterThan(1);
    }
    const r = await cli('api', '/media/v3/channels', '--input', 'x.json');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--input');
  });
});
