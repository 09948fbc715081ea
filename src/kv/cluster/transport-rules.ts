/** The rules KvClient's requests keep: what a timeout is, which redirects are judged, what a redirect drops, which refusals mean auth. */
import { NetworkError, OpsError } from '../../core/errors.js';
import { explainTlsError } from './connection.js';

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

/** A member that gave no whole answer (the network's error, a TLS failure, the deadline of `timeoutMs`), said with its fix. */
export function unreachable(endpoint: string, cause: NodeJS.ErrnoException, o: { timeoutMs: number; hasClientCert: boolean }): OpsError {
  const { timeoutMs, hasClientCert } = o;
  const tls = explainTlsError(cause, endpoint, { hasClientCert });
  // The message names the fix too: kv health and status show only the message of a member.
  if (tls) return new OpsError(`${tls.message}: ${tls.hint}`, 1, { code: tls.code, cause });
  const code = cause?.code ?? cause?.name;
  // something answered, but not in HTTP (an ssh or peer port, another protocol): said as it is, not as "unreachable"
  if (typeof code === 'string' && code.startsWith('HPE_'))
    return new NetworkError(`${endpoint}: not an HTTP answer (${cause.message})`, {
      hint: "something other than etcd answers on that port: --endpoints lists each member's client URL (its --advertise-client-urls, usually port 2379), not its peer URL or another service",
      cause,
    });
  const said = cause?.message && (code === 'UND_ERR_SOCKET' || code === 'DIAL_TIMEOUT') ? cause.message : code;
  const what = TIMEOUT_CODES.has(code) ? `no complete answer within ${timeoutMs} ms` : said;
  return new NetworkError(`${endpoint}: unreachable (${what})`, {
    hint: `check that the member runs and that --endpoints lists its client URL${endpoint.startsWith('http:') && (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') ? ' (a member that serves TLS resets plain HTTP: write https://)' : ''}; --request-timeout sets how long to wait`,
    cause,
  });
}
