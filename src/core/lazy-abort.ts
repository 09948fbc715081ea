/**
 * An AbortController whose AbortSignal is made only when someone reads `signal`: the context's Ctrl-C (Context.abort)
 * and each request's deadline in HttpClient. What only needs to be told subscribes with `onAbort` instead (HttpClient's
 * interrupt, the kv client's wire transport, the embedded mock's in-process one): the first listener a process adds to
 * an AbortSignal runs Node's EventTarget code for the first time (1.8 M instructions in a bare script; kv get 1.4 M and
 * the embedded list 1.0 M fewer without it: docs/development.md, issue 60's ninth pass). Told once, in the order
 * subscribed, after the listeners of the signal if one was made; a subscriber added after the abort is never told (as
 * an AbortSignal's listener), so read `aborted` first.
 */
export class LazyAbort {
  private controller?: AbortController;
  private listeners?: Array<() => void>;
  private done = false;
  private why: unknown = undefined;

  get aborted(): boolean {
    return this.done;
  }

  get reason(): unknown {
    return this.why;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.done) this.controller.abort(this.why);
    }
    return this.controller.signal;
  }

  abort(reason?: unknown): void {
    if (this.done) return;
    this.done = true;
    // (an AbortController's own default reason)
    this.why = reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason;
    this.controller?.abort(this.why);
    for (const fn of this.listeners?.splice(0) ?? []) {
      try {
        fn();
      } catch (err) {
        // as a throwing listener of an AbortSignal: reported as uncaught, the others still told
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  }

  /** Calls `fn` on the abort; returns what stops that. */
  onAbort(fn: () => void): () => void {
    const listeners = (this.listeners ??= []);
    listeners.push(fn);
    return () => {
      const at = listeners.indexOf(fn);
      if (at >= 0) listeners.splice(at, 1);
    };
  }
}

/** What a transport reads of a request's abort: a LazyAbort, else (a caller of its own) the request's AbortSignal. */
export interface AbortView {
  readonly aborted: boolean;
  readonly reason: unknown;
  onAbort(fn: () => void): () => void;
}

/** A request's abort as a transport watches it: `abort` when HttpClient gave one, else its signal's events. */
export function abortOf(req: { signal: AbortSignal; abort?: AbortView }): AbortView {
  if (req.abort) return req.abort;
  const signal = req.signal;
  return {
    get aborted() {
      return signal.aborted;
    },
    get reason() {
      return signal.reason as unknown;
    },
    onAbort(fn) {
      signal.addEventListener('abort', fn, { once: true });
      return () => signal.removeEventListener('abort', fn);
    },
  };
}

/** The reason of the abort when a request's deadline passes (the cause of the NetworkError). */
export class DeadlineError extends Error {
  readonly code = 'DEADLINE_PASSED';
  constructor(ms: number, what = 'no complete answer within') {
    super(`${what} ${formatMs(ms)}`);
  }
}

/** A duration as HttpClient's messages say it. */
export function formatMs(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}
