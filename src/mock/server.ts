import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import Router from 'find-my-way';
import { checkDeclaredLength, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_JSON_DEPTH, PARSE_FAILED, parseBody, readBody } from './body.js';
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
  /** Largest request body a route without its own `maxBodyBytes` accepts (bytes, default 1 MiB). */
  maxBodyBytes?: number;
  /** Deepest JSON nesting accepted in a request body (default 64); deeper is refused with 400. */
  maxJsonDepth?: number;
}

/** One registered route, as the router knows it (what `routes()` lists). */
export interface RouteInfo {
  service: ServiceName;
  method: string;
  /** The find-my-way pattern, e.g. `/api/v3/labels/:id`. */
  path: string;
  /** The body limit in force on this route (bytes). */
  maxBodyBytes: number;
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
  /** Every route of every served service, read from the routers (loads each service). */
  routes(): Promise<RouteInfo[]>;
  /** The mock's clock (what every service calls "now"); tests move it forward instead of waiting. */
  clock: { now(): number; advance(ms: number): void };
  close(): Promise<void>;
}

interface LoadedService {
  instance: ServiceInstance;
  router: Router.Instance<Router.HTTPVersion.V1>;
  hits: Map<string, number[]>;
  /** The service's `moreRoutes`, once they are being registered. */
  more?: Promise<void>;
}

/** Registers a service's on-demand routes (once); true when the service has any (now registered). */
async function addMoreRoutes(svc: LoadedService): Promise<boolean> {
  const { moreRoutes } = svc.instance;
  if (!moreRoutes) return false;
  if (!svc.more) {
    const p = moreRoutes.call(svc.instance).then((routes) => {
      for (const route of routes) svc.router.on(route.method, route.path, () => undefined, { route });
    });
    p.catch(() => (svc.more = undefined));
    svc.more = p;
  }
  await svc.more;
  return true;
}

export async function createMockServer(opts: MockServerOptions = {}): Promise<MockServer> {
  const enabled = (opts.services ?? SERVICE_NAMES).filter((name) => SERVICE_LOADERS[name]);
  const store: Store = typeof opts.state === 'object' ? opts.state : opts.state && opts.state !== 'memory' ? new FileStore(opts.state) : new MemoryStore();
  const baseNow = opts.now ?? Date.now;
  // The mock clock: the base clock plus whatever tests moved it forward (test knob POST /__mock/clock).
  let clockOffset = 0;
  const now = () => baseNow() + clockOffset;
  const options = opts.options ?? {};
  const maxBody = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const maxDepth = opts.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH;
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
    const method = (req.method ?? 'GET').toUpperCase();
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://mock.invalid');
    } catch {
      // An absolute-form target that is not a URL (`GET http://[bad/ HTTP/1.1`): the client's mistake.
      return send(req, res, { status: 400, json: { message: `the request target is not a valid URL: ${JSON.stringify(req.url)}` } });
    }

    if (opts.test && url.pathname.startsWith('/__mock/')) return testKnob(req, res, url, method);

    const service = SERVICE_PREFIXES.find(([prefix]) => url.pathname === prefix.replace(/\/$/, '') || url.pathname.startsWith(prefix))?.[1];
    if (!service || !enabled.includes(service)) {
      return send(req, res, { status: 404, json: { message: `no mocked service serves ${url.pathname}` } });
    }
    const svc = await load(service);
    let status = 500;
    try {
      const out = await dispatch(svc, service, req, url, method);
      status = out.status;
      send(req, res, out);
    } catch (err) {
      const mockErr = toMockError(err, service);
      if (mockErr.status >= 500 && !(err instanceof MockError)) process.stderr.write(`opsctl mock: ${service} ${method} ${url.pathname}: ${(err as Error).stack}\n`);
      const out = svc.instance.errorReply(mockErr);
      status = out.status;
      send(req, res, out);
    } finally {
      if (opts.test) requests.push({ service, method, path: url.pathname, query: url.search, status, at: now() });
    }
  }

  async function dispatch(svc: LoadedService, service: ServiceName, req: IncomingMessage, url: URL, method: string): Promise<MockReply> {
    let found = svc.router.find(method as Router.HTTPMethod, url.pathname);
    // No route matched: the service's on-demand routes may have one.
    if (!found && (await addMoreRoutes(svc))) found = svc.router.find(method as Router.HTTPMethod, url.pathname);
    if (!found) {
      const other = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].some((m) => m !== method && svc.router.find(m as Router.HTTPMethod, url.pathname));
      throw other
        ? new MockError(405, 'method_not_allowed', `${method} is not allowed on ${url.pathname}`)
        : new MockError(404, 'not_found', `no such path: ${url.pathname}`);
    }
    const route = (found.store as { route: Route }).route;
    const limit = route.maxBodyBytes ?? maxBody;
    // An upload a little over the limit is read and dropped after the 413 (memory stays flat), so the
    // client, still sending, reads the answer instead of a broken pipe; a huge declared length closes.
    if (route.streamBody && Number(req.headers['content-length']) <= limit * DRAIN_FACTOR) drainAfterReply.add(req);
    checkDeclaredLength(req, limit);
    // a streaming route (uploads) reads its own body after authentication, under the same limit
    const rawBody = route.streamBody ? Buffer.alloc(0) : await readBody(req, limit);
    const contentType = String(req.headers['content-type'] ?? '');
    const mreq: MockRequest = {
      method,
      url,
      path: url.pathname,
      params: routeParams(found.params),
      query: url.searchParams,
      headers: req.headers,
      body: parseBody(rawBody, contentType, maxDepth),
      rawBody,
      contentType,
      stream: route.streamBody ? req : undefined,
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

    const rate = svc.instance.rateLimit;
    if (rate) {
      const key = rate.key(mreq);
      const t = now();
      const hits = (svc.hits.get(key) ?? []).filter((h) => h > t - rate.windowMs);
      if (hits.length >= rate.limit) {
        svc.hits.set(key, hits);
        const retryAfter = Math.max(1, Math.ceil((hits[0] + rate.windowMs - t) / 1000));
        const out = svc.instance.errorReply(
          new MockError(429, 'rate_limited', `rate limit exceeded: ${rate.limit} requests per ${rate.windowMs / 1000}s; retry after ${retryAfter}s`),
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
    if (url.pathname === '/__mock/requests' && method === 'GET') return send(req, res, { status: 200, json: requests });
    if (url.pathname === '/__mock/requests' && method === 'DELETE') {
      requests.length = 0;
      return send(req, res, { status: 204 });
    }
    if (url.pathname === '/__mock/faults' && method === 'POST') {
      let body: Fault;
      try {
        checkDeclaredLength(req, maxBody);
        body = parseBody(await readBody(req, maxBody), 'application/json', maxDepth) as Fault;
      } catch (err) {
        const e = toMockError(err, 'test knob');
        return send(req, res, { status: e.status, json: { message: e.message } });
      }
      const problem = faultProblem(body);
      if (problem) return send(req, res, { status: 400, json: { message: problem } });
      server.inject({
        status: body.status,
        service: body.service,
        method: body.method,
        path: body.path,
        times: body.times,
        retryAfter: body.retryAfter,
        message: body.message,
      });
      return send(req, res, { status: 204 });
    }
    if (url.pathname === '/__mock/clock' && (method === 'GET' || method === 'POST')) {
      if (method === 'POST') {
        const raw = await Promise.resolve()
          .then(() => {
            checkDeclaredLength(req, 64 * 1024);
            return readBody(req, 64 * 1024);
          })
          .catch(() => undefined);
        if (!raw) return send(req, res, { status: 413, json: { message: 'the body is larger than 64 KiB' } });
        let body: { advance_seconds?: unknown } | undefined;
        try {
          body = parseBody(raw, 'application/json', maxDepth) as typeof body;
        } catch {
          body = undefined;
        }
        const secs = Number(body && typeof body === 'object' ? body.advance_seconds : NaN);
        if (!Number.isFinite(secs) || secs < 0 || secs > 10 * 365 * 86400) {
          return send(req, res, { status: 400, json: { message: 'advance_seconds: give a number of seconds from 0 to 315360000 to move the mock clock forward' } });
        }
        clockOffset += secs * 1000;
      }
      return send(req, res, { status: 200, json: { now: new Date(now()).toISOString(), offset_seconds: clockOffset / 1000 } });
    }
    return send(req, res, { status: 404, json: { message: 'unknown test knob' } });
  }

  async function routes(): Promise<RouteInfo[]> {
    const out: RouteInfo[] = [];
    for (const service of enabled) {
      const svc = await load(service);
      await addMoreRoutes(svc);
      const { router } = svc;
      for (const r of (router as unknown as { routes: Array<{ method: string; path: string; store: { route: Route } }> }).routes) {
        out.push({ service, method: r.method, path: r.path, maxBodyBytes: r.store.route.maxBodyBytes ?? maxBody });
      }
    }
    return out;
  }

  const http = createServer((req, res) => {
    handle(req, res).catch((err: Error) => {
      process.stderr.write(`opsctl mock: ${req.method} ${req.url}: ${err.stack}\n`);
      if (!res.headersSent) send(req, res, { status: 500, json: { message: `mock failure: ${err.message}` } });
      else res.destroy();
    });
  });
  http.keepAliveTimeout = 5_000;
  // CONNECT (a proxy tunnel) is nothing the mock serves: answer it rather than drop the connection.
  http.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    const body = JSON.stringify({ message: 'CONNECT is not served by the opsctl mock' });
    socket.end(`HTTP/1.1 405 Method Not Allowed\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  });

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
    routes,
    clock: {
      now,
      advance(ms) {
        clockOffset += ms;
      },
    },
    async close() {
      // Services first (background loops such as event delivery stop and save), then the listener and store.
      for (const p of loaded.values()) {
        const inst = await p.then((l) => l.instance).catch(() => undefined);
        if (typeof inst?.close === 'function') await (inst.close as () => Promise<void>)().catch(() => undefined);
      }
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
      await store.close();
    },
  };
  return server;
}

/** What is wrong with a fault posted to `/__mock/faults`, or undefined. */
function faultProblem(body: unknown): string | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return 'a fault is a JSON object such as {"status":503,"path":"/api/v3/labels"}';
  const f = body as Record<string, unknown>;
  if (!Number.isInteger(f.status) || (f.status as number) < 400 || (f.status as number) > 599) return 'a fault needs a status >= 400 (an integer up to 599)';
  for (const key of ['service', 'method', 'path', 'message'] as const) {
    if (f[key] !== undefined && typeof f[key] !== 'string') return `fault.${key} must be a string`;
  }
  for (const key of ['times', 'retryAfter'] as const) {
    if (f[key] !== undefined && !(Number.isInteger(f[key]) && (f[key] as number) >= 0)) return `fault.${key} must be a whole number`;
  }
  return undefined;
}

/** Path parameters as a prototype-free record (a param may be named like nothing on Object.prototype). */
function routeParams(params: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const [k, v] of Object.entries(params)) out[k] = String(v ?? '');
  return out;
}

/**
 * What a thrown error means for the client. A MockError is the service's own answer; a URIError comes
 * from decoding the client's percent-escapes (400); anything else is a bug of the mock (500, logged).
 */
function toMockError(err: unknown, where: string): MockError {
  if (err instanceof MockError) return err;
  if (err instanceof URIError) return new MockError(400, 'bad_request', `malformed percent-encoding in the request: ${err.message}`);
  return new MockError(500, 'internal', `mock ${where} failed: ${(err as Error)?.message ?? String(err)}`);
}

/** Streamed routes drain (read and drop) up to this many times their limit after an early reply. */
const DRAIN_FACTOR = 4;
/** Requests whose unread body Node's server reads and drops after the reply (keep-alive) instead of closing. */
const drainAfterReply = new WeakSet<IncomingMessage>();

/** True when the request declared a body that has not been read to its end. */
function bodyPending(req: IncomingMessage): boolean {
  if (req.complete) return false;
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

function send(req: IncomingMessage, res: ServerResponse, out: MockReply): void {
  const headers: Record<string, string> = { ...(out.headers ?? {}) };
  // Answered before the body was read (413 on the declared length, 404, 401…): close the connection
  // after this reply rather than wait for, or misread, the rest of the body.
  if (bodyPending(req) && !drainAfterReply.has(req)) headers.connection = 'close';
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
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
  res.writeHead(out.status, headers);
  res.end(body);
}
