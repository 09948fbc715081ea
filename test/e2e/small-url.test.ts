import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { startMock, trackerEnv } from '../helpers/mock.js';

/**
 * Issue 27, item 10a, through the built binary: a URL the user gives (an argument, a flag, an
 * OPSCTL_*_URL variable, a profile value) that does not parse is a usage error (exit 2) naming where it
 * came from and what a valid URL looks like, never "unexpected error: Invalid URL"; nothing is sent.
 */
let mock: Awaited<ReturnType<typeof startMock>>;
let dir: string;
let env: NodeJS.ProcessEnv;

async function run(args: string[], extra: NodeJS.ProcessEnv = {}) {
  const r = await runBin(args, { env: { ...env, ...extra } });
  return { code: r.exitCode, stdout: String(r.stdout), stderr: String(r.stderr) };
}

beforeAll(async () => {
  mock = await startMock({ services: ['tracker', 'api'] });
  dir = mkdtempSync(join(tmpdir(), 'opsctl-small-url-'));
  env = { ...trackerEnv(mock, join(dir, 'config')), OPSCTL_API_URL: mock.url, OPSCTL_ACCESS_TOKEN: 'tok' };
});
afterAll(async () => {
  await mock.close();
  rmSync(dir, { recursive: true, force: true });
});

const BAD = 'http://127.0.0.1:47001.evil';

describe('a bad URL is a usage error naming where it came from', () => {
  it('opsctl api with a full URL that does not parse', async () => {
    mock.requests.length = 0;
    const r = await run(['api', `${BAD}/x`]);
    expect(r.code).toBe(2);
    expect(r.stderr).not.toContain('unexpected error');
    expect(r.stderr).toContain(`<path>: "${BAD}/x" is not a valid URL: the port "47001.evil" is not a number`);
    expect(r.stderr).toContain('https://api.example.com');
    expect(mock.requests).toEqual([]);
  });

  it('OPSCTL_API_URL and OPSCTL_TRACKER_URL', async () => {
    const a = await run(['api', '/media/v3/channels'], { OPSCTL_API_URL: BAD });
    expect(a.code).toBe(2);
    expect(a.stderr).toContain(`OPSCTL_API_URL: "${BAD}" is not a valid URL`);
    const t = await run(['tracker', 'labels', 'list'], { OPSCTL_TRACKER_URL: 'tracker.example.com' });
    expect(t.code).toBe(2);
    expect(t.stderr).toContain('OPSCTL_TRACKER_URL: "tracker.example.com" is not a valid URL (no scheme: start it with https:// or http://)');
    expect(t.stderr).not.toContain('unexpected error');
  });

  it('OPSCTL_TOKEN_URL (an OAuth endpoint set by hand)', async () => {
    const r = await run(['login', '--no-browser'], { OPSCTL_TOKEN_URL: 'http://a:b:c', OPSCTL_AUTH_URL: mock.url });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('OPSCTL_TOKEN_URL: "http://a:b:c" is not a valid URL');
  });

  it('kv --endpoints and config set', async () => {
    const k = await run(['kv', 'health', '--endpoints', `${BAD},127.0.0.1:2379`]);
    expect(k.code).toBe(2);
    expect(k.stderr).toContain(`--endpoints: "${BAD}" is not a valid URL`);
    const c = await run(['config', 'set', 'tracker', `${BAD}/api`, '--profile', 'work']);
    expect(c.code).toBe(2);
    expect(c.stderr).toContain('tracker: must be an http(s) URL');
  });
});
