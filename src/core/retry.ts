/**
 * The retry policy of opsctl, one for every layer that sends a request again (issue 59): core/http.ts (every
 * service's requests, kv's gateway calls included) and kv/offsite/requests.ts (the S3 store's, the SDK's own
 * retries off). What is worth another attempt, and how long to wait before it: exponential back-off with
 * jitter, or the server's own Retry-After.
 */

/** Exponential back-off: `baseMs`·2^(attempt − 1), at most `capMs`, with jitter (clients that failed together do not come back together). */
export interface Backoff {
  baseMs: number;
  capMs: number;
  /** `full`: anywhere from nothing to the step; `equal`: from half the step to the whole (AWS's names for the two). */
  jitter: 'full' | 'equal';
}

/** HTTP requests (core/http.ts): 250 ms, 500 ms, 1 s … up to 8 s, full jitter. */
export const HTTP_BACKOFF: Backoff = { baseMs: 250, capMs: 8_000, jitter: 'full' };

/** The S3 store's requests (kv/offsite/requests.ts): 200–400 ms, 400–800 ms … up to 8 s (each waits at least half its step). */
export const STORE_BACKOFF: Backoff = { baseMs: 400, capMs: 8_000, jitter: 'equal' };

/**
 * How many layouts work that picks free ports tries, the first included, when a port was taken between its
 * pick and its bind (another program starting at the same moment): each on fresh ports, at once (kv sandbox
 * up, a settings trial).
 */
export const PORT_CLASH_ATTEMPTS = 3;

/** The methods a request may be sent again with after a network error or a 5xx: the server may have acted on any other. */
export const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

/** Statuses of a server that failed on its side for now (429, which it did not process, aside: every method may wait it out). */
export const RETRY_STATUSES: ReadonlySet<number> = new Set([500, 502, 503, 504]);

/** The wait before attempt `attempt + 1`, after `attempt` failed (1 for the first). */
export function backoffMs(attempt: number, b: Backoff, random: () => number = Math.random): number {
  const step = Math.min(b.capMs, b.baseMs * 2 ** (attempt - 1));
  return Math.round(b.jitter === 'full' ? random() * step : step * (0.5 + random() / 2));
}

/** Retry-After: delta-seconds or an HTTP date. */
export function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  if (/^\d+(\.\d+)?$/.test(v.trim())) return Math.ceil(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** A kept-alive connection that the server closed while the request went out on it: sent again at once, on a fresh one. */
export function isStaleConnection(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET';
}
