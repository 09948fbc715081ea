import { InterruptedError } from './errors.js';

/**
 * Waits `ms`, or fails with InterruptedError as soon as `signal` aborts (Ctrl-C), so that a command
 * waiting out a rate limit or a backoff stops at once instead of holding the process open.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(new InterruptedError());
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(new InterruptedError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
