import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UsageError } from '../core/errors.js';
import { fragmentPage, FRAGMENT_MARKER, resultPage } from './html.js';

/** What the authorization server sent back to the redirect URI. */
export interface CallbackParams {
  code?: string;
  error?: string;
  error_description?: string;
  state?: string;
  scope?: string;
  /** RFC 9207: the issuer that sent this response (mix-up defence), when the provider adds it. */
  iss?: string;
}

export interface Callback {
  params: CallbackParams;
  /** Answers the browser (when the callback came from one) and closes the listener. */
  respond(page: { ok: boolean; title: string; lines: string[] }): void;
}

export interface Listener {
  port: number;
  redirectUri: string;
  /** The one callback with the right `state` (stray requests and wrong states are answered and ignored). */
  result: Promise<Callback>;
  /** Feeds a redirected URL pasted by the user; returns a problem when it was not accepted. */
  accept(url: string): string | undefined;
  close(): Promise<void>;
}

export interface ListenerOptions {
  host?: string;
  port?: number;
  state: string;
  /** Told about a callback refused for a wrong state (possible CSRF). */
  onWrongState?(): void;
}

/**
 * The RFC 8252 loopback listener: `http://127.0.0.1:PORT/` (port 0 = a free one). It takes exactly one
 * callback carrying the expected `state`, answers the browser with an HTML page and closes; favicon
 * and other stray requests get a 404, a wrong `state` gets an error page and is otherwise ignored.
 */
export async function startListener(opts: ListenerOptions): Promise<Listener> {
  const host = opts.host ?? '127.0.0.1';
  const once = new OneCallback(opts);
  const server = createServer((req, res) => answerBrowser(req, res, once, close));
  // A request Node cannot parse (a bad method, a malformed request line, headers over the limit) gets a
  // plain 400 and the listener keeps waiting: no local process can end a sign-in by sending garbage.
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
    else socket.destroy();
  });
  await listen(server, host, opts.port);
  server.on('error', () => undefined);
  const port = (server.address() as AddressInfo).port;

  let closing: Promise<void> | undefined;
  function close(): Promise<void> {
    closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      // Let the answer flush, then drop idle keep-alive sockets.
      setTimeout(() => server.closeAllConnections(), 200).unref();
    });
    return closing;
  }

  return {
    port,
    redirectUri: `http://${host.includes(':') ? `[${host}]` : host}:${port}/`,
    result: once.result,
    accept(pasted: string) {
      const params = pastedParams(pasted);
      if (typeof params === 'string') return params;
      if (once.settled) return 'a sign-in response was already received';
      return once.take(params, () => void close());
    },
    close,
  };
}

/** The one callback a listener takes: the first that carries the expected `state`. */
class OneCallback {
  settled = false;
  readonly result: Promise<Callback>;
  private resolve!: (cb: Callback) => void;

  constructor(private readonly opts: ListenerOptions) {
    this.result = new Promise<Callback>((resolve) => (this.resolve = resolve));
  }

  /** Takes `params` as the result, or says why not (a wrong state: possible CSRF). Only while not settled. */
  take(params: CallbackParams, respond: Callback['respond']): string | undefined {
    if (params.state !== this.opts.state) {
      this.opts.onWrongState?.();
      return 'the state in this response does not match the sign-in opsctl started, so it was ignored (it may be stale or forged)';
    }
    this.settled = true;
    this.resolve({ params, respond });
    return undefined;
  }
}

/** A request to the listener: the callback is taken and answered later (respond); anything else gets its page now. */
function answerBrowser(req: IncomingMessage, res: ServerResponse, once: OneCallback, close: () => Promise<void>): void {
  const send = (status: number, html: string) => {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
    res.end(html);
  };
  // `GET http://[x/ HTTP/1.1` parses as a request but not as a URL: a 400, and the wait goes on.
  const url = URL.canParse(req.url ?? '/', 'http://127.0.0.1') ? new URL(req.url ?? '/', 'http://127.0.0.1') : undefined;
  if (!url) {
    send(400, resultPage({ ok: false, title: 'Bad request', lines: ['This address only receives the sign-in response for opsctl.'] }));
    return;
  }
  const params = paramsOf(url.searchParams);
  // A server that puts the response (or only its state) after `#`: the browser never sends the fragment,
  // so a tiny same-origin page reads it and asks again with it as the query (once: the marker stops a loop).
  if (req.method === 'GET' && url.pathname === '/' && !params.state && !url.searchParams.has(FRAGMENT_MARKER) && onlyCallbackKeys(url.searchParams)) {
    const nonce = randomBytes(16).toString('base64url');
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
      'content-security-policy': `default-src 'none'; script-src 'nonce-${nonce}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    });
    res.end(fragmentPage(nonce));
    return;
  }
  if (req.method !== 'GET' || url.pathname !== '/' || (!params.code && !params.error)) {
    send(404, resultPage({ ok: false, title: 'Not found', lines: ['This address only receives the sign-in response for opsctl.'] }));
    return;
  }
  if (once.settled) {
    send(409, resultPage({ ok: false, title: 'Already done', lines: ['opsctl already received a sign-in response. You can close this window.'] }));
    return;
  }
  const problem = once.take(params, (page) => {
    send(page.ok ? 200 : 400, resultPage(page));
    void close();
  });
  if (problem) send(400, resultPage({ ok: false, title: 'Sign-in response rejected', lines: [problem, 'Return to the terminal.'] }));
}

/** The parameters of a redirected URL the user pasted, or what is wrong with it. */
function pastedParams(pasted: string): CallbackParams | string {
  let url: URL;
  try {
    const text = pasted.trim();
    url = new URL(text.startsWith('?') ? `http://127.0.0.1/${text}` : text);
  } catch {
    return 'that is not a URL: paste the whole address from the browser (it starts with http://127.0.0.1)';
  }
  // Parameters after `#` (a server that answers in the fragment) count where the query lacks them.
  const merged = new URLSearchParams(url.hash.slice(1));
  for (const [k, v] of url.searchParams) merged.set(k, v);
  const params = paramsOf(merged);
  if (!params.code && !params.error) return 'that URL has no code or error parameter: paste the address the browser was redirected to';
  return params;
}

/** Listens on host:port (default 0: a free port); a taken or forbidden --port is a usage error naming it. */
function listen(server: Server, host: string, port: number | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') {
        reject(
          new UsageError(`--port: port ${port} on ${host} is already in use`, {
            field: 'port',
            hint: 'choose another port with --port, or leave --port out to use a free one',
          }),
        );
      } else if (err.code === 'EACCES') {
        reject(new UsageError(`--port: not allowed to listen on port ${port}`, { field: 'port', hint: 'use a port above 1023, or leave --port out' }));
      } else reject(err);
    });
    server.listen(port ?? 0, host, () => resolve());
  });
}

const CALLBACK_KEYS = new Set(['code', 'error', 'error_description', 'error_uri', 'state', 'scope', 'iss', 'authuser', 'prompt', 'hd', 'session_state']);

/** A redirect's query holds only what an authorization server sends (anything else is not a sign-in response). */
function onlyCallbackKeys(q: URLSearchParams): boolean {
  for (const k of q.keys()) if (!CALLBACK_KEYS.has(k)) return false;
  return true;
}

function paramsOf(q: URLSearchParams): CallbackParams {
  const get = (k: string) => q.get(k) ?? undefined;
  return { code: get('code'), error: get('error'), error_description: get('error_description'), state: get('state'), scope: get('scope'), iss: get('iss') };
}
