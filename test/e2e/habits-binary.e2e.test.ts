import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { startMock } from '../helpers/mock.js';

/**
 * Issue 38's items through the built binary, as a script or a person runs them: --exit-code, the
 * abbreviation advice, a scope not granted, the authorize URL over plain HTTP, keyless CI sign-in, --web.
 * (--paginate's page numbers and --slurp's shape: api-gh.e2e.test.ts; the ownership countdown on a pty:
 * ownership-delay.test.ts.)
 */
const cfg = tempConfigDir('opsctl-habits-bin-');
const file = (name: string, text: string) => (writeFileSync(join(cfg.dir, name), text), join(cfg.dir, name));
let mock: Awaited<ReturnType<typeof startMock>>;
let trackerEnv: NodeJS.ProcessEnv;

beforeAll(async () => {
  mock = await startMock({ services: ['tracker', 'oauth', 'labels', 'api'] });
  trackerEnv = { OPSCTL_CONFIG_DIR: join(cfg.dir, 'tracker'), OPSCTL_TRACKER_URL: mock.url, OPSCTL_TRACKER_TOKEN: mock.trackerToken };
}, 60_000);
afterAll(async () => {
  await mock.close();
  cfg.cleanup();
});

describe('the built binary', () => {
  it('--exit-code: 6 while the plan has changes, 0 once there is nothing to do', async () => {
    const f = file('labels.yaml', 'labels:\n  - name: bin-drift\n');
    expect((await runBin(['tracker', 'labels', 'apply', '-f', f, '--dry-run', '--exit-code'], { env: trackerEnv })).exitCode).toBe(6);
    expect((await runBin(['tracker', 'labels', 'apply', '-f', f], { env: trackerEnv })).exitCode).toBe(0);
    expect((await runBin(['tracker', 'labels', 'apply', '-f', f, '--dry-run', '--exit-code'], { env: trackerEnv })).exitCode).toBe(0);
  }, 120_000);

  it('a project abbreviation over 3 characters: a warning, and with --strict exit 2', async () => {
    const warned = await runBin(['tracker', 'projects', 'create', '--name', 'Bin', '--team-id', '1', '--abbreviation', 'BINARY'], { env: trackerEnv });
    expect(warned.exitCode, String(warned.stderr)).toBe(0);
    expect(String(warned.stderr)).toContain('abbreviation "BINARY" is 6 characters');
    const strict = await runBin(['tracker', 'projects', 'create', '--name', 'Bin2', '--team-id', '1', '--abbreviation', 'BINARY', '--strict'], {
      env: trackerEnv,
    });
    expect(strict.exitCode).toBe(2);
  }, 120_000);

  it('a scope not granted: refused before sending (exit 4); --force-request sends it', async () => {
    const env = { OPSCTL_CONFIG_DIR: join(cfg.dir, 'scopes'), OPSCTL_AUTH_URL: mock.url, OPSCTL_LABELS_URL: mock.url, OPSCTL_API_URL: mock.url };
    const login = await runBin(['login', '--consent-as', 'alice@example.com', '--scopes', 'openid', 'email', 'media.readonly', '--insecure-storage'], { env });
    expect(login.exitCode, String(login.stderr)).toBe(0);
    const refused = await runBin(['labels', 'list'], { env });
    expect(refused.exitCode).toBe(4);
    expect(String(refused.stderr)).toContain('opsctl auth refresh --scopes drive.labels.readonly');
    const forced = await runBin(['labels', 'list', '--force-request'], { env });
    expect(forced.exitCode, String(forced.stderr)).toBe(4); // the server's 403, as the labels verbs map it
    expect(String(forced.stderr)).toMatch(/insufficient authentication scopes/i);
  }, 120_000);

  it('a plain-HTTP authorize URL off loopback: exit 2 before anything is printed or opened', async () => {
    const env = { OPSCTL_CONFIG_DIR: join(cfg.dir, 'tls'), OPSCTL_AUTH_URL: 'http://auth.example.test', OPSCTL_CLIENT_ID: 'abc' };
    const r = await runBin(['login', '--no-browser'], { env });
    expect(r.exitCode).toBe(2);
    expect(String(r.stderr)).toContain('is plain HTTP: it accepts TLS only');
    expect(String(r.stdout) + String(r.stderr)).not.toContain('response_type=code');
  }, 120_000);

  it('keyless CI: login --with-oidc-token against the embedded mock trusting the CI key set', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwks = file('bin-jwks.json', JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k', alg: 'ES256' }] }));
    const token = await new SignJWT({ sub: 'bin-job' })
      .setProtectedHeader({ alg: 'ES256', kid: 'k' })
      .setIssuer('https://ci.example')
      .setAudience('opsctl')
      .setExpirationTime('5m')
      .sign(privateKey);
    const env = { OPSCTL_CONFIG_DIR: join(cfg.dir, 'ci'), OPSCTL_MOCK_TRUST_JWKS: jwks, OPSCTL_OIDC_TOKEN_FILE: file('bin-token', token) };
    const r = await runBin(['login', '--insecure-storage', '--json'], { env });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(JSON.parse(String(r.stdout))).toMatchObject({ account: 'bin-job', via: 'token-exchange' });
  }, 120_000);

  it('--web: the page handed to the system browser (xdg-open), the address on stderr', async () => {
    const bin = join(cfg.dir, 'fake-bin');
    mkdirSync(bin, { recursive: true });
    const opened = join(cfg.dir, 'opened.txt');
    writeFileSync(join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s\\n' "$1" >> '${opened}'\n`);
    chmodSync(join(bin, 'xdg-open'), 0o755);
    const made = await runBin(['tracker', 'stories', 'create', '--name', 'Open on the web', '--json'], { env: trackerEnv });
    const story = JSON.parse(String(made.stdout)) as { id: number; app_url: string };
    const r = await runBin(['tracker', 'stories', 'get', String(story.id), '--web'], {
      env: { ...trackerEnv, PATH: `${bin}:${process.env.PATH}`, DISPLAY: ':99', CI: '' }, // CI (set on the CI machine) would keep the browser shut
    });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(String(r.stderr)).toContain(`Opening ${story.app_url} in your browser`);
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      try {
        if (readFileSync(opened, 'utf8').includes(story.app_url)) break;
      } catch {
        // not written yet: xdg-open runs detached
      }
      await new Promise((r2) => setTimeout(r2, 50));
    }
    expect(readFileSync(opened, 'utf8').trim()).toBe(story.app_url);
  }, 120_000);
});
