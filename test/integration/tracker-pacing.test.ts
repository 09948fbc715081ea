import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli, tempConfigDir } from '../helpers/cli.js';
import { startMock, trackerEnv } from '../helpers/mock.js';

/** A mock limited to 5 requests per second, and a CLI told the same limit: no request may see a 429. */
let mock: Awaited<ReturnType<typeof startMock>>;
let cfg: ReturnType<typeof tempConfigDir>;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  mock = await startMock({ services: ['tracker'], options: { tracker: { rateLimit: { limit: 5, windowMs: 1000 } } } });
});
afterAll(async () => {
  await mock.close();
});
beforeEach(() => {
  cfg = tempConfigDir();
  env = { ...trackerEnv(mock, cfg.dir), OPSCTL_TRACKER_RATE_LIMIT: '5/1s' };
  mock.requests.length = 0;
});
afterEach(() => cfg.cleanup());

describe('pacing under the tracker limit', () => {
  it('an apply of 12 labels (13 requests) never gets a 429 and shows progress', async () => {
    const items = Array.from({ length: 12 }, (_, i) => ({ name: `paced-${i}` }));
    const r = await runCli(['tracker', 'labels', 'apply', '-f', '-'], { env, stdin: JSON.stringify(items) });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('12/12 done');
    expect(r.stderr).toContain('applied 12 changes to labels');
    expect(mock.requests).toHaveLength(13);
    expect(mock.requests.filter((q) => q.status === 429)).toEqual([]);
  }, 30_000);

  it('a 429 with Retry-After is waited out and retried, not reported as a failure', async () => {
    mock.inject({ method: 'POST', path: '/api/v3/labels', status: 429, retryAfter: 1, times: 1 });
    const r = await runCli(['tracker', 'labels', 'create', '--name', 'after-429'], { env });
    expect(r.code).toBe(0);
    expect(mock.requests.map((q) => q.status)).toEqual([429, 201]);
  }, 30_000);

  it('an unpaced client past the limit gets 429 with Retry-After from the mock', async () => {
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => fetch(`${mock.url}/api/v3/labels`, { headers: { 'tracker-token': mock.trackerToken } })),
    );
    const limited = responses.filter((res) => res.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    for (const res of limited) expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
