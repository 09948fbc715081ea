import type { S3Client } from '@aws-sdk/client-s3';
import { OpsError } from '../../core/errors.js';
import { backoffMs, STORE_BACKOFF } from '../../core/retry.js';
import { sleep } from '../../core/sleep.js';

/** How long one request to the store may take, and the flag that sets it (for messages). */
export interface Patience {
  requestMs: number;
  requestFlag: string;
}

/**
 * A point in time every request of one piece of work must end by, how to name that limit (`2m
 * (--snapshot-timeout)`: the time from `since`, the work's start, to `at`), and when the work began.
 */
export class Deadline {
  constructor(
    readonly at: number,
    readonly text: string,
    readonly since = Date.now(),
    /** The clock (a test's own: no answer depends on how busy the machine is). */
    private readonly now: () => number = Date.now,
  ) {}

  static after(ms: number, text: string, now: () => number = Date.now): Deadline {
    return new Deadline(now() + ms, text, now(), now);
  }

  left(): number {
    return this.at - this.now();
  }

  /** Time since the work began. */
  spent(): number {
    return this.now() - this.since;
  }
}

export interface SendOptions {
  /** The piece of work's deadline: no attempt and no back-off beyond it. */
  deadline?: Deadline;
  /** Cancels the request (Ctrl-C, an upload abandoned): never retried. */
  signal?: AbortSignal;
  /** Attempts in all (default 3: the first and two retries, as the SDK's standard mode). */
  attempts?: number;
}

/** A request not answered in time: exit 1 with the limit and the flag that sets it named. */
export class StoreTimeout extends OpsError {
  constructor(message: string) {
    super(message, 1, { code: 's3_timeout' });
  }
}

/** One of the SDK's commands, and the answer it resolves to (read off its handler's type). */
interface AnyCommand {
  input: object;
  resolveMiddleware(...args: never[]): unknown;
}
type OutputOf<C> = C extends { resolveMiddleware(...args: never[]): (args: never) => Promise<{ output: infer O }> } ? O : never;

/**
 * Every request to the store goes through here: each attempt bounded by the request limit (and the
 * deadline of the work it belongs to), transient failures (timeouts, connections reset or refused,
 * 5xx, throttling) retried with exponential back-off and jitter while the deadline leaves room. The
 * SDK's own retries are off (one layer of retries, so attempts never multiply).
 */
export class Requests {
  constructor(
    private readonly client: S3Client,
    readonly patience: Patience,
  ) {}

  /** COMMAND sent (WHAT names it in messages: `UploadPart (part 3)`) and its answer. */
  async send<C extends AnyCommand>(command: C, what: string, o: SendOptions = {}): Promise<OutputOf<C>> {
    return (await this.attempt(what, o, (signal) => this.call<C>(command, signal))).value;
  }

  /** The client's send, typed by the command (its overloads do not take a generic command). */
  private call<C extends AnyCommand>(command: C, signal: AbortSignal): Promise<OutputOf<C>> {
    const send = this.client.send.bind(this.client) as unknown as (c: C, o: { abortSignal: AbortSignal }) => Promise<OutputOf<C>>;
    return send(command, { abortSignal: signal });
  }

  /**
   * An object read through ON_CHUNK as it arrives (never held whole): its answer bounded like any
   * request, then each wait for the next bytes by the request limit (a download takes as long as its
   * size needs, but a store that stops sending ends it).
   */
  async read<C extends AnyCommand>(command: C, what: string, onChunk: (chunk: Buffer) => void | Promise<void>, o: SendOptions = {}): Promise<void> {
    const { value, timer } = await this.attempt(what, o, (signal) => this.call<C>(command, signal), { keepTimer: true });
    try {
      for await (const chunk of (value as { Body?: AsyncIterable<Buffer> }).Body ?? []) {
        if (o.deadline && o.deadline.left() <= 0) throw this.late(what, o.deadline, undefined);
        timer.arm(`no bytes of ${what} for ${this.limitText()}`);
        await onChunk(chunk);
      }
    } catch (err) {
      throw timer.fired ?? err;
    } finally {
      timer.stop();
    }
  }

  private limitText(): string {
    return `${fmt(this.patience.requestMs)} (${this.patience.requestFlag})`;
  }

  private async attempt<T>(
    what: string,
    o: SendOptions,
    call: (signal: AbortSignal) => Promise<T>,
    { keepTimer = false }: { keepTimer?: boolean } = {},
  ): Promise<{ value: T; timer: Timer }> {
    const attempts = o.attempts ?? 3;
    let last: unknown;
    for (let n = 1; ; n++) {
      const left = o.deadline ? o.deadline.left() : Infinity;
      if (left <= 0) throw this.late(what, o.deadline!, last);
      o.signal?.throwIfAborted();
      const byDeadline = left < this.patience.requestMs;
      const limit = Math.max(1, Math.min(this.patience.requestMs, left));
      const timer = new Timer(limit, o.signal);
      timer.arm(byDeadline ? `${what}: not done within ${o.deadline!.text}` : `the store did not answer ${what} within ${this.limitText()}`);
      try {
        const value = await call(timer.signal);
        if (!keepTimer) timer.stop();
        return { value, timer };
      } catch (err) {
        timer.stop();
        if (o.signal?.aborted) throw err;
        last = timer.fired ?? err;
        if (timer.fired && byDeadline) throw timer.fired;
        if (!timer.fired && !transient(err)) throw err;
        if (n >= attempts) throw last instanceof StoreTimeout && n > 1 ? new StoreTimeout(`${last.message} (${n} attempts)`) : last;
        const pause = backoffMs(n, STORE_BACKOFF);
        if (o.deadline && o.deadline.left() <= pause) throw this.late(what, o.deadline, last, pause);
        // an abort ends the wait with its own reason (an upload abandoned, Ctrl-C), as it ends a request
        await sleep(pause, o.signal).catch((err: unknown) => {
          throw o.signal?.reason instanceof Error ? o.signal.reason : err;
        });
      }
    }
  }

  /** Given up: the deadline passed, or (PAUSE) the back-off before another attempt would outlast it, said with the time spent. */
  private late(what: string, d: Deadline, last: unknown, pause?: number): OpsError {
    const why = last instanceof Error ? `; the last attempt: ${last.message}` : '';
    if (pause === undefined) return new StoreTimeout(`${what}: not done within ${d.text}${why}`);
    return new StoreTimeout(
      `${what}: given up after ${fmt(Math.round(d.spent() / 100) * 100)}, as another attempt (after ${fmt(Math.round(pause / 100) * 100)} of back-off) would end past ${d.text}${why}`,
    );
  }
}

/** One attempt's limit: aborts the request (and the caller's signal aborts it too). */
class Timer {
  private readonly ac = new AbortController();
  readonly signal: AbortSignal;
  private handle: NodeJS.Timeout | undefined;
  fired: StoreTimeout | undefined;

  constructor(
    private readonly ms: number,
    outer?: AbortSignal,
  ) {
    this.signal = outer ? AbortSignal.any([this.ac.signal, outer]) : this.ac.signal;
  }

  arm(message: string): void {
    clearTimeout(this.handle);
    this.handle = setTimeout(() => {
      this.fired = new StoreTimeout(message);
      this.ac.abort(this.fired);
    }, this.ms);
  }

  stop(): void {
    clearTimeout(this.handle);
  }
}

/** Worth another attempt: the store or the network failed, not the request. */
export function transient(err: unknown): boolean {
  const e = err as { name?: string; code?: string; $metadata?: { httpStatusCode?: number }; $retryable?: unknown };
  const status = e.$metadata?.httpStatusCode;
  if (status !== undefined && (status >= 500 || status === 429 || status === 408)) return true;
  const names = [
    'RequestTimeout',
    'RequestTimeoutException',
    'SlowDown',
    'Throttling',
    'ThrottlingException',
    'InternalError',
    'ServiceUnavailable',
    'TimeoutError',
  ];
  if (e.name && names.includes(e.name)) return true;
  const codes = ['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'ECONNABORTED', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'];
  return Boolean((e.code && codes.includes(e.code)) || e.$retryable);
}

/** 30000 → "30s", 120000 → "2m", 1500 → "1.5s". */
export function fmt(ms: number): string {
  if (ms > 0 && ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms >= 1000) return `${Math.round(ms / 100) / 10}s`;
  return `${ms}ms`;
}
