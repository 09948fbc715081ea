import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMock } from '../helpers/mock.js';

/**
 * Issue 27, item 10g: real HTTP to the tracker mock on port 0. A 1 MB body holding 60,000 unknown keys
 * is answered with one short 400 in the tracker's error shape ({message, error, errors}) naming the
 * first few unknown fields and the count; before, the answer was 5.7 MB (every key named twice).
 */
let mock: Awaited<ReturnType<typeof startMock>>;
beforeAll(async () => {
  mock = await startMock({ services: ['tracker'] });
});
afterAll(async () => {
  await mock.close();
});

async function post(path: string, body: unknown) {
  const res = await request(`${mock.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'tracker-token': mock.trackerToken },
    body: JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, text };
}

describe('the mock answers an unknown-field flood with one short error', () => {
  it('60,000 unknown keys in a 1 MB body: a 400 under 2 KB naming the first few and the count', async () => {
    const body: Record<string, unknown> = { name: 'flood' };
    for (let i = 0; i < 60_000; i++) body[`k${String(i).padStart(6, '0')}`] = 'xy';
    expect(JSON.stringify(body).length).toBeGreaterThan(900_000);
    const r = await post('/api/v3/labels', body);
    expect(r.status).toBe(400);
    expect(r.text.length).toBeLessThan(2048);
    const json = JSON.parse(r.text) as { message: string; error: string; errors: Record<string, string> };
    expect(json.error).toBe('schema_mismatch');
    expect(json.message).toContain('k000000 is not a field of this create request, nor are 59999 other keys (k000001, k000002, k000003, k000004, …)');
    expect(Object.keys(json.errors)).toEqual(['k000000']);
  });

  it('a key of 500 KB is named by its first 63 characters', async () => {
    const r = await post('/api/v3/labels', { name: 'long', ['x'.repeat(500_000)]: 1 });
    expect(r.status).toBe(400);
    expect(r.text.length).toBeLessThan(1024);
    expect(r.text).toContain(`${'x'.repeat(63)}…`);
  });

  it('a few unknown keys are still named one by one', async () => {
    const r = await post('/api/v3/labels', { name: 'few', colour: 'x', size: 2 });
    expect(r.status).toBe(400);
    const json = JSON.parse(r.text) as { errors: Record<string, string> };
    expect(json.errors).toEqual({ colour: 'is not a field of this create request', size: 'is not a field of this create request' });
  });
});
