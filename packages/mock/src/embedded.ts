import type { OpsError } from '@opsctl/shared/errors.js';
import type { MockServer } from './server-types.js';
import { stateTrackerToken } from './store.js';
import type { TransportRequest, TransportResponse } from './transport.js';

export interface EmbeddedMockOptions {
  /** The state file (shared by every command of the embedded profile; a lock guards it). */
  statePath: string;
  /** The authorization server's clients file (OPSCTL_MOCK_OAUTH_CLIENTS), if any. */
  clientsFile?: string;
  /** Keyless CI: the key set CI tokens are checked against (OPSCTL_MOCK_TRUST_JWKS, already read). */
  trustJwks?: { keys: unknown[] };
  /** The command's abort signal: a wait for the state file's lock gives up with it. */
  signal: AbortSignal;
  /** Where a notice goes (a wait for the lock another process holds). */
  notice: (text: string) => void;
}

/**
 * What opsctl's wiring builds from the mock for the embedded profile: the one object the CLI holds.
 * Everything else of the mock (services, store, console) stays behind it.
 */
export interface EmbeddedMock {
  /** The origin every mocked service is served from, e.g. http://127.0.0.1:41234 */
  readonly url: string;
  /**
   * How a client in this process reaches the mock: requests to its origin with a string body (or none) are
   * answered in this process, without a socket, an HTTP parser or undici; a multipart upload, or a URL of
   * another origin, goes to `network`.
   */
  transport<Req extends TransportRequest>(network: (url: URL, req: Req) => Promise<TransportResponse>): (url: URL, req: Req) => Promise<TransportResponse>;
  /** The embedded tracker's own token (provisioned when the tracker loads). */
  trackerToken(): Promise<string>;
  /**
   * For a sign-in: the authorization server loads (its clients file is read and checked), else the error
   * naming the file and the fix comes now, before any page or browser step.
   */
  checkSignIn(): Promise<void>;
  /**
   * The mock's last storage error (its state file, directory or lock), which it answered as a 503: the
   * command shows this, with its path and fix, rather than an HTTP error.
   */
  localError(): OpsError | undefined;
  close(): Promise<void>;
}

/** Starts the in-process mock of every service, with its state in `statePath`; refuses a state file of the wrong shape now. */
export async function createEmbeddedMock(opts: EmbeddedMockOptions): Promise<EmbeddedMock> {
  let lastError: OpsError | undefined;
  const { createMockServer } = await import('./server.js');
  const server: MockServer = await createMockServer({
    state: opts.statePath,
    port: 0,
    host: '127.0.0.1',
    onLocalError: (err) => {
      lastError = err;
    },
    lock: { signal: opts.signal, notice: opts.notice },
    // A per-command mock makes a trigger's first delivery attempt but runs no background retries
    // (those belong to `mock serve`, or to `opsctl mock events deliver`).
    options: {
      oauth: {
        ...(opts.clientsFile ? { clientsFile: opts.clientsFile } : {}),
        ...(opts.trustJwks ? { trustJwks: opts.trustJwks } : {}),
        events: { background: false },
      },
    },
  });
  try {
    // A state file of the wrong shape is refused here, once, before any request meets it.
    await server.store.read(() => undefined);
  } catch (err) {
    await server.close().catch(() => undefined);
    throw err;
  }
  const origin = new URL(server.url).origin;
  return {
    url: server.url,
    // a string body or none is answered here; a FormData (an object) streams over the socket
    transport: (network) => (url, req) => (url.origin === origin && typeof req.body !== 'object' ? server.answer(url, req) : network(url, req)),
    async trackerToken() {
      await server.service('tracker');
      return server.store.read(stateTrackerToken);
    },
    async checkSignIn() {
      await server.service('oauth');
    },
    localError: () => lastError,
    close: () => server.close(),
  };
}
