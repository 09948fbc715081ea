import { AsyncLocalStorage } from 'node:async_hooks';
import type { MockIncoming, MockOutgoing } from './http.js';

const current = new AsyncLocalStorage<AbortSignal>();

/** Methods that read: a write their handling makes (an oauth page's sweep of unused clients) is the mock's own, not the client's. */
const READS: ReadonlySet<string | undefined> = new Set(['GET', 'HEAD']);

/**
 * Runs a request's handling with a signal that is aborted when its client goes away before the answer
 * is sent (a client timeout, Ctrl-C): the store's writes watch it, so a write the client gave up on is
 * never applied after the client was told it failed. A read (GET, HEAD) runs without one: its writes, if
 * any, are as a write from no request, never given up. (On Node 20 an AsyncLocalStorage, once entered,
 * runs a hook on every promise the process makes from then on: an embedded `tracker labels list` paid
 * 3.6 M instructions, 4% of its start-up over `node -e 0`, for a signal nothing in a read looks at.)
 */
export function withRequestSignal<T>(req: Pick<MockIncoming, 'method'>, res: MockOutgoing, fn: () => T): T {
  if (READS.has(req.method)) return fn();
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return current.run(controller.signal, fn);
}

/** The signal of the request being handled (undefined outside one, and in a read's). */
export function requestSignal(): AbortSignal | undefined {
  return current.getStore();
}
