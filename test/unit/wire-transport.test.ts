import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { TransportRequest } from '../../src/core/http.js';
import { AnswerParser, WireTransport } from '../../src/core/wire-transport.js';

/**
 * The kv client's HTTP/1.1 transport (src/core/wire-transport.ts) against loopback servers: Node's own HTTP
 * server, and a socket server that answers with exact bytes (framings node:http would not choose).
 */
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

function request(extra: Partial<TransportRequest> = {}): TransportRequest {
  return { method: 'GET', headers: { accept: 'application/json' }, signal: new AbortController().signal, timeoutMs: 5000, ...extra };
}

/** A socket server: `answer(requestText, socket, index)` writes what it likes; counts connections and the requests' text. */
async function rawServer(answer: (text: string, socket: Socket, index: number) => void) {
  const seen = { connections: 0, requests: [] as string[], closed: 0 };
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    seen.connections++;
    sockets.add(socket);
    socket.on('close', () => seen.closed++);
    let buf = '';
    socket.on('data', (d) => {
      buf += d.toString('latin1');
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(/\r\ncontent-length: (\d+)/i.exec(buf.slice(0, end))?.[1] ?? 0);
        if (buf.length < end + 4 + length) return;
        const text = buf.slice(0, end + 4 + length);
        buf = buf.slice(end + 4 + length);
        seen.requests.push(text);
        answer(text, socket, seen.requests.length - 1);
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(
    () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

function transport(): WireTransport {
  const t = new WireTransport();
  closers.push(async () => t.close());
  return t;
}

const ok = (body: string, extra = '') =>
  `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;

describe('wire transport: requests on kept-alive connections', () => {
  it("Node's HTTP server: the request as sent (Host, headers, Content-Length, body), the answer, three requests on one connection", async () => {
    const got: Array<{ method?: string; url?: string; headers: IncomingMessage['headers']; body: string }> = [];
    let connections = 0;
    const server: HttpServer = createHttpServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        got.push({ method: req.method, url: req.url, headers: req.headers, body });
        res.writeHead(201, { 'content-type': 'application/json', 'x-twice': ['a', 'b'] });
        res.end(JSON.stringify({ echo: body, n: got.length }));
      });
    });
    server.on('connection', () => connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closers.push(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
    const { port } = server.address() as AddressInfo;
    const t = transport();
    for (let i = 1; i <= 3; i++) {
      const body = JSON.stringify({ key: 'aGVhbHRo', n: i, text: 'é' });
      const res = await t.send(
        new URL(`http://127.0.0.1:${port}/v3/kv/range?x=${i}`),
        request({ method: 'POST', headers: { authorization: 'tok.1', 'content-type': 'application/json' }, body }),
      );
      expect(res.statusCode).toBe(201);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.headers['x-twice']).toBe('a, b');
      expect(JSON.parse(await res.body.text())).toEqual({ echo: body, n: i });
    }
    expect(got.map((g) => [g.method, g.url])).toEqual([1, 2, 3].map((i) => ['POST', `/v3/kv/range?x=${i}`]));
    expect(got[0]!.headers).toMatchObject({ host: `127.0.0.1:${port}`, authorization: 'tok.1', 'content-length': String(Buffer.byteLength(got[0]!.body)) });
    expect(connections).toBe(1);
    // a GET carries no body and no Content-Length
    const v = await t.send(new URL(`http://127.0.0.1:${port}/version`), request());
    expect(JSON.parse(await v.body.text())).toEqual({ echo: '', n: 4 });
    expect(got[3]!.headers['content-length']).toBeUndefined();
  });

  it('a chunked answer (a size with an extension, trailers), delivered a byte at a time; the connection carries the next request', async () => {
    const srv = await rawServer((_text, socket, i) => {
      const bytes = Buffer.from(
        i === 0
          ? 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;name=x\r\n{"a":\r\n4\r\n"bc"\r\n1\r\n}\r\n0\r\nX-Trailer: 1\r\n\r\n'
          : ok('{"second":true}'),
      );
      // a byte per write, a pause now and then: the client sees the answer in many pieces
      void (async () => {
        for (let at = 0; at < bytes.length; at++) {
          socket.write(bytes.subarray(at, at + 1));
          if (at % 7 === 0) await new Promise((r) => setTimeout(r, 1));
        }
      })();
    });
    const t = transport();
    const first = await t.send(new URL(`${srv.url}/v3/kv/range`), request());
    expect(await first.body.text()).toBe('{"a":"bc"}');
    const second = await t.send(new URL(`${srv.url}/v3/kv/range`), request());
    expect(await second.body.text()).toBe('{"second":true}');
    expect(srv.seen.connections).toBe(1);
  });

  it('an answer framed by the close, a 100 Continue before the answer, a 204: each read; a closed connection is not used again', async () => {
    const srv = await rawServer((_text, socket, i) => {
      if (i === 0) socket.end('HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{"until":"close"}');
      else if (i === 1) socket.write(`HTTP/1.1 100 Continue\r\n\r\n${ok('{"after":100}')}`);
      else if (i === 2) socket.write('HTTP/1.1 204 No Content\r\nDate: x\r\n\r\n');
      else socket.write(ok('{"last":true}'));
    });
    const t = transport();
    const texts: Array<[number, string]> = [];
    for (let i = 0; i < 4; i++) {
      const r = await t.send(new URL(`${srv.url}/x`), request());
      texts.push([r.statusCode, await r.body.text()]);
    }
    expect(texts).toEqual([
      [200, '{"until":"close"}'],
      [200, '{"after":100}'],
      [204, ''],
      [200, '{"last":true}'],
    ]);
    // the first connection closed with its answer; the rest on a second one
    expect(srv.seen.connections).toBe(2);
  });

  it('bytes past the answer: the answer is returned and its connection dropped', async () => {
    const srv = await rawServer((_text, socket) => socket.write(`${ok('{"n":1}')}HTTP/1.1 200 OK\r\n`));
    const t = transport();
    expect(await (await t.send(new URL(`${srv.url}/x`), request())).body.text()).toBe('{"n":1}');
    expect(await (await t.send(new URL(`${srv.url}/x`), request())).body.text()).toBe('{"n":1}');
    expect(srv.seen.connections).toBe(2);
  });

  it('a connection the member closed while idle is not used: the next request opens another, without an error', async () => {
    const srv = await rawServer((_text, socket) => {
      socket.write(ok('{}'));
      setTimeout(() => socket.end(), 5);
    });
    const t = transport();
    await t.send(new URL(`${srv.url}/x`), request());
    const deadline = Date.now() + 10_000;
    while (srv.seen.closed < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 20));
    expect(await (await t.send(new URL(`${srv.url}/x`), request())).body.text()).toBe('{}');
    expect(srv.seen.connections).toBe(2);
  });
});

describe('wire transport: pipelined requests', () => {
  it('requests marked pipeline leave on one connection before any answer; the answers, sent in one piece, go back to each in order', async () => {
    const srv = await rawServer((_text, socket, i) => {
      // nothing is answered until the third request is in: the client did not wait for the first answer
      if (i === 2) socket.write(`${ok('{"n":1}')}${ok('{"n":2}')}HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n7\r\n{"n":3}\r\n0\r\n\r\n`);
      if (i === 3) socket.write(ok('{"n":4}'));
    });
    const t = transport();
    const sent = [1, 2, 3].map((n) => t.send(new URL(`${srv.url}/v3/kv/range`), request({ method: 'POST', body: `{"n":${n}}`, pipeline: true })));
    const texts = await Promise.all(sent.map(async (p) => (await p).body.text()));
    expect(texts).toEqual(['{"n":1}', '{"n":2}', '{"n":3}']);
    expect(srv.seen.requests.map((r) => r.slice(r.indexOf('\r\n\r\n') + 4))).toEqual(['{"n":1}', '{"n":2}', '{"n":3}']);
    expect(srv.seen.connections).toBe(1);
    // the connection is idle again: a request without the mark reuses it
    expect(await (await t.send(new URL(`${srv.url}/x`), request())).body.text()).toBe('{"n":4}');
    expect(srv.seen.connections).toBe(1);
  });

  it('a request without the mark never waits behind others: it opens a connection of its own', async () => {
    const srv = await rawServer((text, socket) => {
      if (text.startsWith('GET /slow')) setTimeout(() => socket.write(ok('{"slow":true}')), 200);
      else socket.write(ok('{"fast":true}'));
    });
    const t = transport();
    const slow = t.send(new URL(`${srv.url}/slow`), request({ pipeline: true }));
    const fast = await t.send(new URL(`${srv.url}/fast`), request());
    expect(await fast.body.text()).toBe('{"fast":true}');
    expect(await (await slow).body.text()).toBe('{"slow":true}');
    expect(srv.seen.connections).toBe(2);
  });

  it("one request's deadline: it fails with its reason, the others on its connection as cut short (ECONNRESET, which HttpClient sends again)", async () => {
    const srv = await rawServer(() => undefined);
    const t = transport();
    const ac = new AbortController();
    const first = t.send(new URL(`${srv.url}/a`), request({ pipeline: true, signal: ac.signal }));
    const second = t.send(new URL(`${srv.url}/b`), request({ pipeline: true }));
    const deadline = Date.now() + 10_000;
    while (srv.seen.requests.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    const reason = Object.assign(new Error('no complete answer within 50 ms'), { code: 'DEADLINE_PASSED' });
    ac.abort(reason);
    await expect(first).rejects.toBe(reason);
    await expect(second).rejects.toMatchObject({ code: 'ECONNRESET' });
  });
});

describe('wire transport: failures', () => {
  it('closed in the middle of the body: socket hang up (ECONNRESET), as Node says it', async () => {
    const srv = await rawServer((_text, socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{"cut'));
    await expect(transport().send(new URL(`${srv.url}/x`), request())).rejects.toMatchObject({ code: 'ECONNRESET', message: 'socket hang up' });
  });

  it('no status line, a bad chunk size, two Content-Lengths: refused (HPE_INVALID), the connection dropped', async () => {
    const answers = [
      'SSH-2.0-OpenSSH\r\n\r\n',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
      'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}',
    ];
    const srv = await rawServer((_text, socket, i) => socket.write(answers[i]!));
    const t = transport();
    for (const [i, what] of [/HTTP\/1\.x status line/, /not hexadecimal/, /not one number/].entries())
      await expect(t.send(new URL(`${srv.url}/x`), request()), String(i)).rejects.toMatchObject({ code: 'HPE_INVALID', message: expect.stringMatching(what) });
    expect(srv.seen.connections).toBe(3);
  });

  it('nothing listening: ECONNREFUSED', async () => {
    const srv = await rawServer(() => undefined);
    const url = srv.url;
    for (const c of closers.splice(0)) await c();
    await expect(transport().send(new URL(`${url}/x`), request())).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it("the request's signal aborts: rejected with its reason, the connection closed; an aborted signal sends nothing", async () => {
    const srv = await rawServer(() => undefined);
    const t = transport();
    const ac = new AbortController();
    const sent = t.send(new URL(`${srv.url}/x`), request({ signal: ac.signal }));
    const deadline = Date.now() + 10_000;
    while (srv.seen.requests.length < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    const reason = Object.assign(new Error('no complete answer within 50 ms'), { code: 'DEADLINE_PASSED' });
    ac.abort(reason);
    await expect(sent).rejects.toBe(reason);
    while (srv.seen.closed < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(srv.seen.closed).toBe(1);
    await expect(t.send(new URL(`${srv.url}/x`), request({ signal: ac.signal }))).rejects.toBe(reason);
    expect(srv.seen.connections).toBe(1);
  });

  it('a header value with a line break, or a name that is not a token: refused before anything is sent', async () => {
    const srv = await rawServer((_text, socket) => socket.write(ok('{}')));
    const t = transport();
    await expect(t.send(new URL(`${srv.url}/x`), request({ headers: { authorization: 'tok\r\nX-Evil: 1' } }))).rejects.toMatchObject({
      code: 'ERR_INVALID_CHAR',
    });
    await expect(t.send(new URL(`${srv.url}/x`), request({ headers: { 'bad name': 'v' } }))).rejects.toMatchObject({ code: 'ERR_INVALID_HTTP_TOKEN' });
    expect(srv.seen.connections).toBe(0);
  });
});

describe('AnswerParser', () => {
  it('an answer split anywhere reads the same; a keep-alive HTTP/1.0 answer is reusable, a plain one is not', () => {
    const text = 'HTTP/1.1 200 OK\r\nContent-Length: 11\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n\r\nhello world';
    for (let cut = 1; cut < text.length; cut++) {
      const p = new AnswerParser('GET');
      expect(p.push(Buffer.from(text.slice(0, cut))), String(cut)).toBeUndefined();
      const a = p.push(Buffer.from(text.slice(cut)));
      expect(a?.body.toString(), String(cut)).toBe('hello world');
      expect(a?.headers['set-cookie']).toEqual(['a=1', 'b=2']);
      expect(a?.reusable).toBe(true);
    }
    expect(new AnswerParser('GET').push(Buffer.from('HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n'))?.reusable).toBe(true);
    expect(new AnswerParser('GET').push(Buffer.from('HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n'))?.reusable).toBe(false);
  });
});
