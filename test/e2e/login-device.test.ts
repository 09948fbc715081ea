import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { readCredentials } from '../helpers/credentials.js';
import { requireProgram } from '../helpers/e2e.js';
import { approveDeviceThroughPages, OIDC_CLIENT_ID, startOidcProvider, type OidcProviderHandle } from '../helpers/oidc-provider.mjs';
import { PtySession, SCRIPT } from '../helpers/pty.js';
import { serveUrl } from '../helpers/serve.js';

/**
 * `opsctl login --device` (RFC 8628) through the built binary: a person reads the code on the terminal
 * and approves it on the verification page from "another device" (the test, over HTTP). Every wait is
 * for text on the screen or a process to end, with generous deadlines; the only timing asserted is a
 * lower bound (the client waited at least the interval the server asked for).
 */
const hasScript = requireProgram('script (util-linux, for the pty tests)', SCRIPT);

const dirs: string[] = [];
const sessions: PtySession[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'opsctl-e2e-device-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const s of sessions.splice(0)) s.kill();
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The code and URLs `login --device` printed. */
function shown(text: string): { code: string; uri: string; complete: string } {
  const code = /one-time code: ([A-Z]{4}-[A-Z]{4}|\S+)/.exec(text)?.[1];
  const uri = /Then open (\S+) in a browser/.exec(text)?.[1];
  const complete = /which carries the code: (\S+)/.exec(text)?.[1];
  if (!code || !uri || !complete) throw new Error(`no device code shown yet:\n${text}`);
  return { code, uri, complete };
}

/** Waits until a running binary's stderr shows the code. */
function codeFrom(child: ReturnType<typeof runBin>): Promise<{ code: string; uri: string; complete: string; stderr: () => string }> {
  let stderr = '';
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (c: Buffer) => {
      stderr += c.toString();
      if (stderr.includes('Waiting for approval')) resolve({ ...shown(stderr), stderr: () => stderr });
    });
    void child.then((r) => reject(new Error(`login --device exited ${r.exitCode} before showing a code: ${stderr}`)));
  });
}

/** The person's answer on the mock's verification page. */
async function answer(uri: string, code: string, action: 'allow' | 'deny', login = 'alice@example.com'): Promise<string> {
  const res = await fetch(uri, { method: 'POST', body: new URLSearchParams({ user_code: code, login, action }) });
  const html = await res.text();
  expect(res.status, html).toBe(200);
  return html;
}

describe.runIf(hasScript)('login --device on a terminal, against the embedded mock (no configuration)', () => {
  it('shows the code and the URL, signs in once the code is approved on the verification page, stores the tokens', async () => {
    const dir = tempDir();
    const s = PtySession.opsctl(['login', '--device'], { env: { OPSCTL_CONFIG_DIR: dir, NO_COLOR: '1', DBUS_SESSION_BUS_ADDRESS: undefined } });
    sessions.push(s);
    await s.waitFor('Waiting for approval');
    const { code, uri, complete } = shown(s.text);
    expect(code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(uri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/device$/);
    expect(complete).toBe(`${uri}?user_code=${code}`);
    // The page the complete URL opens has the code filled in.
    expect(await (await fetch(complete)).text()).toContain(`value="${code}"`);
    // A person types it in lower case with spaces: still the code.
    expect(await answer(uri, code.toLowerCase().replace('-', ' '), 'allow')).toContain('Device connected');
    expect(await s.exitCode()).toBe(0);
    expect(s.text).toContain('Signed in as alice@example.com');
    expect(s.text).toMatch(/account:\s+alice@example\.com/);
    const stored = readCredentials(join(dir, 'credentials.json')).embedded.oauth;
    expect(stored).toMatchObject({ account: 'alice@example.com', issuer: 'embedded' });
    expect(stored.refresh_token).toBeTruthy();
    // No secret reached the terminal.
    expect(s.text).not.toContain(stored.access_token);
    expect(s.text).not.toContain(stored.refresh_token);
    // The tokens work.
    const t = await runBin(['auth', 'status', '--json'], { env: { OPSCTL_CONFIG_DIR: dir } });
    expect(t.exitCode, t.stderr as string).toBe(0);
    expect(JSON.parse(t.stdout as string)).toMatchObject({ account: 'alice@example.com' });
  }, 180_000);

  it('Ctrl-C while waiting: exit 130, nothing stored', async () => {
    const dir = tempDir();
    const s = PtySession.opsctl(['login', '--device'], { env: { OPSCTL_CONFIG_DIR: dir, NO_COLOR: '1' } });
    sessions.push(s);
    await s.waitFor('Waiting for approval');
    s.ctrlC();
    expect(await s.exitCode()).toBe(130);
    expect(s.text).toContain('interrupted');
    const file = join(dir, 'credentials.json');
    expect(existsSync(file) ? readCredentials(file).embedded?.oauth : undefined).toBeUndefined();
  }, 180_000);
});

describe('login --device against opsctl mock serve (piped: no QR, the code on stderr)', () => {
  let serve: ReturnType<typeof runBin>;
  let base: string;
  beforeAll(async () => {
    serve = runBin(['mock', 'serve', '--memory', '--test', '--port', '0', '--json', '--device-interval', '1', '--device-slow-down', '1']);
    base = await serveUrl(serve);
  }, 120_000);
  afterAll(async () => {
    serve.kill('SIGTERM');
    await serve;
  });
  const env = (dir: string) => ({ OPSCTL_CONFIG_DIR: dir, OPSCTL_AUTH_URL: base, OPSCTL_API_URL: base });

  it('polls at the interval the server asks for, and 5 s slower after slow_down; --json prints the sign-in', async () => {
    const dir = tempDir();
    await fetch(`${base}/__mock/requests`, { method: 'DELETE' });
    const child = runBin(['login', '--device', '--json'], { env: env(dir) });
    const { code, uri } = await codeFrom(child);
    // Let the first poll (slow_down) happen before approving, so the slower pace is seen.
    const polls = async () =>
      ((await (await fetch(`${base}/__mock/requests`)).json()) as Array<{ path: string; method: string; at: number; status: number }>).filter(
        (r) => r.path === '/token' && r.method === 'POST',
      );
    for (let i = 0; (await polls()).length < 1; i++) {
      if (i > 600) throw new Error('no poll within 60 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    await answer(uri, code, 'allow', 'bob@example.com');
    const done = await child;
    expect(done.exitCode, done.stderr as string).toBe(0);
    expect(JSON.parse(done.stdout as string)).toMatchObject({ account: 'bob@example.com', profile: 'embedded', missing_scopes: [] });
    const log = (await (await fetch(`${base}/__mock/requests`)).json()) as Array<{ path: string; method: string; at: number; status: number }>;
    const start = log.find((r) => r.path === '/device/code')!;
    const tokenPolls = log.filter((r) => r.path === '/token');
    expect(tokenPolls[0]!.status).toBe(400); // slow_down, forced for the first poll
    expect(tokenPolls.at(-1)!.status).toBe(200);
    // At least the interval (1 s) before the first poll, at least 1 + 5 s after the slow_down.
    expect(tokenPolls[0]!.at - start.at).toBeGreaterThanOrEqual(1000);
    expect(tokenPolls[1]!.at - tokenPolls[0]!.at).toBeGreaterThanOrEqual(6000);
    // Nothing secret on stderr.
    const stored = readCredentials(join(dir, 'credentials.json')).embedded.oauth;
    expect(done.stderr).not.toContain(stored.refresh_token);
    expect(done.stderr).not.toMatch(/\u001b\[/);
  }, 180_000);

  it('denied on the verification page: exit 4 naming access_denied, nothing stored', async () => {
    const dir = tempDir();
    const child = runBin(['login', '--device', '--debug'], { env: env(dir) });
    const { code, uri } = await codeFrom(child);
    expect(await answer(uri, code, 'deny')).toContain('Access denied');
    const done = await child;
    expect(done.exitCode).toBe(4);
    // --debug shows each poll with the device code and the client secret redacted.
    expect(done.stderr).toMatch(/grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code&device_code=%5Bredacted%5D/);
    expect(done.stderr).toContain('client_secret=%5Bredacted%5D');
    expect(done.stderr).not.toContain('mock-desktop-secret');
    expect(done.stderr).toContain('denied on the verification page (access_denied)');
    expect(done.stderr).toContain('choose Allow');
    expect(existsSync(join(dir, 'credentials.json'))).toBe(false);
  }, 180_000);

  it('the code expires (the mock clock moved past its 10 minutes): exit 4 naming expired_token, and the page refuses the old code', async () => {
    const dir = tempDir();
    const child = runBin(['login', '--device'], { env: env(dir) });
    const { code, uri } = await codeFrom(child);
    const moved = await fetch(`${base}/__mock/clock`, {
      method: 'POST',
      body: JSON.stringify({ advance_seconds: 601 }),
      headers: { 'content-type': 'application/json' },
    });
    expect(moved.status).toBe(200);
    const done = await child;
    expect(done.exitCode).toBe(4);
    expect(done.stderr).toMatch(/the code \S+ expired before anyone approved it \(expired_token\)/);
    expect(done.stderr).toContain('run opsctl login --device again');
    const late = await fetch(uri, { method: 'POST', body: new URLSearchParams({ user_code: code, login: 'alice@example.com', action: 'allow' }) });
    expect(await late.text()).toContain('has expired');
    expect(existsSync(join(dir, 'credentials.json'))).toBe(false);
  }, 180_000);
});

describe('login --device against oidc-provider', () => {
  let withDevice: OidcProviderHandle;
  let without: OidcProviderHandle;
  beforeAll(async () => {
    withDevice = await startOidcProvider({ deviceFlow: true });
    without = await startOidcProvider();
  });
  afterAll(async () => {
    await withDevice?.close();
    await without?.close();
  });
  const env = (dir: string, issuer: string) => ({ OPSCTL_CONFIG_DIR: dir, OPSCTL_ISSUER: issuer, OPSCTL_CLIENT_ID: OIDC_CLIENT_ID });

  it("signs in through oidc-provider's device pages (code, confirm, login, consent); the ID token is checked and the e-mail read", async () => {
    const dir = tempDir();
    const child = runBin(['login', '--device', '--scopes', 'openid', 'email', 'offline_access', 'api:read'], { env: env(dir, withDevice.issuer) });
    const { code, complete } = await codeFrom(child);
    expect(complete.startsWith(`${withDevice.issuer}/device`)).toBe(true);
    const { pages } = await approveDeviceThroughPages(complete, code, 'carol');
    expect(pages).toContain('login');
    expect(pages.at(-1)).toBe('success');
    const done = await child;
    expect(done.exitCode, done.stderr as string).toBe(0);
    expect(done.stdout).toContain('account:   carol@example.org');
    expect(done.stdout).toMatch(/granted:\s+openid email offline_access api:read/);
    const stored = readCredentials(join(dir, 'credentials.json')).embedded.oauth;
    expect(stored).toMatchObject({ account: 'carol@example.org', client_id: OIDC_CLIENT_ID, issuer: withDevice.issuer });
    expect(stored.refresh_token).toBeTruthy();
  }, 180_000);

  it('a provider whose metadata names no device_authorization_endpoint: refused before anything, naming the provider and what it lacks', async () => {
    const dir = tempDir();
    const r = await runBin(['login', '--device'], { env: env(dir, without.issuer) });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`the provider ${without.issuer} does not offer the device authorization grant`);
    expect(r.stderr).toContain('names no device_authorization_endpoint');
    expect(r.stderr).toContain('opsctl login --no-browser');
    expect(existsSync(join(dir, 'credentials.json'))).toBe(false);
  }, 120_000);
});
