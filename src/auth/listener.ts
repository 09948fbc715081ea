import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UsageError } from '../core/errors.js';
import { resultPage } from './html.js';

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
  let settled = false;
  let resolveResult!: (cb: Callback) => void;
  const result = new Promise<Callback>((resolve) => (resolveResult = resolve));

  const server = createServer((req, res) => handle(req, res));
  // A request Node cannot parse (a bad method, a malformed request line, headers over the limit) gets a
  // plain 400 and the listener keeps waiting: no local process can end a sign-in by sending garbage.
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
    else socket.destroy();
  });

  function check(params: CallbackParams): string | undefined {
    if (params.state !== opts.state) {
      opts.onWrongState?.();
      return 'the state in this response does not match the sign-in opsctl started, so it was ignored (it may be stale or forged)';
    }
    return undefined;
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const send = (status: number, html: string) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
      res.end(html);
    };
    const url = URL.canParse(req.url ?? '/', 'http://127.0.0.1') ? new URL(req.url ?? '/', 'http://127.0.0.1') : undefined;
    if (!url) {
      send(400, resultPage(false, 'Bad request', ['This address only receives the sign-in response for opsctl.']));
      return;
    }
    const params = paramsOf(url.searchParams);
    if (req.method !== 'GET' || url.pathname !== '/' || (!params.code && !params.error)) {
      send(404, resultPage(false, 'Not found', ['This address only receives the sign-in response for opsctl.']));
      return;
    }
    if (settled) {
      send(409, resultPage(false, 'Already done', ['opsctl already received a sign-in response. You can close this window.']));
      return;
    }
    const problem = check(params);
    if (problem) {
      send(400, resultPage(false, 'Sign-in response rejected', [problem, 'Return to the terminal.']));
      return;
    }
    settled = true;
    resolveResult({
      params,
      respond: (page) => {
        send(page.ok ? 200 : 400, resultPage(page.ok, page.title, page.lines));
        void close();
      },
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') {
        reject(new UsageError(`--port: port ${opts.port} on ${host} is already in use`, { field: 'port', hint: 'choose another port with --port, or leave --port out to use a free one' }));
      } else if (err.code === 'EACCES') {
        reject(new UsageError(`--port: not allowed to listen on port ${opts.port}`, { field: 'port', hint: 'use a port above 1023, or leave --port out' }));
      } else reject(err);
    });
    server.listen(opts.port ?? 0, host, () => resolve());
  });
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
    result,
    accept(pasted: string) {
      let url: URL;
      try {
        const text = pasted.trim();
        url = new URL(text.startsWith('?') ? `http://127.0.0.1/${text}` : text);
      } catch {
        return 'that is not a URL: paste the whole address from the browser (it starts with http://127.0.0.1)';
      }
      const params = paramsOf(url.searchParams);
      if (!params.code && !params.error) return 'that URL has no code or error parameter: paste the address the browser was redirected to';
      if (settled) return 'a sign-in response was already received';
      const problem = check(params);
      if (problem) return problem;
      settled = true;
      resolveResult({ params, respond: () => void close() });
      return undefined;
    },
    close,
  };
}

function paramsOf(q: URLSearchParams): CallbackParams {
  const get = (k: string) => q.get(k) ?? undefined;
  return { code: get('code'), error: get('error'), error_description: get('error_description'), state: get('state'), scope: get('scope'), iss: get('iss') };
}
