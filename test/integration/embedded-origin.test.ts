import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmbeddedMock, type TransportRequest, type TransportResponse } from '@opsctl/mock';
import { startListener } from '@opsctl/mock/listener.js';

// The embedded mock's origin is virtual until something outside the process needs a socket
// (packages/mock/src/embedded.ts): requests to it are answered in-process; `listen` opens the socket.

const dir = mkdtempSync(join(tmpdir(), 'opsctl-embedded-origin-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const request = (token: string, init: Partial<TransportRequest> = {}): TransportRequest => ({
  method: 'GET',
  headers: { 'shortcut-token': token, accept: 'application/json' },
  signal: new AbortController().signal,
  timeoutMs: 5_000,
  ...init,
});

async function embedded(name: string) {
  return createEmbeddedMock({ statePath: join(dir, `${name}.json`), signal: new AbortController().signal, notice: () => undefined });
}

describe('the embedded mock: a virtual origin until it listens', () => {
  it('answers its virtual origin in-process (the network is never asked); the same state after it listens, over HTTP too', async () => {
    const mock = await embedded('virtual');
    try {
      const virtual = mock.url;
      expect(virtual).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const network = (url: URL): Promise<TransportResponse> => Promise.reject(new Error(`the network was asked for ${url.href}`));
      const carry = mock.transport(network);
      const token = await mock.trackerToken();
      const made = await carry(
        new URL('/api/v3/labels', virtual),
        request(token, { method: 'POST', body: JSON.stringify({ name: 'before' }), headers: { 'shortcut-token': token, 'content-type': 'application/json' } }),
      );
      expect(made.statusCode).toBe(201);

      const socket = await mock.listen();
      expect(await mock.listen()).toBe(socket); // once
      expect(mock.url).toBe(socket);
      // over a real socket, as a browser would reach it
      const res = await fetch(`${socket}/api/v3/labels`, { headers: { 'shortcut-token': token } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as Array<{ name: string }>).map((l) => l.name)).toEqual(['before']);
      // both origins are still answered here, not over the network
      for (const origin of [virtual, socket]) {
        const listed = await carry(new URL('/api/v3/labels', origin), request(token));
        expect(listed.statusCode, origin).toBe(200);
      }
      // another origin is the network's
      await expect(carry(new URL('http://127.0.0.1:9/x'), request(token))).rejects.toThrow('the network was asked for http://127.0.0.1:9/x');
    } finally {
      await mock.close();
    }
  });

  it('a multipart body goes to the network, at the socket opened for it (the path and query kept)', async () => {
    const mock = await embedded('upload');
    try {
      const virtual = mock.url;
      const asked: string[] = [];
      const carry = mock.transport((url) => {
        asked.push(url.href);
        return Promise.resolve({
          statusCode: 204,
          headers: {},
          body: { text: () => Promise.resolve(''), destroy: () => undefined, [Symbol.asyncIterator]: () => [][Symbol.iterator]() as never },
        });
      });
      await carry(new URL('/api/v3/files?x=1', virtual), request('t', { method: 'POST', body: new FormData() }));
      expect(asked).toEqual([`${mock.url}/api/v3/files?x=1`]);
      expect((await fetch(`${mock.url}/api/v3/labels`)).status).toBe(401); // a real socket (no token)
    } finally {
      await mock.close();
    }
  });

  it('closes what it opened: the socket refuses connections after close', async () => {
    const mock = await embedded('close');
    const socket = await mock.listen();
    await mock.close();
    await expect(fetch(`${socket}/api/v3/labels`)).rejects.toThrow();
  });
});

describe('the listener', () => {
  let taken: Server | undefined;
  afterAll(() => new Promise<void>((r) => (taken ? taken.close(() => r()) : r())));

  it('takes the port it is asked for; with fallback, a port in use gives way to a free one; without, the error stands', async () => {
    taken = createServer();
    await new Promise<void>((r) => taken!.listen(0, '127.0.0.1', r));
    const port = (taken.address() as { port: number }).port;
    const serve = () => Promise.resolve();
    const fallback = await startListener(serve, port, '127.0.0.1', { fallback: true });
    try {
      expect(fallback.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(fallback.url).not.toBe(`http://127.0.0.1:${port}`);
    } finally {
      await fallback.close();
    }
    await expect(startListener(serve, port, '127.0.0.1')).rejects.toMatchObject({ code: 'EADDRINUSE' });
    const free = fallback.url.split(':').pop();
    const exact = await startListener(serve, Number(free), '127.0.0.1', { fallback: true }).catch(() => undefined);
    // (the port just freed is taken again exactly, unless another process took it meanwhile)
    if (exact) {
      expect(exact.url).toBe(`http://127.0.0.1:${free}`);
      await exact.close();
    }
  });
});
