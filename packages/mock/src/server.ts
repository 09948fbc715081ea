import { createMockCore } from './core.js';
import { answerInProcess } from './in-process.js';
import { startListener } from './listener.js';
import type { MockServer, MockServerOptions } from './server-types.js';
// (The shapes live in server-types.ts, so the runtime reads them without importing the server.)
export type { Fault, LoggedRequest, MockServer, MockServerOptions, RouteInfo } from './server-types.js';

/**
 * Every mocked service on one loopback origin: tests and `mock serve` start it here (the embedded profile
 * starts the same core without a socket: embedded.ts). Services load on their first request (runtime.ts);
 * each request runs the fixed pipeline of pipeline.ts; the test knobs (test-knobs.ts) exist only with `test: true`.
 */
export async function createMockServer(opts: MockServerOptions = {}): Promise<MockServer> {
  const { rt, serve } = createMockCore(opts);
  const listener = await startListener(serve, opts.port ?? 0, opts.host ?? '127.0.0.1');
  const url = listener.url;
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
      await listener.close();
      await rt.store.close();
    },
  };
}
