import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { startMock } from '../helpers/mock.js';

/**
 * Issue 58, part 4: a `login` with OPSCTL_AUTH_URL pointing at another server (`mock serve`) is kept beside
 * the profile's own sign-in, not in its place: each command uses the sign-in of the server it talks to now
 * (with the variable: that server's; without it: the embedded mock's), and a command where the profile has
 * no sign-in at its server says which server holds one and what to run. The built binary, real HTTP.
 */
describe('login at OPSCTL_AUTH_URL on the embedded profile: sign-ins kept per server', { timeout: 120_000 }, () => {
  let served: Awaited<ReturnType<typeof startMock>>;
  let dir: string;
  beforeAll(async () => {
    served = await startMock({ services: ['oauth', 'api'] });
    dir = mkdtempSync(join(tmpdir(), 'opsctl-login-per-server-'));
  });
  afterAll(async () => {
    await served?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the served mock’s sign-in and the embedded one live side by side; neither command fails for the other’s', async () => {
    const env = { OPSCTL_CONFIG_DIR: dir, DBUS_SESSION_BUS_ADDRESS: '', NO_COLOR: '1' };
    const run = (args: string[], extra: NodeJS.ProcessEnv = {}) => runBin(args, { env: { ...env, ...extra } });
    const there = { OPSCTL_AUTH_URL: served.url, OPSCTL_API_URL: served.url };
    const login = (who: string, extra: NodeJS.ProcessEnv = {}) => run(['login', '--consent-as', who, '--insecure-storage', '--json'], extra);

    const a = await login('alice@example.com', there);
    expect(a.exitCode, a.stderr as string).toBe(0);
    // no embedded sign-in yet: the embedded command names the other server's sign-in and the command that signs in here
    const none = await run(['auth', 'status']);
    expect(none.exitCode).toBe(4);
    expect(none.stderr).toContain(`the stored sign-in of alice@example.com (profile embedded) belongs to the other issuer ${served.url}`);
    expect(none.stderr).toMatch(/run: opsctl login +\(signs in at the embedded mock, kept beside the sign-in at http/);

    const b = await login('bob@example.com');
    expect(b.exitCode, b.stderr as string).toBe(0);
    const creds = JSON.parse(readFileSync(join(dir, 'credentials.json'), 'utf8')) as { embedded: { accounts: Array<{ account: string; issuer: string }> } };
    expect(creds.embedded.accounts.map((x) => x.account).sort()).toEqual(['alice@example.com', 'bob@example.com']);

    // each command: the sign-in at the server it talks to
    const here = await run(['auth', 'status', '--json']);
    expect(here.exitCode, here.stderr as string).toBe(0);
    expect(JSON.parse(here.stdout as string)).toMatchObject({ account: 'bob@example.com' });
    const away = await run(['auth', 'status', '--json'], there);
    expect(away.exitCode, away.stderr as string).toBe(0);
    expect(JSON.parse(away.stdout as string)).toMatchObject({ account: 'alice@example.com' });

    // the same account at both servers: two sign-ins, and a logout at one keeps the other
    expect((await login('bob@example.com', there)).exitCode).toBe(0);
    const out = await run(['logout'], there);
    expect(out.exitCode, out.stderr as string).toBe(0);
    const still = await run(['auth', 'status', '--json']);
    expect(still.exitCode, still.stderr as string).toBe(0);
    expect(JSON.parse(still.stdout as string)).toMatchObject({ account: 'bob@example.com' });
  });
});
