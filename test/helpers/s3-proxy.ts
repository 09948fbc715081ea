import { request, createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Transform } from 'node:stream';

/** What the proxy does to the traffic it passes on. */
export interface S3ProxyFaults {
  /** Flip one byte in the body of this part's UploadPart (its signed SHA-256 header left as it was). */
  corruptPart?: number;
  /** Drop the x-amz-checksum-* headers from HEAD answers: a store that keeps no checksums. */
  hideChecksums?: boolean;
  /** Hold this part's UploadPart: never passed on, never answered (a stalled network), until the proxy closes. */
  holdPart?: number;
  /**
   * From this request on (a part's UploadPart, or the CompleteMultipartUpload once it was passed on), the
   * proxy stops answering anything: every connection, open or new, is accepted and never read from or
   * answered (a store or network that stops mid-upload, as a proxy stopped with SIGSTOP would be), until
   * the proxy closes.
   */
  stallAt?: { part: number } | 'complete';
}

/**
 * A loopback HTTP proxy in front of a real S3-compatible server that passes every request on as it is
 * (headers, Host included, so signatures still match) and changes only what `faults` names: the
 * network or store faults an off-host backup must notice.
 */
export async function startS3Proxy(
  target: string,
  faults: S3ProxyFaults,
): Promise<{ url: string; seen: string[]; stalledAt: () => number | undefined; close: () => Promise<void> }> {
  const to = new URL(target);
  const seen: string[] = [];
  const sockets = new Set<Socket>();
  let stalledAt: number | undefined;
  const stall = () => {
    stalledAt ??= Date.now();
    for (const s of sockets) s.pause();
  };
  const server: Server = createServer((req: IncomingMessage, res) => {
    const url = new URL(req.url ?? '/', 'http://proxy');
    const part = url.searchParams.get('partNumber');
    seen.push(`${req.method} ${url.pathname}${part ? ` part ${part}` : ''}`);
    const stallHere = faults.stallAt;
    if (req.method === 'PUT' && part !== null && typeof stallHere === 'object' && Number(part) === stallHere.part) stall();
    if (stalledAt !== undefined) return;
    // the completion reaches the store, its answer never comes back
    const completing = req.method === 'POST' && url.searchParams.has('uploadId') && stallHere === 'complete';
    if (req.method === 'PUT' && part !== null && Number(part) === faults.holdPart) {
      req.resume();
      return;
    }
    const upstream = request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (up) => {
      if (completing) stall();
      // an answer that comes back after the stall is never passed on
      if (stalledAt !== undefined) return up.resume();
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
  // a stalled request is held as long as the test needs (Node's own limits would answer it with a 408)
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
    if (stalledAt !== undefined) s.pause();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    stalledAt: () => stalledAt,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
