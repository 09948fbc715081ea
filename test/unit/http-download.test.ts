import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Agent } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { NetworkError } from '../../src/core/errors.js';
import { HttpClient, type HttpClientOptions } from '../../src/core/http.js';

/**
 * What core/http.ts does for a download and a browser's walk through pages (kv release get, the sign-in's
 * --consent-as): a body streamed with its head, a deadline for each wait, redirects across origins, a form
 * with a repeated field. Real HTTP to servers on port 0; time that must pass is a fake clock's.
 */

type Handler = (req: IncomingMessage & { body: string }, res: ServerResponse) => void;

/** A server on 127.0.0.1 port 0 whose answers are the test's HANDLER of the moment. */
function server() {
  let handler: Handler = (_req, res) => void res.writeHead(500).end();
  const s: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handler(Object.assign(req, { body: Buffer.concat(chunks).toString() }), res));
  });
  return {
    s,
    origin: '',
    answer(h: Handler) {
      handler = h;
    },
  };
}

const a = server();
const b = server();
const agent = new Agent({ keepAliveTimeout: 1000 });
const notices: string[] = [];

beforeAll(async () => {
  for (const x of [a, b]) {
    await new Promise<void>((r) => x.s.listen(0, '127.0.0.1', r));
    const addr = x.s.address();
    x.origin = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  }
});
afterEach(() => {
  vi.useRealTimers();
  notices.length = 0;
});
afterAll(async () => {
  await agent.close();
  for (const x of [a, b]) {
    x.s.closeAllConnections();
    await new Promise((r) => x.s.close(r));
  }
});

function client(extra: Partial<HttpClientOptions> = {}) {
  return new HttpClient({
    service: 'release',
    baseUrl: a.origin,
    dispatcher: agent,
    notice: (line) => notices.push(line),
    sleep: async () => undefined,
    ...extra,
  });
}

/** Resolves when F() holds, looking again at each turn of the event loop (no fixed sleep). */
async function until(f: () => boolean): Promise<void> {
  while (!f()) await new Promise((r) => setImmediate(r));
}

describe('a body read as it streams (consume)', () => {
  /** A server that sends the head and then one piece each time the test calls `next`; `end` ends the body. */
  function paced() {
    let res: ServerResponse | undefined;
    a.answer((_req, r) => {
      res = r;
      r.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '9' });
      r.flushHeaders();
    });
    return {
      started: () => res !== undefined,
      next: (piece: string) => res!.write(piece),
      end: (piece: string) => res!.end(piece),
    };
  }

  /** Runs one paced download under a fake clock: three pieces, each 0.8 of the deadline after the last. */
  async function download(deadline: 'whole' | 'each-wait') {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const srv = paced();
    const got: string[] = [];
    let head: { status: number; headers: Record<string, unknown> } | undefined;
    const c = client({ timeoutMs: 1000, noticeAfterMs: 100 });
    const done = c
      .request({
        path: '/v3.5.21/etcd.tar.gz',
        auth: false,
        deadline,
        consume: async (body, h) => {
          head = h;
          for await (const piece of body) got.push(Buffer.from(piece).toString());
        },
      })
      .then(
        (r) => r,
        (err: unknown) => err,
      );
    await until(srv.started);
    for (const piece of ['abc', 'def']) {
      srv.next(piece);
      await until(() => got.length > 0 && got.join('').endsWith(piece));
      await vi.advanceTimersByTimeAsync(800);
    }
    srv.end('ghi');
    return { result: await done, got, head, sent: c.sent };
  }

  it("each-wait: a download longer than the deadline whose every wait is shorter comes whole, its head (status, Content-Length) given to the reader; no 'waiting' notice once the head came", async () => {
    const { result, got, head } = await download('each-wait');
    expect(result).toMatchObject({ status: 200, data: undefined });
    expect(got.join('')).toBe('abcdefghi');
    expect(head).toMatchObject({ status: 200, headers: { 'content-length': '9' } });
    expect(notices).toEqual([]);
  });

  it('whole (the default): the same download ends at the deadline of the whole exchange, not sent again', async () => {
    const { result, sent } = await download('whole');
    expect(result).toBeInstanceOf(NetworkError);
    expect((result as Error).message).toMatch(
      /^release: GET http:\/\/127\.0\.0\.1:\d+\/v3\.5\.21\/etcd\.tar\.gz failed: the answer was not complete within 1 s \(200 received/,
    );
    expect(sent).toBe(1);
    expect(notices.filter((n) => /retrying/.test(n))).toEqual([]);
  });

  it('each-wait: a server that stops sending ends the download with the wait named, never sent again', async () => {
    // (a fake clock: the 50 ms pass once the body is being read, however busy the machine is)
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const srv = paced();
    const c = client({ timeoutMs: 50 });
    const got: string[] = [];
    let reading = false;
    const done = c
      .request({
        path: '/stalls',
        auth: false,
        deadline: 'each-wait',
        consume: async (body) => {
          reading = true;
          for await (const piece of body) got.push(Buffer.from(piece).toString());
        },
      })
      .catch((e: unknown) => e);
    await until(() => reading);
    await vi.advanceTimersByTimeAsync(50);
    const err = await done;
    expect(srv.started()).toBe(true);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as Error).message).toMatch(/failed: no bytes of the answer for 50 ms \(200 received, the body still coming\)$/);
    expect(((err as Error).cause as Error).message).toBe('no bytes of the body for 50 ms');
    expect(c.sent).toBe(1);
  });

  it("the reader's own error is thrown as it is, never retried", async () => {
    a.answer((_req, res) => void res.writeHead(200).end('x'.repeat(1000)));
    const c = client();
    const mine = new Error('disk full');
    const err = await c
      .request({
        path: '/file',
        auth: false,
        consume: async () => {
          throw mine;
        },
      })
      .catch((e: unknown) => e);
    expect(err).toBe(mine);
    expect(c.sent).toBe(1);
  });
});

describe('redirects (followRedirects)', () => {
  it('followed to another origin (a release mirror to its storage): the credentials stay with their own origin, the answer is the last one', async () => {
    const seen: Array<{ at: string; auth?: string; token?: string | null }> = [];
    a.answer((req, res) => {
      seen.push({ at: 'a', auth: req.headers.authorization, token: new URL(req.url!, a.origin).searchParams.get('access_token') });
      res.writeHead(302, { location: `${b.origin}/storage/etcd.tar.gz?sig=1` }).end();
    });
    b.answer((req, res) => {
      seen.push({ at: 'b', auth: req.headers.authorization, token: new URL(req.url!, b.origin).searchParams.get('access_token') });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('archive');
    });
    const c = client({ credentials: async () => ({ headers: { Authorization: 'Bearer s3cret' }, query: { access_token: 't0ken' } }) });
    const r = await c.request<string>({ path: '/v3.5.21/etcd.tar.gz', followRedirects: true, text: true });
    expect(r).toMatchObject({ status: 200, data: 'archive', url: `${b.origin}/storage/etcd.tar.gz?sig=1` });
    expect(seen).toEqual([
      { at: 'a', auth: 'Bearer s3cret', token: 't0ken' },
      { at: 'b', auth: undefined, token: null },
    ]);
  });

  it('303 after a POST goes on as a GET without the body; 307 keeps the method and the body; past 5 the redirect is the answer', async () => {
    const seen: string[] = [];
    a.answer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers['content-type'] ?? '-'} ${req.body || '-'}`);
      if (req.url === '/form') return void res.writeHead(303, { location: '/done' }).end();
      if (req.url === '/keep') return void res.writeHead(307, { location: '/kept' }).end();
      if (req.url!.startsWith('/loop')) return void res.writeHead(302, { location: `/loop${seen.length}` }).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    const c = client();
    expect((await c.request({ method: 'POST', path: '/form', form: { a: '1' }, followRedirects: true })).data).toEqual({ ok: true });
    expect((await c.request({ method: 'POST', path: '/keep', json: { b: 2 }, followRedirects: true })).data).toEqual({ ok: true });
    expect(seen).toEqual([
      'POST /form application/x-www-form-urlencoded a=1',
      'GET /done - -',
      'POST /keep application/json {"b":2}',
      'POST /kept application/json {"b":2}',
    ]);
    seen.length = 0;
    const loop = await c.request({ path: '/loop', followRedirects: true, anyStatus: true });
    expect(loop.status).toBe(302);
    expect(seen).toHaveLength(6);
  });
});

describe('a form body', () => {
  it('a list repeats the field, in order (the scopes a consent form grants); an undefined field is left out', async () => {
    let body = '';
    a.answer((req, res) => {
      body = req.body;
      res.writeHead(204).end();
    });
    await client().request({ method: 'POST', path: '/consent', form: { request: 'r1', scope: ['openid', 'email'], skip: undefined } });
    expect(body).toBe('request=r1&scope=openid&scope=email');
  });
});
