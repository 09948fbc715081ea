import { AsyncLocalStorage } from 'node:async_hooks';
import type { MockOutgoing } from './http.js';

const current = new AsyncLocalStorage<AbortSignal>();

/**
 * Runs a request's handling with a signal that is aborted when its client goes away before the answer
 * is sent (a client timeout, Ctrl-C): the store's writes watch it, so a write the client gave up on is
 * never applied after the client was told it failed.
 */
export function withRequestSignal<T>(res: MockOutgoing, fn: () => T): T {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return current.run(controller.signal, fn);
}

/** The signal of the request being handled (undefined outside one). */
export function requestSignal(): AbortSignal | undefined {
  return current.getStore();
}
