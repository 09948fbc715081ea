import { request, createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Transform } from 'node:stream';

/** What the proxy does to the traffic it passes on. */
export interface S3ProxyFaults {
  /** Flip one byte in the body of this part's UploadPart (its signed SHA-256 header left as it was). */
  corruptPart?: number;
  /** Drop the x-amz-checksum-* headers from HEAD answers: a store that keeps no checksums. */
  hideChecksums?: boolean;
  /** Hold this part's UploadPart: never passed on, never answered (a stalled network), until the proxy closes. */
  holdPart?: number;
}

/**
 * A loopback HTTP proxy in front of a real S3-compatible server that passes every request on as it is
 * (headers, Host included, so signatures still match) and changes only what `faults` names: the
 * network or store faults an off-host backup must notice.
 */
export async function startS3Proxy(target: string, faults: S3ProxyFaults): Promise<{ url: string; seen: string[]; close: () => Promise<void> }> {
  const to = new URL(target);
  const seen: string[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    const url = new URL(req.url ?? '/', 'http://proxy');
    const part = url.searchParams.get('partNumber');
    seen.push(`${req.method} ${url.pathname}${part ? ` part ${part}` : ''}`);
    if (req.method === 'PUT' && part !== null && Number(part) === faults.holdPart) {
      req.resume();
      return;
    }
    const upstream = request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (up) => {
      const headers = { ...up.headers };
      if (faults.hideChecksums && req.method === 'HEAD') for (const h of Object.keys(headers)) if (h.startsWith('x-amz-checksum-')) delete headers[h];
      res.writeHead(up.statusCode ?? 502, headers);
      up.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    let flipped = false;
    const corrupt = req.method === 'PUT' && part !== null && Number(part) === faults.corruptPart;
    req
      .pipe(
        new Transform({
          transform(chunk: Buffer, _enc, done) {
            if (corrupt && !flipped && chunk.length > 0) {
              const c = Buffer.from(chunk);
              c[c.length >> 1] = (c[c.length >> 1] ?? 0) ^ 0xff;
              flipped = true;
              return done(null, c);
            }
            done(null, chunk);
          },
        }),
      )
      .pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
