import { isOpsError } from '@opsctl/shared/errors.js';
import type { MockIncoming, MockOutgoing } from './http.js';
import { handle } from './pipeline.js';
import { withRequestSignal } from './request-signal.js';
import { MockRuntime } from './runtime.js';
import { send } from './send.js';
import type { MockServerOptions } from './server-types.js';

/** What serves one request (node:http's server runs it for each request; the in-process transport calls it directly). */
export type Serve = (req: MockIncoming, res: MockOutgoing) => Promise<void>;

/**
 * The mock without a socket: its runtime (store, clock, services loaded on first request) and the function
 * that serves a request. `createMockServer` puts it behind a listener (listener.ts); the embedded mock answers
 * in this process and listens only when something outside it needs a socket (embedded.ts). Nothing here loads
 * node:http or node:net.
 */
export function createMockCore(opts: MockServerOptions = {}): { rt: MockRuntime; serve: Serve } {
  const rt = new MockRuntime(opts);
  return { rt, serve: serveRequest(rt) };
}

/** One request through the pipeline (over HTTP or in-process); a bug of the mock is logged and answered 500. */
function serveRequest(rt: MockRuntime): Serve {
  return (req, res) =>
    withRequestSignal(req, res, () => handle(rt, req, res)).catch((err: Error) => {
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
