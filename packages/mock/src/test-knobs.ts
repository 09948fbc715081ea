import { checkDeclaredLength, parseBody, readBody } from './body.js';
import type { MockIncoming, MockOutgoing } from './http.js';
import type { MockRuntime } from './runtime.js';
import { send, toMockError } from './send.js';
import type { Fault } from './server-types.js';

/** The test knobs under /__mock/ (test mode only): the request log, injected faults, the mock clock. */
export async function testKnob(rt: MockRuntime, req: MockIncoming, res: MockOutgoing, url: URL, method: string): Promise<void> {
  if (url.pathname === '/__mock/requests' && method === 'GET') return send(req, res, { status: 200, json: rt.requests });
  if (url.pathname === '/__mock/requests' && method === 'DELETE') {
    rt.requests.length = 0;
    return send(req, res, { status: 204 });
  }
  if (url.pathname === '/__mock/faults' && method === 'POST') return postFault(rt, req, res);
  if (url.pathname === '/__mock/clock' && (method === 'GET' || method === 'POST')) return clock(rt, req, res, method);
  return send(req, res, { status: 404, json: { message: 'unknown test knob' } });
}

/** POST /__mock/faults: make the next matching requests fail. */
async function postFault(rt: MockRuntime, req: MockIncoming, res: MockOutgoing): Promise<void> {
  let body: Fault;
  try {
    checkDeclaredLength(req, rt.maxBody);
    body = parseBody(await readBody(req, rt.maxBody), 'application/json', rt.maxDepth) as Fault;
  } catch (err) {
    const e = toMockError(err, 'test knob');
    return send(req, res, { status: e.status, json: { message: e.message } });
  }
  const problem = faultProblem(body);
  if (problem) return send(req, res, { status: 400, json: { message: problem } });
  rt.inject({
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

/** GET /__mock/clock: the mock's time; POST {advance_seconds}: move it forward. */
async function clock(rt: MockRuntime, req: MockIncoming, res: MockOutgoing, method: string): Promise<void> {
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
      body = parseBody(raw, 'application/json', rt.maxDepth) as typeof body;
    } catch {
      body = undefined;
    }
    const secs = Number(body && typeof body === 'object' ? body.advance_seconds : NaN);
    if (!Number.isFinite(secs) || secs < 0 || secs > 10 * 365 * 86400) {
      return send(req, res, { status: 400, json: { message: 'advance_seconds: give a number of seconds from 0 to 315360000 to move the mock clock forward' } });
    }
    rt.clockOffsetMs += secs * 1000;
  }
  return send(req, res, { status: 200, json: { now: new Date(rt.now()).toISOString(), offset_seconds: rt.clockOffsetMs / 1000 } });
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
