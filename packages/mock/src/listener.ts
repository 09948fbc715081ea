import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Serve } from './core.js';

/** The mock's loopback socket: the origin it serves (e.g. http://127.0.0.1:41234) and how to stop it. */
export interface Listener {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves `serve` over HTTP on host:port (0: any free port). With `fallback`, a port that cannot be had
 * (EADDRINUSE, EACCES) is given up for any free one instead.
 */
export async function startListener(serve: Serve, port: number, host: string, opts: { fallback?: boolean } = {}): Promise<Listener> {
  const http = httpServer(serve);
  let url: string;
  try {
    url = await listen(http, port, host);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (!opts.fallback || port === 0 || (code !== 'EADDRINUSE' && code !== 'EACCES')) throw err;
    url = await listen(http, 0, host);
  }
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}

/** The node:http server: each request served by `serve`. */
function httpServer(serve: Serve): Server {
  const http = createServer((req, res) => void serve(req, res));
  http.keepAliveTimeout = 5_000;
  // CONNECT (a proxy tunnel) is nothing the mock serves: answer it rather than drop the connection.
  http.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    const body = JSON.stringify({ message: 'CONNECT is not served by the opsctl mock' });
    socket.end(
      `HTTP/1.1 405 Method Not Allowed\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  });
  return http;
}

/** Listens on host:port (0: any free port); resolves the origin, e.g. http://127.0.0.1:41234. */
async function listen(http: Server, port: number, host: string): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const addr = http.address() as AddressInfo;
  return `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`;
}
