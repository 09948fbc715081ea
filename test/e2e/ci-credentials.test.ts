import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET } from '@opsctl/mock/services/oauth/registry.js';
import { runBin } from '../helpers/bin.js';
import { readCredentials } from '../helpers/credentials.js';
import { serveUrl } from '../helpers/serve.js';

/**
 * CI credentials that refresh themselves, through the built binary against `opsctl mock serve --test`:
 * a refresh token from the environment (kept in memory, never written) or stored with
 * `auth store-token --service oauth --with-token`; the mock's clock moves past the access token's hour and
 * the next command still works. Also `auth token --id-token` / `--refresh-token` and
 * `auth refresh --remove-scopes`. No secret reaches stdout/stderr except the one asked for.
 */
describe('CI credentials (built binary, opsctl mock serve)', () => {
  let serve: ReturnType<typeof runBin>;
  let base: string;
  const dirs: string[] = [];
  const tempDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'opsctl-e2e-ci-'));
    dirs.push(d);
    return d;
  };
  /** A workstation's sign-in: the refresh token a person puts in the CI job's secrets. */
  let workstation: string;
  let refreshToken: string;

  beforeAll(async () => {
    serve = runBin(['mock', 'serve', '--memory', '--test', '--port', '0', '--json']);
    base = await serveUrl(serve);
    workstation = tempDir();
    const login = await runBin(['login', '--consent-as', 'alice@example.com', '--insecure-storage'], { env: ws() });
    expect(login.exitCode, login.stderr as string).toBe(0);
    const rt = await runBin(['auth', 'token', '--refresh-token'], { env: ws() });
    expect(rt.exitCode, rt.stderr as string).toBe(0);
    refreshToken = (rt.stdout as string).trim();
    expect(refreshToken).toBe(readCredentials(join(workstation, 'credentials.json')).embedded.oauth.refresh_token);
  }, 180_000);
  afterAll(async () => {
    serve?.kill('SIGTERM');
    await serve;
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  function ws(): NodeJS.ProcessEnv {
    return { OPSCTL_CONFIG_DIR: workstation, OPSCTL_AUTH_URL: base, OPSCTL_API_URL: base, DBUS_SESSION_BUS_ADDRESS: '' };
  }
  /** A CI job: a fresh home, the account in its environment. */
  function job(dir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
    return {
      OPSCTL_CONFIG_DIR: dir,
      OPSCTL_AUTH_URL: base,
      OPSCTL_API_URL: base,
      OPSCTL_REFRESH_TOKEN: refreshToken,
      OPSCTL_CLIENT_ID: DEFAULT_CLIENT_ID,
      OPSCTL_CLIENT_SECRET: DEFAULT_CLIENT_SECRET,
      CI: 'true',
      ...extra,
    };
  }
  const advanceClock = async (seconds: number) => {
    const r = await fetch(`${base}/__mock/clock`, {
      method: 'POST',
      body: JSON.stringify({ advance_seconds: seconds }),
      headers: { 'content-type': 'application/json' },
    });
    expect(r.status).toBe(200);
  };
  const channels = (token: string) => fetch(`${base}/media/v3/channels?part=id&mine=true`, { headers: { authorization: `Bearer ${token}` } });
  /** Every file under `dir` (a job must leave none). */
  const filesUnder = (dir: string): string[] => readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => statSync(join(dir, f)).isFile());

  it('OPSCTL_REFRESH_TOKEN: a job longer than the access token keeps working (the mock clock passes the hour), and nothing is written', async () => {
    const dir = tempDir();
    const first = await runBin(['auth', 'token', '--json'], { env: job(dir) });
    expect(first.exitCode, first.stderr as string).toBe(0);
    const t1 = JSON.parse(first.stdout as string);
    expect(t1).toMatchObject({ source: 'environment_refresh_token', account: 'alice@example.com' });
    expect((await channels(t1.access_token)).status).toBe(200);
    const api1 = await runBin(['api', '/media/v3/channels?part=id&mine=true'], { env: job(dir) });
    expect(api1.exitCode, api1.stderr as string).toBe(0);

    // An hour and a bit later at the server: the first access token is dead there.
    await advanceClock(3700);
    expect((await channels(t1.access_token)).status).toBe(401);
    const api2 = await runBin(['api', '/media/v3/channels?part=id&mine=true'], { env: job(dir) });
    expect(api2.exitCode, api2.stderr as string).toBe(0);
    expect(JSON.parse(api2.stdout as string).kind).toBe('media#channelListResponse');
    const second = await runBin(['auth', 'token'], { env: job(dir) });
    expect(second.exitCode, second.stderr as string).toBe(0);
    const t2 = (second.stdout as string).trim();
    expect(t2).not.toBe(t1.access_token);
    expect((await channels(t2)).status).toBe(200);

    // auth status names the environment account (one refresh proves it works).
    const status = await runBin(['auth', 'status', '--json'], { env: job(dir) });
    expect(status.exitCode, status.stderr as string).toBe(0);
    expect(JSON.parse(status.stdout as string)).toMatchObject({
      source: 'environment',
      source_detail: 'OPSCTL_REFRESH_TOKEN',
      stored_in: null,
      account: 'alice@example.com',
    });
    const dead = await runBin(['auth', 'status'], { env: job(dir, { OPSCTL_REFRESH_TOKEN: '1//not-a-live-token' }) });
    expect(dead.exitCode).toBe(4);
    expect(dead.stderr).toContain('the refresh token in OPSCTL_REFRESH_TOKEN no longer works (invalid_grant)');
    expect(dead.stderr).not.toContain('not-a-live-token');

    // Never written: the job's home holds no file with a token (no credential file at all).
    expect(filesUnder(dir).filter((f) => f.includes('credentials'))).toEqual([]);
    for (const f of filesUnder(dir)) expect(readFileSync(join(dir, f), 'utf8')).not.toContain(refreshToken);
    // --debug shows the refresh request with the secrets redacted.
    const dbg2 = await runBin(['api', '/media/v3/channels?part=id&mine=true', '--debug'], { env: job(dir) });
    expect(dbg2.exitCode, dbg2.stderr as string).toBe(0);
    expect(dbg2.stderr).toContain('refreshing the access token of OPSCTL_REFRESH_TOKEN (kept in memory only)');
    expect(dbg2.stderr).toContain('refresh_token=%5Bredacted%5D');
    expect(dbg2.stderr).not.toContain(refreshToken);
    expect(dbg2.stderr).not.toContain(DEFAULT_CLIENT_SECRET);
  }, 180_000);

  it('auth token --id-token prints a valid ID token for the client (renewed when it expired); refused clearly when the provider gave none', async () => {
    const dir = tempDir();
    const r = await runBin(['auth', 'token', '--id-token', '--json'], { env: job(dir) });
    expect(r.exitCode, r.stderr as string).toBe(0);
    const out = JSON.parse(r.stdout as string);
    expect(out).toMatchObject({ audience: DEFAULT_CLIENT_ID, issuer: base, account: 'alice@example.com' });
    const claims = JSON.parse(Buffer.from(out.id_token.split('.')[1], 'base64url').toString());
    expect(claims.aud).toBe(DEFAULT_CLIENT_ID);
    expect(claims.exp * 1000).toBeGreaterThan(Date.now());

    // A stored account whose ID token has expired: renewed through the refresh token.
    const creds = join(workstation, 'credentials.json');
    const all = readCredentials(creds);
    const a = all.embedded.oauth;
    const before = a.id_token;
    a.id_token = `${before.split('.')[0]}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(before.split('.')[1], 'base64url').toString()), exp: 1 })).toString('base64url')}.${before.split('.')[2]}`;
    writeFileSync(creds, JSON.stringify(all), { mode: 0o600 });
    const renewed = await runBin(['auth', 'token', '--id-token'], { env: ws() });
    expect(renewed.exitCode, renewed.stderr as string).toBe(0);
    const fresh = (renewed.stdout as string).trim();
    expect(JSON.parse(Buffer.from(fresh.split('.')[1]!, 'base64url').toString()).exp * 1000).toBeGreaterThan(Date.now());

    // An account signed in without openid: the provider gave no ID token.
    const noid = tempDir();
    const env = { OPSCTL_CONFIG_DIR: noid, OPSCTL_AUTH_URL: base, DBUS_SESSION_BUS_ADDRESS: '' };
    const login = await runBin(['login', '--consent-as', 'bob@example.com', '--scopes', 'media.readonly', '--insecure-storage'], { env });
    expect(login.exitCode, login.stderr as string).toBe(0);
    const refused = await runBin(['auth', 'token', '--id-token'], { env });
    expect(refused.exitCode).toBe(4);
    expect(refused.stderr).toContain('no ID token');
    expect(refused.stderr).toContain('--scopes openid');
    expect(refused.stdout).toBe('');
    // OPSCTL_ACCESS_TOKEN alone has none either.
    const envOnly = await runBin(['auth', 'token', '--id-token'], { env: { ...env, OPSCTL_ACCESS_TOKEN: 'ya29.x' } });
    expect(envOnly.exitCode).toBe(4);
    expect(envOnly.stderr).toContain('OPSCTL_ACCESS_TOKEN is set');
  }, 180_000);

  it('auth store-token --service oauth --with-token: JSON on stdin, refused without a keyring unless --insecure-storage, then stored and refreshed like any account', async () => {
    const dir = tempDir();
    const env = { OPSCTL_CONFIG_DIR: dir, OPSCTL_AUTH_URL: base, OPSCTL_API_URL: base, DBUS_SESSION_BUS_ADDRESS: '' };
    const json = JSON.stringify({ refresh_token: refreshToken, client_id: DEFAULT_CLIENT_ID, issuer: base });
    const noKeyring = await runBin(['auth', 'store-token', '--service', 'oauth', '--with-token'], { env, input: json });
    expect(noKeyring.exitCode).toBe(2);
    expect(noKeyring.stderr).toContain('writes a refresh token to disk only when asked');
    expect(noKeyring.stderr).toContain('--insecure-storage');
    expect(existsSync(join(dir, 'credentials.json'))).toBe(false);

    const bad = await runBin(['auth', 'store-token', '--service', 'oauth', '--with-token', '--insecure-storage'], { env, input: refreshToken });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('standard input: is not JSON');
    expect(bad.stderr).not.toContain(refreshToken);
    const other = await runBin(['auth', 'store-token', '--service', 'oauth', '--with-token', '--insecure-storage'], {
      env,
      input: JSON.stringify({ refresh_token: refreshToken, issuer: 'https://accounts.example.org' }),
    });
    expect(other.exitCode).toBe(2);
    expect(other.stderr).toContain('the refresh token is for issuer https://accounts.example.org');
    expect(other.stderr).toContain('opsctl config set issuer https://accounts.example.org');

    const ok = await runBin(['auth', 'store-token', '--service', 'oauth', '--with-token', '--insecure-storage', '--json'], { env, input: json });
    expect(ok.exitCode, ok.stderr as string).toBe(0);
    expect(JSON.parse(ok.stdout as string)).toMatchObject({ service: 'oauth', account: 'alice@example.com', client_id: DEFAULT_CLIENT_ID, storage: 'file' });
    expect(ok.stdout).not.toContain(refreshToken);
    expect(ok.stderr).not.toContain(refreshToken);
    const stored = readCredentials(join(dir, 'credentials.json')).embedded.oauth;
    expect(stored).toMatchObject({ account: 'alice@example.com', client_id: DEFAULT_CLIENT_ID, issuer: base, refresh_token: refreshToken });
    expect(statSync(join(dir, 'credentials.json')).mode & 0o777).toBe(0o600);

    // Refreshed like any other: its access token near expiry is renewed by the next command.
    const all = readCredentials(join(dir, 'credentials.json'));
    all.embedded.oauth.expires_at = Date.now() + 1000;
    writeFileSync(join(dir, 'credentials.json'), JSON.stringify(all), { mode: 0o600 });
    const api = await runBin(['api', '/media/v3/channels?part=id&mine=true'], { env });
    expect(api.exitCode, api.stderr as string).toBe(0);
    const after = readCredentials(join(dir, 'credentials.json')).embedded.oauth;
    expect(after.access_token).not.toBe(stored.access_token);
    expect(after.expires_at).toBeGreaterThan(Date.now() + 30 * 60 * 1000);
  }, 180_000);

  it('auth refresh --remove-scopes: narrower access tokens with no browser, and later refreshes stay narrow', async () => {
    const dir = tempDir();
    const env = { OPSCTL_CONFIG_DIR: dir, OPSCTL_AUTH_URL: base, OPSCTL_API_URL: base, DBUS_SESSION_BUS_ADDRESS: '' };
    expect((await runBin(['login', '--consent-as', 'alice@example.com', '--insecure-storage'], { env })).exitCode).toBe(0);
    const r = await runBin(['auth', 'refresh', '--remove-scopes', 'drive.labels', '--json'], { env });
    expect(r.exitCode, r.stderr as string).toBe(0);
    const out = JSON.parse(r.stdout as string);
    expect(out.removed).toEqual(['https://www.googleapis.com/auth/drive.labels']);
    expect(out.scopes).not.toContain('https://www.googleapis.com/auth/drive.labels');
    const info = async () => {
      const token = (await runBin(['auth', 'token'], { env })).stdout as string;
      return (await (await fetch(`${base}/tokeninfo?access_token=${token.trim()}`)).json()) as { scope: string };
    };
    expect((await info()).scope).not.toContain('drive.labels');
    // The next refresh (access token about to expire) still asks for the narrower scope.
    const file = join(dir, 'credentials.json');
    const all = readCredentials(file);
    all.embedded.oauth.expires_at = Date.now() + 1000;
    writeFileSync(file, JSON.stringify(all), { mode: 0o600 });
    const s = await info();
    expect(s.scope).toContain('media.readonly');
    expect(s.scope).not.toContain('drive.labels');

    const everything = await runBin(['auth', 'refresh', '--remove-scopes', 'openid', 'email', 'media.readonly'], { env });
    expect(everything.exitCode).toBe(2);
    expect(everything.stderr).toContain('no scope at all');
    expect(everything.stderr).toContain('opsctl logout');
    const both = await runBin(['auth', 'refresh', '--scopes', 'media.upload', '--remove-scopes', 'email'], { env });
    expect(both.exitCode).toBe(2);
  }, 180_000);
});
