/** The rules KvClient's requests keep: what a timeout is, which redirects are judged, what a redirect drops, which refusals mean auth. */

/** What no answer means, whatever the stack said: a deadline passed, or undici's own timeouts. */
export const TIMEOUT_CODES = new Set(['DEADLINE_PASSED', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

export const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** An error of a body's reader (not of the network), carried through the HTTP layer as it is. */
export class ConsumeFailed extends Error {
  constructor(override readonly cause: unknown) {
    super('the body reader failed');
  }
}

/** undici's errors while a body streams in (the connection, the deadline's abort). */
export function isNetworkish(err: unknown): boolean {
  const e = err as { code?: string; name?: string };
  return Boolean(e?.code?.startsWith('UND_ERR') || e?.name === 'AbortError' || e?.code === 'ECONNRESET' || e?.code === 'DEADLINE_PASSED');
}

/** The headers of a request without what proves who sends it. */
export function withoutCredentials(h: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!h) return undefined;
  return Object.fromEntries(Object.entries(h).filter(([k]) => !/^(authorization|cookie|proxy-authorization)$/i.test(k)));
}

/** Refusals that mean auth is on and the request had no (valid) user. */
export const AUTH_ERRORS = /user name is empty|permission denied|invalid auth token|user name not found/i;
