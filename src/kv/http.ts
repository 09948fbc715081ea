import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface SimpleResponse {
  status: number;
  text: string;
  /** The URL that answered (after redirects). */
  url: string;
  redirected: boolean;
}

/**
 * One small JSON request with node:http — the member endpoints are a handful of tiny loopback or LAN
 * calls, and Node's global fetch costs ~50 ms to load on first use, which would be most of the
 * orchestration overhead of an upgrade. Follows 307/308 redirects (method and body kept), as etcd
 * 3.3 sends /v3alpha to /v3beta. No connection reuse: nothing is left open when a command ends.
 */
export function simpleRequest(
  url: string,
  opts: { method?: string; body?: string; timeoutMs: number; signal?: AbortSignal; maxRedirects?: number },
): Promise<SimpleResponse> {
  const once = (target: URL): Promise<{ status: number; text: string; location?: string }> =>
    new Promise((resolve, reject) => {
      const req = (target.protocol === 'https:' ? httpsRequest : httpRequest)(
        target,
        {
          method: opts.method ?? 'GET',
          agent: false,
          headers: opts.body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(opts.body) },
          timeout: opts.timeoutMs,
          signal: opts.signal,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), location: res.headers.location }));
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(Object.assign(new Error(`timed out after ${opts.timeoutMs} ms`), { code: 'ETIMEDOUT' })));
      req.on('error', reject);
      req.end(opts.body);
    });
  return (async () => {
    let target = new URL(url);
    for (let hops = 0; ; hops++) {
      const r = await once(target);
      if ((r.status === 307 || r.status === 308) && r.location && hops < (opts.maxRedirects ?? 5)) {
        target = new URL(r.location, target);
        continue;
      }
      return { status: r.status, text: r.text, url: target.href, redirected: hops > 0 };
    }
  })();
}
