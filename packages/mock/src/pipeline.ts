import type Router from 'find-my-way';
import { isOpsError } from '@opsctl/shared/errors.js';
import { bodyStream, checkDeclaredLength, PARSE_FAILED, parseBody, readBody } from './body.js';
import { MockError, type MockIncoming, type MockOutgoing, type MockReply, type MockRequest } from './http.js';
import { addMoreRoutes, buildGroupsFor, ensureRouter, registerAllRoutes, registerRoutesFor, type LoadedService, type MockRuntime } from './runtime.js';
import { plainRoute } from './plain-routes.js';
import { SERVICE_PREFIXES, type Route, type ServiceName } from './service.js';
import { DRAIN_FACTOR, drainAfterReply, send, toMockError } from './send.js';
import { testKnob } from './test-knobs.js';

/**
 * One request, start to end: the test knobs (test mode), else the service its path belongs to, then
 * that service's pipeline (dispatch); any error becomes the service's own error shape.
 */
export async function handle(rt: MockRuntime, req: MockIncoming, res: MockOutgoing): Promise<void> {
  const method = (req.method ?? 'GET').toUpperCase();
  let url: URL;
  try {
    url = new URL(req.url ?? '/', 'http://mock.invalid');
  } catch {
    // An absolute-form target that is not a URL (`GET http://[bad/ HTTP/1.1`): the client's mistake.
    return send(req, res, { status: 400, json: { message: `the request target is not a valid URL: ${JSON.stringify(req.url)}` } });
  }

  if (rt.test && url.pathname.startsWith('/__mock/')) return testKnob(rt, req, res, url, method);

  const service = SERVICE_PREFIXES.find(([prefix]) => url.pathname === prefix.replace(/\/$/, '') || url.pathname.startsWith(prefix))?.[1];
  if (!service || !rt.enabled.includes(service)) {
    return send(req, res, { status: 404, json: { message: `no mocked service serves ${url.pathname}` } });
  }
  const svc = await rt.load(service);
  let status = 500;
  try {
    const out = await dispatch(rt, svc, service, req, url, method);
    status = out.status;
    send(req, res, out);
  } catch (err) {
    if (isOpsError(err)) rt.onLocalError?.(err);
    const mockErr = toMockError(err, service);
    if (mockErr.status >= 500 && !(err instanceof MockError) && !isOpsError(err))
      process.stderr.write(`opsctl mock: ${service} ${method} ${url.pathname}: ${(err as Error).stack}\n`);
    const out = svc.instance.errorReply(mockErr);
    if (Object.keys(mockErr.headers).length) out.headers = { ...(out.headers ?? {}), ...mockErr.headers };
    status = out.status;
    send(req, res, out);
  } finally {
    if (rt.test) rt.requests.push({ service, method, path: url.pathname, query: url.search, status, at: rt.now() });
  }
}

/** The fixed pipeline of a service: route → read the body → (test knobs) → authenticate → rate limit → validate JSON → act. */
async function dispatch(rt: MockRuntime, svc: LoadedService, service: ServiceName, req: MockIncoming, url: URL, method: string): Promise<MockReply> {
  const { route, params } = await findRoute(svc, url, method);
  const mreq = await toMockRequest(rt, req, url, method, route, params);
  const injected = rt.test ? testFailure(rt, svc, service, req, url, method) : undefined;
  if (injected) return injected;
  await svc.instance.authenticate?.(mreq, route);
  const limited = rateLimited(rt, svc, mreq);
  if (limited) return limited;
  if (mreq.body === PARSE_FAILED) throw new MockError(400, 'invalid_json', 'request body is not valid JSON');
  return route.handler(mreq);
}

/** The route for `method` on the path (the service's on-demand routes included), or 404 / 405. */
async function findRoute(svc: LoadedService, url: URL, method: string): Promise<{ route: Route; params: Record<string, string | undefined> }> {
  // A plain path is matched without compiling the router, unless the on-demand routes (which the router
  // then holds beside the service's) are in: an embedded command's one request builds no router, and only
  // the routes of its path's group.
  buildGroupsFor(svc, url.pathname);
  const plain = svc.more ? undefined : plainRoute(svc.plain, method, url.pathname);
  if (plain) return plain;
  const router = await ensureRouter(svc);
  registerRoutesFor(svc, url.pathname);
  let found = router.find(method as Router.HTTPMethod, url.pathname);
  // No route matched: the routes of the other groups, then the service's on-demand routes, may have one.
  if (!found && registerAllRoutes(svc)) found = router.find(method as Router.HTTPMethod, url.pathname);
  if (!found && (await addMoreRoutes(svc))) found = router.find(method as Router.HTTPMethod, url.pathname);
  if (!found) {
    const allowed = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((m) => m !== method && router.find(m as Router.HTTPMethod, url.pathname));
    // RFC 9110 §15.5.6: a 405 names the methods the resource takes in Allow
    throw allowed.length
      ? new MockError(405, 'method_not_allowed', `${method} is not allowed on ${url.pathname} (use ${allowed.join(' or ')})`, {}, { allow: allowed.join(', ') })
      : new MockError(404, 'not_found', `no such path: ${url.pathname}`);
  }
  return { route: (found.store as { route: Route }).route, params: found.params };
}

/** The request as a handler sees it, its body read under the route's limit (a streaming route reads its own later). */
async function toMockRequest(
  rt: MockRuntime,
  req: MockIncoming,
  url: URL,
  method: string,
  route: Route,
  params: Record<string, string | undefined>,
): Promise<MockRequest> {
  const limit = route.maxBodyBytes ?? rt.maxBody;
  // An upload a little over the limit is read and dropped after the 413 (memory stays flat), so the
  // client, still sending, reads the answer instead of a broken pipe; a huge declared length closes.
  if (route.streamBody && Number(req.headers['content-length']) <= limit * DRAIN_FACTOR) drainAfterReply.add(req);
  checkDeclaredLength(req, limit);
  // a streaming route (uploads) reads its own body after authentication, under the same limit
  const rawBody = route.streamBody ? Buffer.alloc(0) : await readBody(req, limit);
  const contentType = String(req.headers['content-type'] ?? '');
  return {
    method,
    url,
    path: url.pathname,
    params: routeParams(params),
    query: url.searchParams,
    headers: req.headers,
    body: parseBody(rawBody, contentType, rt.maxDepth),
    rawBody,
    contentType,
    stream: route.streamBody ? bodyStream(req) : undefined,
  };
}

/** Test mode: a status forced by the `x-mock-status` header (thrown), or the reply of an injected fault. */
function testFailure(rt: MockRuntime, svc: LoadedService, service: ServiceName, req: MockIncoming, url: URL, method: string): MockReply | undefined {
  const forced = Number(req.headers['x-mock-status']);
  if (forced >= 400) throw new MockError(forced, 'forced', `forced status ${forced} (test knob)`);
  const fault = rt.faults.find(
    (f) =>
      f.left > 0 &&
      (!f.service || f.service === service) &&
      (!f.method || f.method === method) &&
      (!f.path || (f.path.endsWith('*') ? url.pathname.startsWith(f.path.slice(0, -1)) : f.path === url.pathname)),
  );
  if (!fault) return undefined;
  fault.left--;
  const out = svc.instance.errorReply(new MockError(fault.status, 'injected', fault.message ?? `injected fault ${fault.status} (test knob)`));
  if (fault.retryAfter !== undefined) out.headers = { ...(out.headers ?? {}), 'retry-after': String(fault.retryAfter) };
  return out;
}

/** The service's rate limit (the tracker's 200 a minute): a 429 with Retry-After when this request is over it. */
function rateLimited(rt: MockRuntime, svc: LoadedService, mreq: MockRequest): MockReply | undefined {
  const rate = svc.instance.rateLimit;
  if (!rate) return undefined;
  const key = rate.key(mreq);
  const t = rt.now();
  // The hits, oldest first: the expired ones (found by a binary search) leave from the front once they are
  // half of the list, so a request costs O(log n) amortized, not a copy of the window (a high --tracker-rate-limit).
  let hits = svc.hits.get(key);
  if (!hits) svc.hits.set(key, (hits = []));
  let lo = 0;
  for (let hi = hits.length; lo < hi;) {
    const mid = (lo + hi) >>> 1;
    if (hits[mid]! <= t - rate.windowMs) lo = mid + 1;
    else hi = mid;
  }
  if (lo > 0 && lo * 2 >= hits.length) {
    hits.splice(0, lo);
    lo = 0;
  }
  const inWindow = hits.length - lo;
  if (inWindow >= rate.limit) {
    // The oldest hit in the window. A limit of 0 (--tracker-rate-limit 0/1m) has none: Retry-After is then NaN, as it always was.
    const oldest = hits[lo] ?? Number.NaN;
    const retryAfter = Math.max(1, Math.ceil((oldest + rate.windowMs - t) / 1000));
    const out = svc.instance.errorReply(
      new MockError(429, 'rate_limited', `rate limit exceeded: ${rate.limit} requests per ${rate.windowMs / 1000}s; retry after ${retryAfter}s`),
    );
    out.headers = { ...(out.headers ?? {}), 'retry-after': String(retryAfter) };
    return out;
  }
  hits.push(t);
  return undefined;
}

/** Path parameters as a prototype-free record (a param may be named like nothing on Object.prototype). */
function routeParams(params: Record<string, string | undefined>): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  for (const [k, v] of Object.entries(params)) out[k] = String(v ?? '');
  return out;
}
