import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempConfigDir } from '../helpers/cli.js';
import { startMock } from '../helpers/mock.js';

/**
 * Seed 000: "read the scope field … and disable features whose scope is missing". A command whose
 * request needs a scope the sign-in was not granted is refused before anything is sent (exit 4, naming
 * the scope and `opsctl auth refresh --scopes …`); --force-request sends it and the server answers.
 */
let mock: Awaited<ReturnType<typeof startMock>>;
const cfg = tempConfigDir();
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  mock = await startMock({ services: ['oauth', 'api', 'labels'] });
  env = { OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_AUTH_URL: mock.url, OPSCTL_API_URL: mock.url, OPSCTL_LABELS_URL: mock.url };
  // signed in with the media scope only: no label scope granted
  const login = await runCli(['login', '--consent-as', 'alice@example.com', '--scopes', 'openid', 'email', 'media.readonly', '--insecure-storage'], { env });
  expect(login.code, login.stderr).toBe(0);
});
afterAll(async () => {
  await mock.close();
  cfg.cleanup();
});

const toService = (prefix: string) => mock.requests.filter((r) => r.path.startsWith(prefix));

describe('a scope the sign-in was not granted', () => {
  it('labels list: refused locally, exit 4, the scope and the fix named, nothing sent', async () => {
    mock.requests.length = 0;
    const r = await runCli(['labels', 'list'], { env });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('alice@example.com was not granted a scope to read labels');
    expect(r.stderr).toContain('opsctl auth refresh --scopes drive.labels.readonly');
    expect(toService('/v2')).toEqual([]);
  });

  it('--force-request sends it anyway: the server answers 403, which opsctl shows', async () => {
    mock.requests.length = 0;
    const r = await runCli(['labels', 'list', '--force-request'], { env });
    expect(r.code).not.toBe(0);
    expect(toService('/v2').length).toBeGreaterThan(0);
    expect(r.stderr).toMatch(/insufficient authentication scopes/i);
  });

  it('api: a read with the granted scope goes through; a change needing a write scope is refused locally', async () => {
    mock.requests.length = 0;
    const read = await runCli(['api', '/media/v3/channels', '-f', 'part=snippet', '-f', 'mine=true', '-X', 'GET'], { env });
    expect(read.code, read.stderr).toBe(0);
    const write = await runCli(['api', '/media/v3/channels', '-X', 'PUT', '-f', 'part=snippet'], { env });
    expect(write.code).toBe(4);
    expect(write.stderr).toContain('opsctl auth refresh --scopes media');
    expect(mock.requests.filter((q) => q.method === 'PUT')).toEqual([]);
  });

  it('once granted (auth refresh --scopes), the same command is sent', async () => {
    const refresh = await runCli(['auth', 'refresh', '--scopes', 'drive.labels.readonly', '--consent-as', 'alice@example.com'], { env });
    if (refresh.code !== 0) {
      // an auth refresh without --consent-as: sign in again with the scope instead
      const again = await runCli(['login', '--consent-as', 'alice@example.com', '--scopes', 'openid', 'email', 'drive.labels.readonly', '--insecure-storage'], {
        env,
      });
      expect(again.code, again.stderr).toBe(0);
    }
    const r = await runCli(['labels', 'list'], { env });
    expect(r.code, r.stderr).toBe(0);
  });
});
