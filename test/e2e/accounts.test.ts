import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPE_BASE } from '../../src/auth/scopes.js';
import { runBin } from '../helpers/bin.js';
import { startMock, type TestState } from '../helpers/mock.js';
import { PtySession, SCRIPT } from '../helpers/pty.js';
import { requireProgram } from '../helpers/e2e.js';

const hasScript = requireProgram('script (util-linux, for the pty tests)', SCRIPT);

/** Several accounts per profile, bound to their issuer, and incremental consent: the built binary against the mock on port 0. */
// every test runs the built binary a dozen times or more: budgets for a loaded 2-core machine, not the 30 s default
describe('accounts (built binary against the mock authorization server)', { timeout: 240_000 }, () => {
  let mock: Awaited<ReturnType<typeof startMock>>;
  let other: Awaited<ReturnType<typeof startMock>>;
  let dir: string;
  let n = 0;
  const READ = `${SCOPE_BASE}/media.readonly`;
  const UPLOAD = `${SCOPE_BASE}/media.upload`;

  beforeAll(async () => {
    mock = await startMock({ services: ['oauth', 'api'] });
    other = await startMock({ services: ['oauth', 'api'] });
    dir = mkdtempSync(join(tmpdir(), 'opsctl-e2e-accounts-'));
  });
  afterAll(async () => {
    await mock?.close();
    await other?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh config dir pointed at `mock`; no D-Bus session, so no keyring here (the keyring has its own test). */
  function setup() {
    const config = join(dir, `c${n++}`);
    const env = { OPSCTL_CONFIG_DIR: config, OPSCTL_AUTH_URL: mock.url, OPSCTL_API_URL: mock.url, DBUS_SESSION_BUS_ADDRESS: '' };
    const run = (args: string[], extra: NodeJS.ProcessEnv = {}) => runBin(args, { env: { ...env, ...extra } });
    const creds = () => JSON.parse(readFileSync(join(config, 'credentials.json'), 'utf8'));
    return { config, env, run, creds };
  }
  const login = (run: ReturnType<typeof setup>['run'], who: string, ...more: string[]) =>
    run(['login', '--consent-as', who, '--scopes', 'openid', 'email', 'media.readonly', ...more]);

  it('the "no OS keyring" notice is said once per profile: at its first secret kept in the file, not at later sign-ins', { timeout: 180_000 }, async () => {
    const { run } = setup();
    const first = await login(run, 'alice@example.com');
    expect(first.exitCode, first.stderr as string).toBe(0);
    expect((first.stderr as string).match(/no OS keyring available/g)).toHaveLength(1);
    for (const later of [await login(run, 'bob@example.com'), await login(run, 'alice@example.com')]) {
      expect(later.exitCode, later.stderr as string).toBe(0);
      expect(later.stderr).not.toContain('no OS keyring available');
    }
    const other = await login(run, 'alice@example.com', '--profile', 'work');
    expect(other.exitCode, other.stderr as string).toBe(0);
    expect((other.stderr as string).match(/no OS keyring available/g)).toHaveLength(1);
  });

  it('login adds an account and makes it active; list, token --account, switch, status --all, logout --account', async () => {
    const { run, creds, config } = setup();
    const a = await login(run, 'alice@example.com');
    expect(a.exitCode, a.stderr as string).toBe(0);
    // No keyring here: the file is used, and said once.
    expect((a.stderr as string).match(/no OS keyring available/g)).toHaveLength(1);
    expect((await login(run, 'bob@example.com', '--insecure-storage')).exitCode).toBe(0);
    expect(statSync(join(config, 'credentials.json')).mode & 0o777).toBe(0o600);

    const list = await run(['auth', 'list', '--json']);
    expect(list.exitCode).toBe(0);
    const rows = JSON.parse(list.stdout as string);
    expect(rows.map((r: any) => [r.account, r.active, r.issuer])).toEqual([
      ['alice@example.com', false, mock.url],
      ['bob@example.com', true, mock.url],
    ]);
    expect(rows[0]).toMatchObject({ scopes: ['openid', 'email', READ], state: 'ok', storage: 'file' });
    expect(typeof rows[0].expires_at).toBe('string');
    expect(list.stdout).not.toContain(creds().embedded?.accounts?.[0]?.access_token ?? 'no-such-token');

    // The active account is bob: api and token use his tokens; --account picks alice's.
    const me = await run(['api', '/media/v3/channels', '-f', 'part=snippet', '-f', 'mine=true']);
    expect(JSON.parse(me.stdout as string).items[0].snippet.title).toBe("bob's channel");
    const t = await run(['auth', 'token', '--account', 'alice@example.com', '--json']);
    expect(t.exitCode).toBe(0);
    const tj = JSON.parse(t.stdout as string);
    const stored = creds();
    const profile = Object.keys(stored)[0];
    expect(tj).toMatchObject({ account: 'alice@example.com', scopes: ['openid', 'email', READ] });
    expect(tj.access_token).toBe(stored[profile!].accounts.find((x: any) => x.account === 'alice@example.com').access_token);
    expect(Date.parse(tj.expires_at)).toBeGreaterThan(Date.now());
    const unknown = await run(['auth', 'token', '--account', 'carol@example.com']);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toMatch(/no account "carol@example\.com".*accounts: alice@example\.com, bob@example\.com/);

    // Off a terminal, switch needs ACCOUNT (exit 2 naming it); with it, the active account changes.
    const bare = await run(['auth', 'switch']);
    expect(bare.exitCode).toBe(2);
    expect(bare.stderr).toContain('ACCOUNT');
    expect((await run(['auth', 'switch', 'alice@example.com'])).exitCode).toBe(0);
    const me2 = await run(['api', '/media/v3/channels', '-f', 'part=snippet', '-f', 'mine=true']);
    expect(JSON.parse(me2.stdout as string).items[0].snippet.title).toBe("alice's channel");

    // Another profile: status --all lists both profiles' accounts.
    expect((await login(run, 'bob@example.com', '--profile', 'work')).exitCode).toBe(0);
    const all = await run(['auth', 'status', '--all', '--json']);
    expect(all.exitCode, all.stderr as string).toBe(0);
    expect(JSON.parse(all.stdout as string).map((r: any) => `${r.profile}:${r.account}:${r.active}`)).toEqual([
      'embedded:alice@example.com:true',
      'embedded:bob@example.com:false',
      'work:bob@example.com:true',
    ]);

    // logout --account bob revokes bob's grant only; alice stays signed in and active.
    const bobsRefresh = creds().embedded.accounts.find((x: any) => x.account === 'bob@example.com').refresh_token;
    const out = await run(['logout', '--account', 'bob@example.com']);
    expect(out.exitCode, out.stderr as string).toBe(0);
    expect(await mock.store.read((s: TestState) => s.oauth.refreshTokens[bobsRefresh].revoked)).toBe(true);
    expect(creds().embedded.accounts.map((x: any) => x.account)).toEqual(['alice@example.com']);
    // Logging out the active account makes the next one active.
    expect((await login(run, 'bob@example.com')).exitCode).toBe(0);
    const out2 = await run(['logout']);
    expect(out2.stderr).toContain('Active account now: alice@example.com');
    expect(creds().embedded.active).toBe('alice@example.com');
  });

  it('reads a credential file of one sign-in (older opsctl) and migrates it on the first write, losing nothing', async () => {
    const { run, creds, config } = setup();
    expect((await login(run, 'alice@example.com')).exitCode).toBe(0);
    // Rewrite the file the way opsctl wrote it before several accounts: {profile: {tracker, oauth}}.
    const { accounts, active: _a, ...rest } = creds().embedded;
    const { storage: _s, issuer: _i, revoke_url: _r, ...legacy } = accounts[0];
    writeFileSync(join(config, 'credentials.json'), JSON.stringify({ embedded: { ...rest, tracker: { token: 'tracker-secret' }, oauth: legacy } }), {
      mode: 0o600,
    });
    const list = await run(['auth', 'list', '--json']);
    expect(JSON.parse(list.stdout as string)).toMatchObject([{ account: 'alice@example.com', active: true, issuer: null }]);
    const tok = await run(['auth', 'token']);
    expect((tok.stdout as string).trim()).toBe(legacy.access_token);

    expect((await login(run, 'bob@example.com')).exitCode).toBe(0);
    const after = creds().embedded;
    expect(after.oauth).toBeUndefined();
    expect(after.tracker).toEqual({ token: 'tracker-secret' });
    expect(after.accounts.map((x: any) => x.account)).toEqual(['alice@example.com', 'bob@example.com']);
    expect(after.accounts[0]).toMatchObject({ access_token: legacy.access_token, refresh_token: legacy.refresh_token, scope: legacy.scope });
    expect(after.active).toBe('bob@example.com');
  });

  it('tokens are bound to their issuer: a profile pointed at another server exits 4 and sends it nothing', async () => {
    const { run } = setup();
    expect((await login(run, 'alice@example.com')).exitCode).toBe(0);
    const elsewhere = { OPSCTL_AUTH_URL: other.url, OPSCTL_API_URL: other.url };
    const before = other.requests.length;
    const status = await run(['auth', 'status'], elsewhere);
    expect(status.exitCode).toBe(4);
    expect(status.stderr).toContain(`the stored sign-in of alice@example.com (profile embedded) belongs to the other issuer ${mock.url}`);
    expect(status.stderr).toContain('opsctl login');
    for (const args of [
      ['api', '/media/v3/channels', '-f', 'part=id', '-f', 'mine=true'],
      ['auth', 'token'],
      ['auth', 'refresh', '--scopes', 'media.upload', '--consent-as', 'alice@example.com'],
    ]) {
      const r = await run(args, elsewhere);
      expect(r.exitCode, args.join(' ')).toBe(4);
      expect(r.stderr).toContain('belongs to the other issuer');
    }
    const all = await run(['auth', 'status', '--all'], elsewhere);
    expect(all.exitCode).toBe(4);
    expect(all.stdout).toContain('other issuer');
    // Not one request reached the other server (no api call, no refresh, no tokeninfo).
    expect(other.requests.slice(before)).toEqual([]);
    // Back at the minting server, all is well.
    expect((await run(['auth', 'status'])).exitCode).toBe(0);
  });

  it('auth refresh --scopes asks only for the new scope with include_granted_scopes=true; the mock grants the union', async () => {
    const { run } = setup();
    expect((await login(run, 'alice@example.com')).exitCode).toBe(0);
    // --consent-as shows the authorization request only with --debug (no browser is involved)
    const r = await run(['auth', 'refresh', '--scopes', 'media.upload', '--consent-as', 'alice@example.com', '--json', '--debug']);
    expect(r.exitCode, r.stderr as string).toBe(0);
    const url = new URL(/(http:\/\/127\.0\.0\.1:\d+\/o\/oauth2\/v2\/auth\?\S+)/.exec(r.stderr as string)![1]!);
    expect(url.searchParams.get('scope')).toBe(UPLOAD);
    expect(url.searchParams.get('include_granted_scopes')).toBe('true');
    expect(url.searchParams.get('login_hint')).toBe('alice@example.com');
    const out = JSON.parse(r.stdout as string);
    expect(out).toMatchObject({ account: 'alice@example.com', added: [UPLOAD], include_granted_scopes_honoured: true });
    expect(new Set(out.scopes)).toEqual(new Set(['openid', 'email', READ, UPLOAD]));
    // The server's own record of the new access token carries the union.
    const token = ((await run(['auth', 'token'])).stdout as string).trim();
    const info = await fetch(`${mock.url}/tokeninfo?access_token=${encodeURIComponent(token)}`).then((x) => x.json() as Promise<{ scope: string }>);
    expect(new Set(info.scope.split(' '))).toEqual(new Set(['openid', 'email', READ, UPLOAD]));
    // Still one account; asking again for a scope it has asks nothing.
    expect(JSON.parse((await run(['auth', 'list', '--json'])).stdout as string).length).toBe(1);
    const again = await run(['auth', 'refresh', '--scopes', 'media.upload']);
    expect(again.exitCode).toBe(0);
    expect(again.stderr).toContain('nothing to ask for');
  });

  it.runIf(hasScript)('auth switch with no ACCOUNT on a real terminal: a picker of the accounts; arrow keys and Enter switch', async () => {
    const { run, env, creds } = setup();
    for (const who of ['alice@example.com', 'bob@example.com', 'dave@example.com']) expect((await login(run, who, '--insecure-storage')).exitCode).toBe(0);
    expect(creds().embedded.active).toBe('dave@example.com');
    const pty = PtySession.opsctl(['auth', 'switch'], { env: { ...env, CI: undefined } });
    try {
      await pty.waitFor('Switch the active account of profile embedded to');
      await pty.waitFor('dave@example.com (active)');
      // The picker starts on the first account that is not active (alice); one down is bob.
      pty.type('\u001b[B');
      pty.type('\r');
      expect(await pty.exitCode(60_000)).toBe(0);
      expect(pty.output).toContain('active account of profile embedded: bob@example.com');
    } finally {
      pty.kill();
    }
    expect(creds().embedded.active).toBe('bob@example.com');
    const me = await run(['api', '/media/v3/channels', '-f', 'part=snippet', '-f', 'mine=true']);
    expect(JSON.parse(me.stdout as string).items[0].snippet.title).toBe("bob's channel");
  });
});
