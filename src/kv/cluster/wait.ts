import { connect } from 'node:net';

/**
 * Polls `check` every `pollMs` until it returns a value (not undefined), or fails after `timeoutMs`.
 * `firstPollMs`: the first pauses are shorter, growing by half each time up to `pollMs` (a state that
 * usually comes within a few hundred milliseconds is seen soon after it comes, a long wait still polls
 * at `pollMs`).
 */
export async function waitFor<T>(
  check: () => Promise<T | undefined>,
  opts: { timeoutMs: number; pollMs: number; what: string; signal?: AbortSignal; now?: () => number; firstPollMs?: number },
): Promise<T> {
  const now = opts.now ?? Date.now;
  const deadline = now() + opts.timeoutMs;
  let last: unknown;
  let pause = Math.min(opts.pollMs, opts.firstPollMs ?? opts.pollMs);
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      if (err instanceof WaitFatal) throw err;
      last = err;
    }
    if (opts.signal?.aborted) throw new WaitAborted(opts.what);
    if (now() >= deadline)
      throw new WaitTimeout(`${opts.what}: not reached after ${opts.timeoutMs} ms${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await sleep(pause, opts.signal);
    pause = Math.min(opts.pollMs, Math.ceil(pause * 1.5));
  }
}

export class WaitTimeout extends Error {}
/** Thrown by a check when waiting longer cannot help (the process exited, the wrong version runs). */
export class WaitFatal extends Error {}
export class WaitAborted extends Error {
  constructor(what: string) {
    super(`${what}: interrupted`);
  }
}

/** setTimeout as a promise that an abort signal ends early (without throwing). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (ms <= 0 || signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Whether something accepts a TCP connection at `endpoint`'s host and port: true (connected), false (refused:
 * nothing listens there), undefined (no answer within `timeoutMs`, or another error: it cannot tell).
 * No request is sent: the connection is closed at once.
 */
export function acceptsConnections(endpoint: string, timeoutMs: number): Promise<boolean | undefined> {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return Promise.resolve(undefined);
  }
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return new Promise((resolve) => {
    const s = connect({ host, port });
    const done = ({ accepts }: { accepts: boolean | undefined }) => {
      s.destroy();
      resolve(accepts);
    };
    s.setTimeout(timeoutMs, () => done({ accepts: undefined }));
    s.once('connect', () => done({ accepts: true }));
    s.once('error', (err: NodeJS.ErrnoException) => done({ accepts: err.code === 'ECONNREFUSED' ? false : undefined }));
  });
}
