import type { OpsError } from '@opsctl/shared/errors.js';
import { answerInProcess } from './in-process.js';
import type { Listener } from './listener.js';
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
  /**
   * The origin every mocked service is served from, e.g. http://127.0.0.1:41234: a virtual one, answered only in
   * this process, until `listen` opened a socket; that socket's from then on.
   */
  readonly url: string;
  /**
   * A real loopback socket, for clients outside this process (a browser signing in): opened once, on the virtual
   * origin's port when it is free; resolves the origin it serves (`url` from then on). Call it before handing
   * the mock's URLs to anyone outside the process.
   */
  listen(): Promise<string>;
  /**
   * How a client in this process reaches the mock: requests to its origin with a string body (or none) are
   * answered in this process, without a socket, an HTTP parser or undici; a multipart upload goes to `network`
   * on the socket (opened for it), a URL of another origin to `network` as it is.
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

/** The embedded mock's origin until it listens, and the port it then asks for first: one of the dynamic ports (RFC 6335). */
function virtualPort(): number {
  return 49152 + Math.floor(Math.random() * (65536 - 49152));
}

/**
 * Starts the in-process mock of every service, with its state in `statePath`; refuses a state file of the wrong
 * shape now. It opens no socket: its origin is a virtual one (a loopback address and a port nothing was asked to
 * listen on) that the in-process answers use, until something needs a real socket (`listen`: a browser's
 * sign-in; a multipart upload, which streams): then it listens on that port if it can (else on any free one),
 * and `url` is the socket's from then on. A loopback listen loads node:net, node:http, dns and cluster: about
 * 10 ms of CPU that a list never needs.
 */
export async function createEmbeddedMock(opts: EmbeddedMockOptions): Promise<EmbeddedMock> {
  let lastError: OpsError | undefined;
  const port = virtualPort();
  const virtual = `http://127.0.0.1:${port}`;
  let socket: Promise<Listener> | undefined;
  let listening: Listener | undefined;
  const { createMockCore } = await import('./core.js');
  const { rt, serve } = createMockCore({
    state: opts.statePath,
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
  const close = async () => {
    // Services first (background loops such as event delivery stop and save), then the socket and store.
    await rt.closeServices();
    if (socket) await (await socket).close();
    await rt.store.close();
  };
  try {
    // A state file of the wrong shape is refused here, once, before any request meets it.
    await rt.store.read(() => undefined);
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
  const listen = async (): Promise<string> => {
    socket ??= import('./listener.js').then(({ startListener }) => startListener(serve, port, '127.0.0.1', { fallback: true }));
    listening = await socket;
    return listening.url;
  };
  const ours = (url: URL) => url.origin === virtual || url.origin === listening?.url;
  return {
    get url() {
      return listening?.url ?? virtual;
    },
    listen,
    // a string body or none is answered here; a FormData (an object) streams over the socket, listened on for it
    transport: (network) => async (url, req) => {
      if (!ours(url)) return network(url, req);
      if (typeof req.body !== 'object') return answerInProcess(serve, url, req);
      return network(new URL(`${url.pathname}${url.search}`, await listen()), req);
    },
    async trackerToken() {
      await rt.ctx.service('tracker');
      return rt.store.read(stateTrackerToken);
    },
    async checkSignIn() {
      await rt.ctx.service('oauth');
    },
    localError: () => lastError,
    close,
  };
}
