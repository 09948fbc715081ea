/**
 * Push delivery of queued SETs (RFC 8935): POST `application/secevent+jwt`, the receiver answers 202.
 * Anything else but a 400 (which RFC 8935 §2.3 makes the receiver's final word on that SET) is retried
 * with exponential backoff until acknowledged; the queue lives in the mock's state, so an outage of the
 * receiver, or a restart of the mock, loses nothing. A delivery run leases what it sends, so two
 * processes sharing a state file do not send the same SET at once.
 *
 * Timers are unref'd: the embedded per-command mock never stays alive for them, and `close()` stops the
 * loop and aborts a send in flight (the SET stays pending for the next run).
 */

import { request as httpRequest } from 'node:http';
import type { Store } from '../../store.js';
import { secEvents, type Delivery } from './events.js';
import { storedField } from './tokens.js';
import { clone } from '../../tx.js';

export interface DeliveryOptions {
  /** First retry delay (default 1 s); doubles per attempt. */
  retryMinMs?: number;
  /** Longest retry delay (default 5 min). */
  retryMaxMs?: number;
  /** Per-attempt timeout (default 10 s). */
  timeoutMs?: number;
  /**
   * Retry in the background (default true). Off for the embedded per-command mock: there a trigger makes
   * the first attempt and `events deliver` the retries, and no command ever waits on a retry.
   */
  background?: boolean;
}

type Outcome = { jti: string; status?: number; error?: string; body?: string };

const MAX_RESPONSE = 64 * 1024;

export async function postSet(url: string, set: string, timeoutMs: number, signal: AbortSignal): Promise<Omit<Outcome, 'jti'>> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { error: `not a URL: ${url}` };
  }
  // node:https (and TLS) only when a receiver needs it: the embedded mock stays cheap to start.
  const send = u.protocol === 'https:' ? (await import('node:https')).request : httpRequest;
  return new Promise((resolve) => {
    const body = Buffer.from(set);
    const req = send(
      u,
      {
        method: 'POST',
        agent: false,
        signal,
        timeout: timeoutMs,
        headers: {
          'content-type': 'application/secevent+jwt',
          accept: 'application/json',
          'content-length': String(body.length),
          'user-agent': 'opsctl-mock-secevents',
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size <= MAX_RESPONSE) chunks.push(c);
        });
        res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', (err) => resolve({ error: err.message }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (err) => resolve({ error: (err as NodeJS.ErrnoException).code ?? err.message }));
    req.end(body);
  });
}

export class Deliverer {
  private chain: Promise<void> = Promise.resolve();
  private timer?: NodeJS.Timeout;
  private closed = false;
  private readonly inflight = new Set<AbortController>();
  private readonly minMs: number;
  private readonly maxMs: number;
  private readonly timeoutMs: number;
  private readonly background: boolean;

  constructor(
    private readonly store: Store,
    private readonly now: () => number,
    opts: DeliveryOptions = {},
  ) {
    this.minMs = opts.retryMinMs ?? 1_000;
    this.maxMs = opts.retryMaxMs ?? 300_000;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.background = opts.background ?? true;
  }

  backoffMs(attempts: number): number {
    return Math.min(this.maxMs, this.minMs * 2 ** Math.max(0, attempts - 1));
  }

  /** Starts a run soon (in the background). */
  kick(): void {
    this.schedule(0);
  }

  /**
   * Runs one pass now and waits for it. `force`: these jtis are sent even before their next attempt is
   * due (a trigger's first try, `events deliver`).
   */
  runNow(force?: readonly string[] | 'all'): Promise<void> {
    if (this.closed) return Promise.resolve();
    const p = this.chain.then(() => this.pass(force));
    this.chain = p.catch(() => undefined);
    return p;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    for (const c of this.inflight) c.abort();
    await this.chain.catch(() => undefined);
  }

  private schedule(delayMs: number): void {
    if (this.closed || !this.background) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.runNow().catch(() => undefined);
      },
      Math.max(0, Math.min(delayMs, 2 ** 31 - 1)),
    );
    this.timer.unref();
  }

  private async pass(force?: readonly string[] | 'all'): Promise<void> {
    if (this.closed) return;
    const now = this.now();
    const forced = force === 'all' ? undefined : new Set(force ?? []);
    const isDue = (d: Delivery) =>
      d.status === 'pending' && (d.lease_until ?? 0) <= now && (d.next_attempt_at <= now || force === 'all' || Boolean(forced?.has(d.jti)));
    // A read first: with nothing due (the usual case) a pass takes no write lock.
    const anyDue = await this.store.read((s) => storedField(s, 'secevents')?.deliveries?.some(isDue) ?? false);
    const batch = !anyDue
      ? []
      : await this.store.write((s) => {
          const picked: Array<Pick<Delivery, 'jti' | 'url' | 'set'>> = [];
          for (const d of secEvents(s).deliveries) {
            if (!isDue(d)) continue;
            d.lease_until = now + this.timeoutMs + 5_000;
            d.attempts++;
            picked.push({ jti: d.jti, url: d.url, set: d.set });
          }
          return picked;
        });
    if (batch.length) await this.sendAndRecord(batch);
    await this.scheduleNext();
  }

  /** Leases deliveries in the caller's own write (a trigger's first attempt), so a pass need not pick them. */
  lease(d: Delivery, now: number): void {
    d.lease_until = now + this.timeoutMs + 5_000;
    d.attempts++;
  }

  /** Sends deliveries leased with `lease` and records the outcomes; returns them as they now stand. */
  deliverLeased(batch: Array<Pick<Delivery, 'jti' | 'url' | 'set'>>): Promise<Delivery[]> {
    if (this.closed || !batch.length) return Promise.resolve([]);
    const p = this.chain.then(async () => {
      const out = await this.sendAndRecord(batch);
      await this.scheduleNext();
      return out;
    });
    this.chain = p.then(
      () => undefined,
      () => undefined,
    );
    return p;
  }

  private async sendAndRecord(batch: Array<Pick<Delivery, 'jti' | 'url' | 'set'>>): Promise<Delivery[]> {
    const outcomes = await Promise.all(
      batch.map(async (d): Promise<Outcome> => {
        const ctl = new AbortController();
        this.inflight.add(ctl);
        try {
          return { jti: d.jti, ...(await postSet(d.url, d.set, this.timeoutMs, ctl.signal)) };
        } finally {
          this.inflight.delete(ctl);
        }
      }),
    );
    const done = this.now();
    return this.store.write((s) => {
      const byJti = new Map(secEvents(s).deliveries.map((d) => [d.jti, d]));
      const updated: Delivery[] = [];
      for (const o of outcomes) {
        const d = byJti.get(o.jti);
        if (!d || d.status !== 'pending') continue;
        delete d.lease_until;
        d.last_status = o.status;
        if (o.status !== undefined && o.status >= 200 && o.status < 300) {
          d.status = 'delivered';
          d.delivered_at = done;
          delete d.last_error;
        } else if (o.status === 400) {
          d.status = 'rejected';
          d.last_error = receiverError(o.body);
        } else {
          d.last_error = o.error ?? `HTTP ${o.status}`;
          d.next_attempt_at = done + this.backoffMs(d.attempts);
        }
        updated.push(clone(d));
      }
      return updated;
    });
  }

  private async scheduleNext(): Promise<void> {
    if (this.closed || !this.background) return;
    const next = await this.store.read((s) =>
      (storedField(s, 'secevents')?.deliveries ?? [])
        .filter((d) => d.status === 'pending')
        .reduce((min, d) => Math.min(min, Math.max(d.next_attempt_at, d.lease_until ?? 0)), Infinity),
    );
    if (next !== Infinity) this.schedule(next - this.now());
  }
}

/** RFC 8935 §2.3 error body `{err, description}`, as a line. */
function receiverError(body: string | undefined): string {
  try {
    const j = JSON.parse(body ?? '') as { err?: unknown; description?: unknown };
    if (typeof j.err === 'string') return `rejected by the receiver: ${j.err}${typeof j.description === 'string' ? `: ${j.description}` : ''}`;
  } catch {
    // not JSON
  }
  return 'rejected by the receiver (HTTP 400)';
}

/** The delivery loop of each store's oauth service, so other handlers (e.g. /revoke) can wake it. */
const ACTIVE = new WeakMap<Store, Deliverer>();

export function registerDeliverer(store: Store, d: Deliverer): void {
  ACTIVE.set(store, d);
}
