import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { startMock } from '../helpers/mock.js';

/**
 * Issue 49's first-hour items through the built binary: a misspelled --profile is told that no such
 * profile exists (wherever a profile is resolved), and `api PATH` takes a path without its leading `/`
 * as gh does. (--web: labels-web.e2e.test.ts and tracker-web.e2e.test.ts.)
 */
const cfg = tempConfigDir('opsctl-first-hour-');
let mock: Awaited<ReturnType<typeof startMock>>;
const env = { OPSCTL_CONFIG_DIR: join(cfg.dir, 'config') };

beforeAll(async () => {
  mock = await startMock({ services: ['tracker', 'oauth', 'labels', 'api'] });
  const made = await runBin(['config', 'set', 'tracker', mock.url, '--profile', 'production'], { env });
  expect(made.exitCode, String(made.stderr)).toBe(0);
}, 60_000);
afterAll(async () => {
  await mock.close();
  cfg.cleanup();
});

describe('a misspelled profile', () => {
  it('is named as missing, with the profiles there are, by every verb that resolves it (exit 2, nothing changed)', async () => {
    const configBefore = readFileSync(join(env.OPSCTL_CONFIG_DIR, 'config.json'), 'utf8');
    for (const args of [
      ['tracker', 'labels', 'list'],
      ['labels', 'list'],
      ['api', '/media/v3/channels'],
      ['login', '--no-browser'],
      ['auth', 'status'],
      ['auth', 'token'],
      ['auth', 'list'],
      ['auth', 'switch', 'someone'],
      ['logout'],
      ['auth', 'forget-token', '--service', 'tracker'],
      ['config', 'get', 'tracker'],
      ['config', 'unset', 'tracker'],
      ['config', 'list'],
    ]) {
      const r = await runBin([...args, '--profile', 'prod'], { env });
      expect(r.exitCode, `${args.join(' ')}: ${String(r.stderr)}`).toBe(2);
      expect(String(r.stderr), args.join(' ')).toContain('no profile "prod" (named by --profile): the profiles are embedded, production');
      expect(String(r.stderr), args.join(' ')).not.toMatch(/has no \w+ endpoint|not signed in|nothing to do|removed/);
    }
    expect(readFileSync(join(env.OPSCTL_CONFIG_DIR, 'config.json'), 'utf8')).toBe(configBefore);
  }, 240_000);

  it('a near miss is guessed; OPSCTL_PROFILE and config set profile are named as the source', async () => {
    const typo = await runBin(['tracker', 'labels', 'list', '--profile', 'prodution'], { env });
    expect(typo.exitCode).toBe(2);
    expect(String(typo.stderr)).toContain('did you mean production?');
    expect(String(typo.stderr)).toContain('--profile production');
    const fromEnv = await runBin(['tracker', 'labels', 'list'], { env: { ...env, OPSCTL_PROFILE: 'prod' } });
    expect(fromEnv.exitCode).toBe(2);
    expect(String(fromEnv.stderr)).toContain('no profile "prod" (named by OPSCTL_PROFILE)');
    const setDefault = await runBin(['config', 'set', 'profile', 'prod'], { env });
    expect(setDefault.exitCode).toBe(2);
    expect(String(setDefault.stderr)).toContain('no profile "prod" (named by config set profile)');
  }, 120_000);

  it('a real profile still says what it lacks; a new name is still created by config set; a CI job naming its endpoints in the environment still runs', async () => {
    const lacks = await runBin(['labels', 'list', '--profile', 'production'], { env });
    expect(lacks.exitCode).toBe(2);
    expect(String(lacks.stderr)).toContain('profile "production" has no labels endpoint');
    const created = await runBin(['config', 'set', 'labels', mock.url, '--profile', 'staging'], { env });
    expect(created.exitCode, String(created.stderr)).toBe(0);
    expect(String((await runBin(['config', 'get', 'labels', '--profile', 'staging'], { env })).stdout).trim()).toBe(mock.url);
    const ci = await runBin(['tracker', 'labels', 'list', '--json', '--profile', 'ci'], {
      env: { ...env, OPSCTL_TRACKER_URL: mock.url, OPSCTL_TRACKER_TOKEN: mock.trackerToken },
    });
    expect(ci.exitCode, String(ci.stderr)).toBe(0);
    expect(Array.isArray(JSON.parse(String(ci.stdout)))).toBe(true);
  }, 120_000);
});

describe('api PATH without its leading /', () => {
  it('is the same request as with it (gh: relative to the base URL), for each service', async () => {
    const trackerEnv = { ...env, OPSCTL_TRACKER_URL: mock.url, OPSCTL_TRACKER_TOKEN: mock.trackerToken };
    const made = await runBin(['api', 'api/v3/labels', '--service', 'tracker', '-X', 'POST', '-f', 'name=no-slash'], { env: trackerEnv });
    expect(made.exitCode, String(made.stderr)).toBe(0);
    expect(JSON.parse(String(made.stdout))).toMatchObject({ name: 'no-slash' });
    const bare = await runBin(['api', 'api/v3/labels', '--service', 'tracker'], { env: trackerEnv });
    const slashed = await runBin(['api', '/api/v3/labels', '--service', 'tracker'], { env: trackerEnv });
    expect(bare.exitCode, String(bare.stderr)).toBe(0);
    expect(JSON.parse(String(bare.stdout))).toEqual(JSON.parse(String(slashed.stdout)));

    const signIn = { OPSCTL_CONFIG_DIR: join(cfg.dir, 'api'), OPSCTL_AUTH_URL: mock.url, OPSCTL_API_URL: mock.url, OPSCTL_LABELS_URL: mock.url };
    const login = await runBin(['login', '--consent-as', 'alice@example.com', '--insecure-storage'], { env: signIn });
    expect(login.exitCode, String(login.stderr)).toBe(0);
    const channels = await runBin(['api', 'media/v3/channels', '-f', 'part=snippet', '-f', 'mine=true'], { env: signIn });
    expect(channels.exitCode, String(channels.stderr)).toBe(0);
    expect(JSON.parse(String(channels.stdout))).toMatchObject({ kind: 'media#channelListResponse' });
    const labels = await runBin(['api', 'v2/labels', '--service', 'labels'], { env: signIn });
    expect(labels.exitCode, String(labels.stderr)).toBe(0);
    const other = await runBin(['api', 'ftp://example.com/x'], { env: signIn });
    expect(other.exitCode).toBe(2);
    expect(String(other.stderr)).toContain('is not an http(s) URL nor a path');
  }, 120_000);
});
