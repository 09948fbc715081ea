import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMock } from '../helpers/mock.js';
import { trackerCall } from '../helpers/tracker.js';

/** No client mistake makes the mock answer 5xx: every route, fed malformed bodies and ids. */
let mock: Awaited<ReturnType<typeof startMock>>;

beforeAll(async () => {
  mock = await startMock({ services: ['tracker'], options: { tracker: { rateLimit: { limit: 1_000_000, windowMs: 60_000 } } } });
});
afterAll(async () => {
  await mock.close();
});

describe('the tracker mock never answers 5xx to a client mistake', () => {
  it('holds for every route with malformed bodies and ids', async () => {
    const call = trackerCall(mock);
    const { routes } = await mock.service('tracker');
    const bodies: unknown[] = [
      undefined,
      '[]',
      '"x"',
      'null',
      '{}',
      { name: 5 },
      { name: '' },
      { values: 'x' },
      { text: null },
      { status: 'x' },
      { before_id: 'x' },
      { labels: [{}] },
    ];
    const ids = ['1', '999999', 'abc', '00000000-0000-4000-8000-000000000000'];
    const bad: string[] = [];
    for (const route of routes) {
      for (const id of ids) {
        const path = route.path.replace('/api/v3', '').replace(/:[a-z]+/g, id);
        for (const body of route.method === 'GET' || route.method === 'DELETE' ? [undefined] : bodies) {
          const r = await call(route.method, path, body);
          if (r.status >= 500) bad.push(`${route.method} ${path} ${JSON.stringify(body)} -> ${r.status} ${JSON.stringify(r.body)}`);
        }
      }
    }
    expect(bad).toEqual([]);
    expect(mock.requests.filter((q) => q.status === 429)).toEqual([]);
  }, 60_000);
});
