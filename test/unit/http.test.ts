import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MockAgent } from 'undici';
import { ApiError, NetworkError, UsageError } from '../../src/core/errors.js';
import { HttpClient, type Transport } from '../../src/core/http.js';
import { retryAfterMs } from '../../src/core/retry.js';
import { Pacer } from '../../src/core/pacer.js';

const ORIGIN = 'https://tracker.example';
let agent: MockAgent;
let sleeps: number[];
let logs: string[];

beforeEach(() => {
  agent = new MockAgent();
  agent.disableNetConnect();
  sleeps = [];
  logs = [];
});
afterEach(async () => {
  // Strict stubs: every interceptor must have been used.
  agent.assertNoPendingInterceptors();
  await agent.close();
});

function client(extra: Partial<ConstructorParameters<typeof HttpClient>[0]> = {}) {
  return new HttpClient({
    service: 'tracker',
    baseUrl: ORIGIN,
    dispatcher: agent,
    credentials: async () => ({ headers: { 'Tracker-Token': 'secret-token-123' } }),
    sleep: async (ms) => void sleeps.push(ms),
    random: () => 0.5,
    debug: (line) => logs.push(line),
    ...extra,
  });
}

describe('HttpClient retries', () => {
  it('retries an idempotent GET on 503 with backoff and jitter, then succeeds', async () => {
    const pool = agent.get(ORIGIN);
    pool.intercept({ path: '/api/v3/labels', method: 'GET' }).reply(503, { message: 'busy' }).times(2);
    pool.intercept({ path: '/api/v3/labels', method: 'GET' }).reply(200, [{ id: 1 }], { headers: { 'content-type': 'application/json' } });
    const c = client();
    expect(await c.get('/api/v3/labels')).toEqual([{ id: 1 }]);
    expect(c.sent).toBe(3);
    expect(sleeps).toEqual([125, 250]); // full jitter: random(0.5) × 250·2^n
  });

  it('does not retry a POST on 503 (it may have been processed)', async () => {
    agent.get(ORIGIN).intercept({ path: '/api/v3/labels', method: 'POST' }).reply(503, { message: 'busy' });
    const err: any = await client()
      .post('/api/v3/labels', { name: 'x' })
      .catch((e: any) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(503);
    expect(err.message).toBe('tracker: HTTP 503: busy');
  });

  it('retries every method on 429, waiting Retry-After seconds, and pauses the pacer', async () => {
    const pool = agent.get(ORIGIN);
    pool.intercept({ path: '/api/v3/labels', method: 'POST' }).reply(429, { message: 'slow down' }, { headers: { 'retry-after': '7' } });
    pool.intercept({ path: '/api/v3/labels', method: 'POST' }).reply(201, { id: 9 }, { headers: { 'content-type': 'application/json' } });
    let now = 1_000;
    const pacer = new Pacer({ limit: 200, windowMs: 60_000, now: () => now, sleep: async (ms) => void (now += ms) });
    const c = client({ pacer });
    expect(await c.post('/api/v3/labels', { name: 'x' })).toEqual({ id: 9 });
    expect(sleeps).toEqual([7000]);
    expect(c.sent).toBe(2);
  });

  it('retries a GET on a network error and reports a NetworkError when it persists', async () => {
    const pool = agent.get(ORIGIN);
    pool.intercept({ path: '/x', method: 'GET' }).replyWithError(new Error('ECONNRESET')).times(4);
    const err: any = await client()
      .get('/x')
      .catch((e: any) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(sleeps).toHaveLength(3);
  });

  it('turns an error status into an ApiError with the server message, in each service shape', async () => {
    const pool = agent.get(ORIGIN);
    pool.intercept({ path: '/a', method: 'GET' }).reply(404, { message: 'label 9 does not exist' });
    pool.intercept({ path: '/b', method: 'GET' }).reply(400, { error: 'invalid_grant', error_description: 'code already used' });
    pool.intercept({ path: '/c', method: 'GET' }).reply(403, { error: { code: 403, message: 'read-only scope', status: 'PERMISSION_DENIED' } });
    const c = client();
    await expect(c.get('/a')).rejects.toMatchObject({ status: 404, message: 'tracker: HTTP 404: label 9 does not exist' });
    await expect(c.get('/b')).rejects.toMatchObject({ status: 400, message: 'tracker: HTTP 400: invalid_grant: code already used' });
    await expect(c.get('/c')).rejects.toMatchObject({ status: 403, message: 'tracker: HTTP 403: PERMISSION_DENIED: read-only scope' });
  });

  it('maps 401 to the auth exit code', async () => {
    agent.get(ORIGIN).intercept({ path: '/x', method: 'GET' }).reply(401, { message: 'invalid Tracker-Token' });
    const err: any = await client()
      .get('/x')
      .catch((e: any) => e);
    expect(err.exitCode).toBe(4);
  });
});

describe('HttpClient safety', () => {
  it('redacts Tracker-Token, Authorization and token parameters in debug logs', async () => {
    agent.get(ORIGIN).intercept({ path: /\/x.*/, method: 'POST' }).reply(200, {});
    const c = client({ credentials: async () => ({ headers: { 'Tracker-Token': 'secret-token-123', Authorization: 'Bearer abc.def' } }) });
    await c.request({ method: 'POST', path: '/x', query: { token: 'secret-token-123', q: 'ok' }, form: { refresh_token: 'r-secret', client_id: 'cid' } });
    const text = logs.join('\n');
    expect(text).not.toContain('secret-token-123');
    expect(text).not.toContain('abc.def');
    expect(text).not.toContain('r-secret');
    expect(text).toContain('[redacted]');
    expect(text).toContain('client_id=cid');
  });

  it('refuses to send credentials over plain HTTP to a non-loopback host, before any request', async () => {
    const c = new HttpClient({
      service: 'tracker',
      baseUrl: 'http://tracker.example',
      dispatcher: agent,
      credentials: async () => ({ headers: { 'Tracker-Token': 't' } }),
    });
    const err: any = await c.get('/api/v3/labels').catch((e: any) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect(err.message).toContain('refusing to send tracker credentials over plain HTTP to tracker.example');
    expect(c.sent).toBe(0);
  });

  it('allows plain HTTP to loopback addresses', async () => {
    for (const host of ['http://127.0.0.1:9', 'http://localhost:9', 'http://[::1]:9']) {
      agent.get(host).intercept({ path: '/ok', method: 'GET' }).reply(200, { ok: true });
      const c = new HttpClient({ service: 'tracker', baseUrl: host, dispatcher: agent, credentials: async () => ({ headers: { 'Tracker-Token': 't' } }) });
      expect(await c.get('/ok')).toEqual({ ok: true });
    }
  });
});

describe('retryAfterMs', () => {
  it('reads delta-seconds and HTTP dates', () => {
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs('0.5')).toBe(500);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs(undefined)).toBeUndefined();
  });
});

describe('Pacer', () => {
  it('never lets more than `limit` requests complete within one window', async () => {
    let now = 0;
    const pacer = new Pacer({ limit: 3, windowMs: 1000, now: () => now, sleep: async (ms) => void (now += ms) });
    const starts: number[] = [];
    for (let i = 0; i < 7; i++) {
      const release = await pacer.acquire();
      starts.push(now);
      now += 10; // the request takes 10 ms
      release();
    }
    // 3 at once, then each slot frees 1 s after its response arrived
    expect(starts).toEqual([0, 10, 20, 1011, 1021, 1031, 2022]);
    for (let i = 3; i < starts.length; i++) expect(starts[i]! - (starts[i - 3]! + 10)).toBeGreaterThanOrEqual(1000);
  });

  it('holds concurrent callers while every slot is in flight', async () => {
    let now = 0;
    const pacer = new Pacer({ limit: 1, windowMs: 100, now: () => now, sleep: async (ms) => void (now += ms) });
    const first = await pacer.acquire();
    let second = false;
    const p = pacer.acquire().then((r) => {
      second = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 5));
    expect(second).toBe(false);
    first();
    (await p)();
    expect(second).toBe(true);
    expect(now).toBeGreaterThanOrEqual(100);
  });

  it('stops waiting at once when interrupted (Ctrl-C), with InterruptedError', async () => {
    const abort = new AbortController();
    const pacer = new Pacer({ limit: 1, windowMs: 60_000, signal: abort.signal });
    (await pacer.acquire())();
    const waiting = pacer.acquire();
    setTimeout(() => abort.abort(), 10);
    await expect(waiting).rejects.toMatchObject({ exitCode: 130 });
    const inflight = new Pacer({ limit: 1, windowMs: 60_000, signal: abort.signal });
    await expect(inflight.acquire()).resolves.toBeTypeOf('function');
  });
});

describe('HttpClient: a write sent untilAnswered (a bulk create the caller counts)', () => {
  /** A transport whose one answer comes when the test says so, and which fails at once when the request's own signal aborts. */
  function held() {
    let answer!: () => void;
    const transport: Transport = (_url, req) =>
      new Promise((resolve, reject) => {
        req.signal.addEventListener('abort', () => reject(req.signal.reason as Error), { once: true });
        const body = { async *[Symbol.asyncIterator]() {}, text: async () => '[{"id":7}]', destroy: () => undefined };
        answer = () => resolve({ statusCode: 200, headers: { 'content-type': 'application/json' }, body });
      });
    return { transport, answer: () => answer() };
  }

  it('is not cut off by Ctrl-C once sent: its answer comes back; without the flag the same request ends with InterruptedError', async () => {
    const abort = new AbortController();
    const h = held();
    const c = client({ transport: h.transport, signal: abort.signal });
    const sent = c.request({ method: 'POST', path: '/api/v3/stories/bulk', json: {}, untilAnswered: true });
    await new Promise((r) => setTimeout(r, 5));
    abort.abort();
    h.answer();
    expect((await sent).data).toEqual([{ id: 7 }]);

    const abort2 = new AbortController();
    const h2 = held();
    const cut = client({ transport: h2.transport, signal: abort2.signal }).request({ method: 'POST', path: '/api/v3/stories/bulk', json: {} });
    await new Promise((r) => setTimeout(r, 5));
    abort2.abort();
    await expect(cut).rejects.toMatchObject({ exitCode: 130 });
  });

  it('is not sent at all once interrupted (InterruptedError, nothing on the wire)', async () => {
    const abort = new AbortController();
    abort.abort();
    const c = client({ transport: held().transport, signal: abort.signal });
    await expect(c.request({ method: 'POST', path: '/x', json: {}, untilAnswered: true })).rejects.toMatchObject({ exitCode: 130 });
    expect(c.sent).toBe(0);
  });
});

describe('HttpClient: a bearer token refused as expired', () => {
  const bearer = (token: string) => ({ headers: { Authorization: `Bearer ${token}` } });
  const expired = { headers: { 'www-authenticate': 'Bearer realm="x", error="invalid_token"', 'content-type': 'application/json' } };

  it('renews the credentials once and sends the request again, a POST included (a 401 did nothing)', async () => {
    const pool = agent.get(ORIGIN);
    pool.intercept({ path: '/v2/labels', method: 'POST', headers: { authorization: 'Bearer old' } }).reply(401, { error: 'expired' }, expired);
    pool.intercept({ path: '/v2/labels', method: 'POST', headers: { authorization: 'Bearer new' } }).reply(200, { id: 'L1' }, expired);
    const refused: unknown[] = [];
    const c = client({
      service: 'labels',
      credentials: async () => bearer('old'),
      renewCredentials: async (r) => (refused.push(r), bearer('new')),
    });
    expect(await c.post('/v2/labels', { title: 'x' })).toEqual({ id: 'L1' });
    expect(refused).toEqual([bearer('old')]);
    expect(logs.join('\n')).not.toMatch(/Bearer (old|new)/);
  });

  it('renews at most once, and not for a 401 without invalid_token or when nothing can renew', async () => {
    const pool = agent.get(ORIGIN);
    pool.intercept({ path: '/v2/labels', method: 'GET' }).reply(401, { error: 'expired' }, expired).times(2);
    let renewals = 0;
    const once = client({ service: 'labels', credentials: async () => bearer('old'), renewCredentials: async () => (renewals++, bearer('new')) });
    expect(((await once.get('/v2/labels').catch((e: unknown) => e)) as ApiError).status).toBe(401);
    expect(renewals).toBe(1);

    pool.intercept({ path: '/v2/labels', method: 'GET' }).reply(401, { error: 'no' }, { headers: { 'www-authenticate': 'Bearer realm="x"' } });
    expect(((await once.get('/v2/labels').catch((e: unknown) => e)) as ApiError).status).toBe(401);
    expect(renewals).toBe(1);

    pool.intercept({ path: '/v2/labels', method: 'GET' }).reply(401, { error: 'expired' }, expired);
    const none = client({ service: 'labels', credentials: async () => bearer('old'), renewCredentials: async () => undefined });
    expect(((await none.get('/v2/labels').catch((e: unknown) => e)) as ApiError).status).toBe(401);
  });
});
