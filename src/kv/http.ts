import { Agent, request as httpRequest } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import { tlsMaterial, type TlsMaterial } from './connection.js';

/**
 * Keep-alive for plain HTTP: a poll of the cluster is 3 requests per member, and a new TCP connection
 * each time costs more than the request. Node unrefs idle keep-alive sockets, so they never hold a
 * command open. A request on a socket the member closed meanwhile fails with ECONNRESET: safe
 * (idempotent) requests are retried once on a fresh connection.
 */
const agent = new Agent({ keepAlive: true, keepAliveMsecs: 1000, maxSockets: 16, maxFreeSockets: 16, timeout: 30_000 });

/** One keep-alive https agent per TLS setting (the CA, client certificate and key of the cluster). */
let httpsAgent: { material: TlsMaterial | undefined; agent: HttpsAgent } | undefined;

async function agentFor(): Promise<HttpsAgent> {
  const material = tlsMaterial();
  if (!httpsAgent || httpsAgent.material !== material) {
    const { Agent: A } = await import('node:https');
    // The server name is checked against the endpoint's host (Node's default checkServerIdentity).
    const fresh = { material, agent: new A({ keepAlive: true, keepAliveMsecs: 1000, maxSockets: 16, maxFreeSockets: 16, timeout: 30_000, ...material }) };
    httpsAgent?.agent.destroy();
    httpsAgent = fresh;
    return fresh.agent;
  }
  return httpsAgent!.agent;
}

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
 * 3.3 sends /v3alpha to /v3beta. 
 */
export function simpleRequest(
  url: string,
  opts: { method?: string; body?: string; headers?: Record<string, string>; timeoutMs: number; signal?: AbortSignal; maxRedirects?: number; idempotent?: boolean },
): Promise<SimpleResponse> {
  const once = async (target: URL): Promise<{ status: number; text: string; location?: string }> => {
    // TLS is loaded only for https endpoints (it costs more start-up than the whole request).
    const tls = target.protocol === 'https:';
    const send = tls ? (await import('node:https')).request : httpRequest;
    const useAgent = tls ? await agentFor() : agent;
    return new Promise((resolve, reject) => {
      const req = send(
        target,
        {
          method: opts.method ?? 'GET',
          agent: useAgent,
          headers: { ...opts.headers, ...(opts.body === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(opts.body)) }) },
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
  };
  return (async () => {
    let target = new URL(url);
    for (let hops = 0; ; hops++) {
      const r = await once(target).catch((err: NodeJS.ErrnoException) => {
        if (!opts.idempotent || (err.code !== 'ECONNRESET' && err.code !== 'EPIPE')) throw err;
        return once(target);
      });
      if ((r.status === 307 || r.status === 308) && r.location && hops < (opts.maxRedirects ?? 5)) {
        target = new URL(r.location, target);
        continue;
      }
      return { status: r.status, text: r.text, url: target.href, redirected: hops > 0 };
    }
  })();
}
