import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { MockIncoming, MockOutgoing } from './http.js';
import { answerInProcess } from './in-process.js';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { handle } from './pipeline.js';
import { isOpsError } from '@opsctl/shared/errors.js';
import { withRequestSignal } from './request-signal.js';
import { MockRuntime } from './runtime.js';
import { send } from './send.js';
import type { MockServer, MockServerOptions } from './server-types.js';
// (The shapes live in server-types.ts, so the runtime reads them without importing the server.)
export type { Fault, LoggedRequest, MockServer, MockServerOptions, RouteInfo } from './server-types.js';

/**
 * Every mocked service on one loopback origin: tests, the embedded profile and `mock serve` all start
 * it here. Services load on their first request (runtime.ts); each request runs the fixed pipeline of
 * pipeline.ts; the test knobs (test-knobs.ts) exist only with `test: true`.
 */
export async function createMockServer(opts: MockServerOptions = {}): Promise<MockServer> {
  const rt = new MockRuntime(opts);
  const serve = serveRequest(rt);
  const http = httpServer(serve);
  const url = await listen(http, opts.port ?? 0, opts.host ?? '127.0.0.1');
  return {
    url,
    urls: Object.fromEntries(rt.enabled.map((s) => [s, url])),
    store: rt.store,
    services: rt.enabled,
    requests: rt.requests,
    inject: (fault) => rt.inject(fault),
    service: (name) => rt.ctx.service(name),
    routes: () => rt.routes(),
    answer: (target, init) => answerInProcess(serve, target, init),
    clock: {
      now: rt.now,
      advance(ms) {
        rt.clockOffsetMs += ms;
      },
    },
    async close() {
      // Services first (background loops such as event delivery stop and save), then the listener and store.
      await rt.closeServices();
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
      await rt.store.close();
    },
  };
}

/** One request through the pipeline (over HTTP or in-process); a bug of the mock is logged and answered 500. */
function serveRequest(rt: MockRuntime): (req: MockIncoming, res: MockOutgoing) => Promise<void> {
  return (req, res) =>
    withRequestSignal(res, () => handle(rt, req, res)).catch((err: Error) => {
      // The mock's own storage, before any service answered (a state file of the wrong shape, a directory it cannot write).
      if (isOpsError(err)) {
        rt.onLocalError?.(err);
        if (!res.headersSent) send(req, res, { status: 503, json: { message: err.message, ...(err.hint ? { hint: err.hint } : {}) } });
        return;
      }
      process.stderr.write(`opsctl mock: ${req.method} ${req.url}: ${err.stack}\n`);
      if (!res.headersSent) send(req, res, { status: 500, json: { message: `mock failure: ${err.message}` } });
      else res.destroy();
    });
}

/** The node:http server: each request served by `serve`. */
function httpServer(serve: (req: MockIncoming, res: MockOutgoing) => Promise<void>): Server {
  const http = createServer((req, res) => void serve(req, res));
  http.keepAliveTimeout = 5_000;
  // CONNECT (a proxy tunnel) is nothing the mock serves: answer it rather than drop the connection.
  http.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    const body = JSON.stringify({ message: 'CONNECT is not served by the opsctl mock' });
    socket.end(
      `HTTP/1.1 405 Method Not Allowed\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  });
  return http;
}

/** Listens on host:port (0: any free port); resolves the origin, e.g. http://127.0.0.1:41234. */
async function listen(http: Server, port: number, host: string): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const addr = http.address() as AddressInfo;
  return `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`;
}
