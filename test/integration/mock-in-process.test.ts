import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient, viaNetwork, type Transport, type TransportRequest, type TransportResponse } from '../../src/core/http.js';
import { startMock } from '../helpers/mock.js';

// The embedded profile's requests are answered by the mock in the same process (MockServer.answer),
// without a socket. Whatever a client sees must be what the same request over HTTP gets.

let server: Awaited<ReturnType<typeof startMock>>;
beforeAll(async () => {
  server = await startMock({ maxBodyBytes: 64 * 1024 });
});
afterAll(() => server.close());

const network = viaNetwork();

type Answer = { status: number; type: unknown; body: string };

/** The same request answered in-process, then over the network: [local, remote]. */
async function both(path: string, init: Partial<TransportRequest> = {}): Promise<[local: Answer, remote: Answer]> {
  const answer = async (carry: Transport): Promise<Answer> => {
    const req: TransportRequest = {
      method: 'GET',
      headers: { 'shortcut-token': server.trackerToken, accept: 'application/json' },
      signal: new AbortController().signal,
      timeoutMs: 5_000,
      ...init,
    };
    const res: TransportResponse = await carry(new URL(path, server.url), req);
    return { status: res.statusCode, type: res.headers['content-type'], body: await res.body.text() };
  };
  const local = await answer((u, r) => server.answer(u, r));
  const remote = await answer(network);
  return [local, remote];
}

describe('the mock answered in-process', () => {
  it('gives the same status, content type and body as over HTTP: a list, a 404, a 405, bad JSON, a body over the limit', async () => {
    const json = { 'shortcut-token': '', 'content-type': 'application/json' };
    const cases: Array<[string, Partial<TransportRequest>]> = [
      ['/api/v3/labels', {}],
      ['/api/v3/no-such-thing', {}],
      ['/api/v3/labels', { method: 'PATCH' }],
      ['/api/v3/labels', { method: 'POST', body: '{"name":', headers: json }],
      ['/api/v3/labels', { method: 'POST', body: JSON.stringify({ name: 'x'.repeat(70 * 1024) }), headers: json }],
      ['/nothing-here', {}],
      ['/api/v3/labels', { method: 'HEAD' }],
    ];
    for (const [path, init] of cases) {
      if (init.headers) init.headers['shortcut-token'] = server.trackerToken;
      const [local, remote] = await both(path, init);
      expect(local, `${init.method ?? 'GET'} ${path}`).toEqual(remote);
    }
    const [bad] = await both('/api/v3/labels', { method: 'POST', body: '{"name":', headers: { ...json, 'shortcut-token': server.trackerToken } });
    expect(bad.status).toBe(400);
  });

  it('a route that reads its own body (an upload) gets it in-process as a stream, as over HTTP', async () => {
    const body = ['--X', 'Content-Disposition: form-data; name="file0"; filename="a.txt"', 'Content-Type: text/plain', '', 'hello', '--X--', ''].join('\r\n');
    const headers = { 'shortcut-token': server.trackerToken, 'content-type': 'multipart/form-data; boundary=X' };
    const [local, remote] = await both('/api/v3/files', { method: 'POST', body, headers });
    expect(local.status).toBe(201);
    expect(remote.status).toBe(201);
    const names = [local, remote].map((a) => (JSON.parse(a.body) as Array<{ name: string; size: number }>).map((f) => [f.name, f.size]));
    expect(names[0]).toEqual([['a.txt', 5]]);
    expect(names[0]).toEqual(names[1]);
  });

  it('a write answered in-process is stored, as one over HTTP is', async () => {
    const headers = { 'shortcut-token': server.trackerToken, 'content-type': 'application/json' };
    const res = await server.answer(new URL('/api/v3/labels', server.url), {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'in-process' }),
      signal: new AbortController().signal,
      timeoutMs: 5_000,
    });
    expect(res.statusCode).toBe(201);
    const [local, remote] = await both('/api/v3/labels');
    expect(JSON.parse(local.body)).toEqual(JSON.parse(remote.body));
    expect((JSON.parse(remote.body) as Array<{ name: string }>).map((l) => l.name)).toContain('in-process');
  });

  it('HttpClient over it: retries, credentials and errors as over the network (a 404 is an ApiError with the server message)', async () => {
    const client = new HttpClient({
      service: 'tracker',
      baseUrl: server.url,
      transport: (u, r) => server.answer(u, r),
      credentials: () => Promise.resolve({ headers: { 'Shortcut-Token': server.trackerToken } }),
    });
    const labels = await client.get<Array<{ name: string }>>('/api/v3/labels');
    expect(labels.map((l) => l.name)).toContain('in-process');
    await expect(client.get('/api/v3/labels/999999')).rejects.toMatchObject({ status: 404 });
    expect(client.sent).toBe(2);
  });

  it('a request whose deadline has passed is refused before the mock sees it; one cut off mid-way rejects with the deadline', async () => {
    const gone = new AbortController();
    gone.abort(new Error('deadline passed'));
    const url = new URL('/api/v3/labels', server.url);
    const before = server.requests.length;
    await expect(server.answer(url, { method: 'GET', headers: {}, signal: gone.signal, timeoutMs: 1 })).rejects.toThrow('deadline passed');
    expect(server.requests.length).toBe(before);
    const cut = new AbortController();
    const pending = server.answer(url, { method: 'GET', headers: { 'shortcut-token': server.trackerToken }, signal: cut.signal, timeoutMs: 1_000 });
    cut.abort(new Error('cut off'));
    await expect(pending).rejects.toThrow('cut off');
  });

  it('refuses a body it cannot carry (multipart goes over the network)', () => {
    const form = new FormData();
    expect(() =>
      server.answer(new URL('/api/v3/files', server.url), {
        method: 'POST',
        headers: {},
        body: form,
        signal: new AbortController().signal,
        timeoutMs: 1_000,
      }),
    ).toThrow(/multipart goes over the network/);
  });
});
