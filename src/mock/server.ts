import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from 'find-my-way';
import { MockError, type MockReply, type MockRequest } from './http.js';
import {
  SERVICE_LOADERS,
  SERVICE_NAMES,
  SERVICE_PREFIXES,
  type MockServiceOptions,
  type Route,
  type ServiceContext,
  type ServiceInstance,
  type ServiceName,
} from './service.js';
import { FileStore, MemoryStore, type Store } from './store.js';

export interface MockServerOptions {
  /** Services to serve (default: all). */
  services?: readonly ServiceName[];
  /** A state file path, `memory` (the default), or a ready store. */
  state?: string | Store;
  port?: number;
  host?: string;
  /** Turns on the test knobs: forced statuses, injected faults, the request log. Off for real use. */
  test?: boolean;
  options?: MockServiceOptions;
  now?: () => number;
  /** Largest request body accepted (bytes). */
  maxBodyBytes?: number;
}

export interface LoggedRequest {
  service: ServiceName;
  method: string;
  path: string;
  query: string;
  status: number;
  at: number;
}

export interface Fault {
  service?: ServiceName;
  method?: string;
  /** Exact path, or a prefix ending in `*`. */
  path?: string;
  status: number;
  /** How many matching requests to fail (default 1). */
  times?: number;
  retryAfter?: number;
  message?: string;
}

export interface MockServer {
  /** The one origin every service is served from, e.g. http://127.0.0.1:41234 */
  url: string;
  /** The URL of each served service (all the same origin). */
  urls: Partial<Record<ServiceName, string>>;
  store: Store;
  services: readonly ServiceName[];
  /** Test mode only: every request, oldest first. */
  requests: LoggedRequest[];
  /** Test mode only: make the next matching requests fail. */
  inject(fault: Fault): void;
  /** A loaded service instance (loads it if needed). */
  service(name: ServiceName): Promise<ServiceInstance>;
  close(): Promise<void>;
}

interface LoadedService {
  instance: ServiceInstance;
  router: Router.Instance<Router.HTTPVersion.V1>;
  hits: Map<string, number[]>;
}

export async function createMockServer(opts: MockServerOptions = {}): Promise<MockServer> {
  const enabled = (opts.services ?? SERVICE_NAMES).filter((name) => SERVICE_LOADERS[name]);
  const store: Store = typeof opts.state === 'object' ? opts.state : opts.state && opts.state !== 'memory' ? new FileStore(opts.state) : new MemoryStore();
  const now = opts.now ?? Date.now;
  const options = opts.options ?? {};
  const maxBody = opts.maxBodyBytes ?? 32 * 1024 * 1024;
  const loaded = new Map<ServiceName, Promise<LoadedService>>();
  const requests: LoggedRequest[] = [];
  const faults: Array<Fault & { left: number }> = [];

  const ctx: ServiceContext = {
    store,
    now,
    options,
    service: (name) => load(name).then((l) => l.instance),
  };

  function load(name: ServiceName): Promise<LoadedService> {
    let p = loaded.get(name);
    if (!p) {
      p = (async () => {
        const loader = SERVICE_LOADERS[name];
        if (!loader) throw new Error(`the mock has no ${name} service`);
        const mod = await loader();
        await store.addInit((state) => mod.initState(state, options));
        const instance = await mod.create(ctx);
        const router = Router({ ignoreTrailingSlash: true, caseSensitive: true });
        for (const route of instance.routes) router.on(route.method, route.path, () => undefined, { route });
        return { instance, router, hits: new Map() };
      })();
      p.catch(() => loaded.delete(name));
      loaded.set(name, p);
    }
    return p;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://mock.invalid');
    const method = (req.method ?? 'GET').toUpperCase();

    if (opts.test && url.pathname.startsWith('/__mock/')) return testKnob(req, res, url, method);

    const service = SERVICE_PREFIXES.find(([prefix]) => url.pathname === prefix.replace(/\/$/, '') || url.pathname.startsWith(prefix))?.[1];
    if (!service || !enabled.includes(service)) {
      return send(res, { status: 404, json: { message: `no mocked service serves ${url.pathname}` } });
    }
    const svc = await load(service);
    let status = 500;
    try {
      const out = await dispatch(svc, service, req, url, method);
      status = out.status;
      send(res, out);
    } catch (err) {
      const mockErr =
        err instanceof MockError ? err : new MockError(500, 'internal', `mock ${service} failed: ${(err as Error).message}`);
      if (!(err instanceof MockError)) process.stderr.write(`opsctl mock: ${service} ${method} ${url.pathname}: ${(err as Error).stack}\n`);
      const out = svc.instance.errorReply(mockErr);
      status = out.status;
      send(res, out);
    } finally {
      if (opts.test) requests.push({ service, method, path: url.pathname, query: url.search, status, at: now() });
    }
  }

  async function dispatch(svc: LoadedService, service: ServiceName, req: IncomingMessage, url: URL, method: string): Promise<MockReply> {
    const found = svc.router.find(method as Router.HTTPMethod, url.pathname);
    if (!found) {
      const other = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].some((m) => m !== method && svc.router.find(m as Router.HTTPMethod, url.pathname));
      throw other
        ? new MockError(405, 'method_not_allowed', `${method} is not allowed on ${url.pathname}`)
        : new MockError(404, 'not_found', `no such path: ${url.pathname}`);
    }
    const route = (found.store as { route: Route }).route;
    // an upload route streams its own body (after authentication), under its own explicit limit
    const streamed = route.streamBody;
    if (streamed && Number(req.headers['content-length']) > streamed.maxBytes) {
      throw new MockError(413, 'too_large', `request body is larger than ${streamed.maxBytes} bytes (the limit of ${url.pathname}): send fewer or smaller files per request`);
    }
    const rawBody = streamed ? Buffer.alloc(0) : await readBody(req, maxBody);
    const contentType = String(req.headers['content-type'] ?? '');
    const mreq: MockRequest = {
      method,
      url,
      path: url.pathname,
      params: Object.fromEntries(Object.entries(found.params).map(([k, v]) => [k, String(v ?? '')])),
      query: url.searchParams,
      headers: req.headers,
      body: parseBody(rawBody, contentType),
      rawBody,
      contentType,
      stream: streamed ? req : undefined,
    };

    if (opts.test) {
      const forced = Number(req.headers['x-mock-status']);
      if (forced >= 400) throw new MockError(forced, 'forced', `forced status ${forced} (test knob)`);
      const fault = faults.find(
        (f) =>
          f.left > 0 &&
          (!f.service || f.service === service) &&
          (!f.method || f.method === method) &&
          (!f.path || (f.path.endsWith('*') ? url.pathname.startsWith(f.path.slice(0, -1)) : f.path === url.pathname)),
      );
      if (fault) {
        fault.left--;
        const err = new MockError(fault.status, 'injected', fault.message ?? `injected fault ${fault.status} (test knob)`);
        const out = svc.instance.errorReply(err);
        if (fault.retryAfter !== undefined) out.headers = { ...(out.headers ?? {}), 'retry-after': String(fault.retryAfter) };
        return out;
      }
    }

    await svc.instance.authenticate?.(mreq, route);

    const limit = svc.instance.rateLimit;
    if (limit) {
      const key = limit.key(mreq);
      const t = now();
      const hits = (svc.hits.get(key) ?? []).filter((h) => h > t - limit.windowMs);
      if (hits.length >= limit.limit) {
        svc.hits.set(key, hits);
        const retryAfter = Math.max(1, Math.ceil((hits[0] + limit.windowMs - t) / 1000));
        const out = svc.instance.errorReply(
          new MockError(429, 'rate_limited', `rate limit exceeded: ${limit.limit} requests per ${limit.windowMs / 1000}s; retry after ${retryAfter}s`),
        );
        out.headers = { ...(out.headers ?? {}), 'retry-after': String(retryAfter) };
        return out;
      }
      hits.push(t);
      svc.hits.set(key, hits);
    }

    if (mreq.body === PARSE_FAILED) throw new MockError(400, 'invalid_json', 'request body is not valid JSON');
    return route.handler(mreq);
  }

  async function testKnob(req: IncomingMessage, res: ServerResponse, url: URL, method: string): Promise<void> {
    if (url.pathname === '/__mock/requests' && method === 'GET') return send(res, { status: 200, json: requests });
    if (url.pathname === '/__mock/requests' && method === 'DELETE') {
      requests.length = 0;
      return send(res, { status: 204 });
    }
    if (url.pathname === '/__mock/faults' && method === 'POST') {
      const body = parseBody(await readBody(req, maxBody), 'application/json') as Fault;
      if (!body || typeof body !== 'object' || !(Number(body.status) >= 400)) {
        return send(res, { status: 400, json: { message: 'a fault needs a status >= 400' } });
      }
      server.inject(body);
      return send(res, { status: 204 });
    }
    return send(res, { status: 404, json: { message: 'unknown test knob' } });
  }

  const http = createServer((req, res) => {
    handle(req, res).catch((err: Error) => {
      if (!res.headersSent) send(res, { status: 500, json: { message: `mock failure: ${err.message}` } });
      else res.destroy();
    });
  });
  http.keepAliveTimeout = 5_000;

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => {
      http.off('error', reject);
      resolve();
    });
  });
  const addr = http.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const url = `http://${host}:${addr.port}`;

  const server: MockServer = {
    url,
    urls: Object.fromEntries(enabled.map((s) => [s, url])),
    store,
    services: enabled,
    requests,
    inject(fault) {
      if (!opts.test) throw new Error('faults can only be injected into a mock started with test: true');
      faults.push({ ...fault, left: fault.times ?? 1 });
    },
    service: ctx.service,
    async close() {
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
      await store.close();
    },
  };
  return server;
}

const PARSE_FAILED = Symbol('parse-failed');

function parseBody(raw: Buffer, contentType: string): unknown {
  if (raw.length === 0) return undefined;
  if (contentType.includes('application/x-www-form-urlencoded')) {
    return Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
  }
  if (contentType.includes('multipart/')) return undefined;
  if (contentType.includes('json') || contentType === '' || contentType.includes('text/plain')) {
    try {
      return JSON.parse(raw.toString('utf8'));
    } catch {
      return contentType.includes('json') ? PARSE_FAILED : undefined;
    }
  }
  return undefined;
}

async function readBody(req: IncomingMessage, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > max) throw new MockError(413, 'too_large', `request body is larger than ${max} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function send(res: ServerResponse, out: MockReply): void {
  const headers: Record<string, string> = { ...(out.headers ?? {}) };
  let body: string | undefined;
  if (out.json !== undefined) {
    headers['content-type'] ??= 'application/json; charset=utf-8';
    body = JSON.stringify(out.json);
  } else if (out.html !== undefined) {
    headers['content-type'] ??= 'text/html; charset=utf-8';
    body = out.html;
  } else if (out.text !== undefined) {
    headers['content-type'] ??= 'text/plain; charset=utf-8';
    body = out.text;
  }
  res.writeHead(out.status, headers);
  res.end(body);
}
