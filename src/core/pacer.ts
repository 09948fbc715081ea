import { InterruptedError } from './errors.js';
import { sleep as abortableSleep } from './sleep.js';
import { parseDuration } from './duration.js';

/**
 * Keeps a client under a server's rate limit ("N requests per window") so it never sees a 429.
 *
 * A sliding-window log. A slot is taken when a request starts and stamped when its response arrives:
 * the server received the request no later than that stamp, so waiting until stamp + window before
 * reusing the slot keeps us under the limit whatever the latency. A 429's Retry-After pauses everyone.
 */
export interface PacerOptions {
  limit: number;
  windowMs: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** Told when a request must wait, with how long (for progress output). */
  onWait?: (ms: number) => void;
  /** Aborts waits (Ctrl-C): acquire() then fails with InterruptedError. */
  signal?: AbortSignal;
  /** The shared pacer: told when it takes over the lock of a killed process (default: a line on stderr). */
  notice?: (text: string) => void;
}

/** What the HTTP layer needs of a pacer: a slot per request, and a shared pause after a 429. */
export interface RequestPacer {
  readonly limit: number;
  readonly windowMs: number;
  acquire(): Promise<() => void>;
  pause(ms: number): void;
  /** Waits for bookkeeping still being written (the shared pacer's releases). */
  flush?(): Promise<void>;
}

export class Pacer implements RequestPacer {
  readonly limit: number;
  readonly windowMs: number;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly onWait?: (ms: number) => void;
  /** Completion stamps; `null` while in flight. */
  private slots: Array<{ at: number | null }> = [];
  private pausedUntil = 0;
  private waiters: Array<() => void> = [];
  private readonly signal?: AbortSignal;

  constructor(opts: PacerOptions) {
    if (!(opts.limit > 0) || !(opts.windowMs > 0)) throw new Error('pacer: limit and window must be positive');
    this.limit = opts.limit;
    this.windowMs = opts.windowMs;
    this.now = opts.now ?? Date.now;
    this.sleep = opts.sleep ?? ((ms) => abortableSleep(ms, opts.signal));
    this.onWait = opts.onWait;
    this.signal = opts.signal;
  }

  /** Wait for a slot; call the returned function when the response has arrived (or the request failed). */
  async acquire(): Promise<() => void> {
    for (;;) {
      const now = this.now();
      if (now < this.pausedUntil) {
        const ms = this.pausedUntil - now;
        this.onWait?.(ms);
        await this.sleep(ms);
        continue;
      }
      this.slots = this.slots.filter((s) => s.at === null || s.at > now - this.windowMs);
      if (this.slots.length < this.limit) {
        const slot: { at: number | null } = { at: null };
        this.slots.push(slot);
        let released = false;
        return () => {
          if (released) return;
          released = true;
          slot.at = this.now();
          this.waiters.splice(0).forEach((w) => w());
        };
      }
      const done = this.slots.filter((s) => s.at !== null).map((s) => s.at as number);
      if (done.length > 0) {
        const ms = Math.max(1, Math.min(...done) + this.windowMs - now + 1);
        this.onWait?.(ms);
        await this.sleep(ms);
      } else {
        await new Promise<void>((resolve) => {
          this.waiters.push(resolve);
          this.signal?.addEventListener('abort', () => resolve(), { once: true });
        });
      }
      if (this.signal?.aborted) throw new InterruptedError();
    }
  }

  /** A server said "retry after": nobody sends before then. */
  pause(ms: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, this.now() + ms);
  }
}

/** Parses "200/1m", "100/30s", "5/500ms": a count, then a window in the one duration syntax (core/duration.ts), its unit written. */
export function parseRate(spec: string): { limit: number; windowMs: number } | undefined {
  const m = /^(\d+)\/(\d+[a-z]+)$/.exec(spec.trim());
  const windowMs = m?.[2] === undefined ? undefined : parseDuration(m[2]);
  return m && windowMs !== undefined ? { limit: Number(m[1]), windowMs } : undefined;
}
