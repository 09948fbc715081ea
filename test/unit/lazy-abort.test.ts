import { createServer, type AddressInfo, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { HttpClient, type Transport } from '../../src/core/http.js';
import { abortOf, LazyAbort } from '../../src/core/lazy-abort.js';
import { WireTransport } from '../../src/core/wire-transport.js';

/**
 * src/core/lazy-abort.ts: an AbortController whose AbortSignal is made on first read, and whose subscribers are told
 * without one (the context's Ctrl-C, HttpClient's request deadline; issue 60's ninth pass).
 */
describe('LazyAbort', () => {
  it('tells its subscribers once, in order, with the reason; an unsubscribed one and one added after the abort are not told', () => {
    const a = new LazyAbort();
    const told: string[] = [];
    a.onAbort(() => told.push('first'));
    const stop = a.onAbort(() => told.push('stopped'));
    a.onAbort(() => told.push(`second ${String(a.reason)}`));
    stop();
    expect(a.aborted).toBe(false);
    a.abort('SIGINT');
    a.abort('again');
    a.onAbort(() => told.push('late'));
    expect(told).toEqual(['first', 'second SIGINT']);
    expect(a.aborted).toBe(true);
    expect(a.reason).toBe('SIGINT');
  });

  it('makes its signal when first read: aborted with the same reason when read after the abort, its listeners told before the subscribers when read before', () => {
    const after = new LazyAbort();
    const reason = new Error('no complete answer within 1 s');
    after.abort(reason);
    expect(after.signal.aborted).toBe(true);
    expect(after.signal.reason).toBe(reason);
    expect(after.signal).toBe(after.signal);

    const before = new LazyAbort();
    const told: string[] = [];
    before.onAbort(() => told.push('subscriber'));
    before.signal.addEventListener('abort', () => told.push('listener'), { once: true });
    before.abort();
    expect(told).toEqual(['listener', 'subscriber']);
    // an AbortController's own default reason
    expect(before.reason).toBeInstanceOf(DOMException);
    expect((before.reason as DOMException).name).toBe('AbortError');
    expect(before.signal.reason).toBe(before.reason);
  });

  it('abortOf: a request given no LazyAbort is watched through its signal', () => {
    const ac = new AbortController();
    const view = abortOf({ signal: ac.signal });
    let told = 0;
    const stop = view.onAbort(() => told++);
    view.onAbort(() => told++);
    stop();
    ac.abort('x');
    expect([view.aborted, view.reason, told]).toEqual([true, 'x', 1]);
  });
});

describe("HttpClient's deadline and interrupt without an AbortSignal", () => {
  it("a transport that reads only `abort` is cut off by the context's Ctrl-C (InterruptedError), and the context's signal is never made", async () => {
    const interrupt = new LazyAbort();
    const transport: Transport = (_url, req) =>
      new Promise((_resolve, reject) => {
        const abort = req.abort!;
        abort.onAbort(() => reject(new Error('cut off', { cause: abort.reason })));
      });
    const c = new HttpClient({ service: 'tracker', baseUrl: 'http://127.0.0.1:9', transport, interrupt, maxAttempts: 1 });
    const sent = c.request({ method: 'GET', path: '/x' });
    await new Promise((r) => setTimeout(r, 5));
    interrupt.abort('SIGINT');
    await expect(sent).rejects.toMatchObject({ exitCode: 130 });
    expect((interrupt as unknown as { controller?: AbortController }).controller).toBeUndefined();
  });

  it('the deadline passes: the transport is told through `abort` and the request fails as a network error', async () => {
    const transport: Transport = (_url, req) =>
      new Promise((_resolve, reject) => req.abort!.onAbort(() => reject(new Error('cut off', { cause: req.abort!.reason }))));
    const c = new HttpClient({ service: 'tracker', baseUrl: 'http://127.0.0.1:9', transport, maxAttempts: 1, timeoutMs: 20 });
    await expect(c.get('/x')).rejects.toMatchObject({ message: expect.stringContaining('no answer within 20 ms') });
  });
});

describe("WireTransport told by the request's LazyAbort", () => {
  it('rejects with the reason and closes the connection', async () => {
    let closed = 0;
    const sockets: Socket[] = [];
    const server = createServer((s) => {
      sockets.push(s);
      s.on('close', () => closed++);
      s.on('error', () => undefined);
      s.resume();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const t = new WireTransport();
    try {
      const abort = new LazyAbort();
      const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/x`);
      const sent = t.send(url, { method: 'GET', headers: {}, signal: abort.signal, abort, timeoutMs: 5000 });
      while (sockets.length < 1) await new Promise((r) => setTimeout(r, 5));
      const reason = Object.assign(new Error('no complete answer within 50 ms'), { code: 'DEADLINE_PASSED' });
      abort.abort(reason);
      await expect(sent).rejects.toBe(reason);
      while (closed < 1) await new Promise((r) => setTimeout(r, 5));
      expect(closed).toBe(1);
    } finally {
      t.close();
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    }
  });
});
