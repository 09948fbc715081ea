import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMockServer, type MockServer, type RouteInfo } from '@opsctl/mock/server.js';
import { mintAccessToken } from '@opsctl/mock/services/oauth/tokens.js';
import { rawRequest, seeded, type RawRequest, type Rng } from '../helpers/fuzz.js';
import type { TestState } from '../helpers/mock.js';

/**
 * The mock never answers 5xx to a client, never hangs, and no client can change Object.prototype.
 * Requests are generated from the route table the routers hold (every registered route of every service,
 * so a route added later is fuzzed without touching this file), with a fixed seed and a bounded count.
 * Run it alone: `npx vitest run test/integration/mock-fuzz.test.ts` (it prints the figures).
 */

/** Fixed, so every run sends the same requests; OPSCTL_FUZZ_SEED / OPSCTL_FUZZ_PER_ROUTE explore further by hand. */
const SEED = Number(process.env.OPSCTL_FUZZ_SEED ?? 0x13f0_22ed);
/** Hostile requests per route and method (plus the fixed odd targets). */
const PER_ROUTE = Number(process.env.OPSCTL_FUZZ_PER_ROUTE ?? 22);
/** A hang detector, not a speed assertion: a request unanswered this long never will be. */
const HANG_MS = 10_000;

const PROTO_NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__', 'isPrototypeOf', 'toLocaleString'];
const ODD_IDS = [
  '0',
  '-1',
  '1',
  '2',
  '3',
  '99999999999999999999',
  '1e3',
  'abc',
  '00000000-0000-4000-8000-000000000000',
  '%E0%A4%A',
  '%00',
  '%2F..%2F',
  'a'.repeat(120),
  '',
  ' ',
];
const FORM_KEYS = [
  'token',
  'code',
  'client_id',
  'client_secret',
  'request',
  'grant_type',
  'redirect_uri',
  'refresh_token',
  'code_verifier',
  'scope',
  'action',
  'user',
  'access_duration',
  'access_token',
  'story_id',
];
const FIELDS = [
  'name',
  'description',
  'id',
  'ids',
  'labels',
  'label_ids',
  'story_ids',
  'epic_id',
  'group_id',
  'text',
  'title',
  'fields',
  'requests',
  'properties',
  'values',
  'value',
  'color',
  'state',
  'workflow_state_id',
  'before_id',
  'after_id',
  'role',
  'email',
  'audience',
  'updateMask',
  'view',
  'pageSize',
  'query',
  'page_size',
  'external_links',
  'owner_ids',
  'follower_ids',
  'start_date',
  'end_date',
  'useAdminAccess',
  'languageCode',
  'names',
  'permission',
  'copyMode',
  'enabledAppSettings',
  'label',
  'deadline',
];

/** tokens: [tracker token, bearer access token]; ids: real record ids; labelIds: a real label-service id. */
type Ctx = { tokens: [tracker: string, bearer: string]; ids: string[]; labelIds: string[] };

function deep(n: number, leaf: string): string {
  return '['.repeat(n) + leaf + ']'.repeat(n);
}

/** A wrong-typed or hostile JSON value. */
function hostileValue(rng: Rng, ctx: Ctx, depth = 0): unknown {
  switch (rng.int(14)) {
    case 0:
      return null;
    case 1:
      return rng.pick([0, -1, 1, 2 ** 53, -(2 ** 63), 1.5, 1e308]);
    case 2:
      return rng.pick(PROTO_NAMES);
    case 3:
      return rng.pick(ODD_IDS);
    case 4:
      return rng.pick([true, false]);
    case 5:
      return [];
    case 6:
      return {};
    case 7:
      return depth > 2 ? 'x' : [hostileValue(rng, ctx, depth + 1), hostileValue(rng, ctx, depth + 1)];
    case 8:
      return depth > 2 ? 'x' : hostileObject(rng, ctx, depth + 1);
    case 9:
      return Number(rng.pick(ctx.ids)) || rng.pick(ctx.ids);
    case 10:
      return 'x'.repeat(rng.pick([1, 300, 5000]));
    case 11:
      return { __proto__: null, [rng.pick(PROTO_NAMES)]: { polluted: 1 } };
    case 12:
      return rng.pick(['2026-13-45', 'not-a-date', '#zzz', '\u0000\u001b[31m', '💥']);
    default:
      return rng.pick(ctx.labelIds);
  }
}

function hostileObject(rng: Rng, ctx: Ctx, depth = 0): Record<string, unknown> {
  const o: Record<string, unknown> = Object.create(null);
  const n = 1 + rng.int(4);
  for (let i = 0; i < n; i++) o[rng.next() < 0.25 ? rng.pick(PROTO_NAMES) : rng.pick(FIELDS)] = hostileValue(rng, ctx, depth);
  return o;
}

/** A JSON body text; sometimes with an own `__proto__` key, 5,000-deep nesting, or not JSON at all. */
function jsonBody(rng: Rng, ctx: Ctx, service: string): string {
  switch (rng.int(12)) {
    case 0:
      return `{"__proto__":{"polluted":1,"revoked":true,"used":true},"${rng.pick(FIELDS)}":${JSON.stringify(hostileValue(rng, ctx))}}`;
    case 1:
      return `{"${rng.pick(FIELDS)}":${deep(5000, '1')}}`;
    case 2:
      return `{"requests":[{"updateField":{"id":"x","field":${deep(5000, '{}')}}}]}`;
    case 3:
      return rng.pick(['{"a":', '{', '[1,', 'nul', '{"a":1}}', '\u0000', '"\\ud800"', '{"a":"\\u12"}']);
    case 4:
      return JSON.stringify(hostileValue(rng, ctx));
    case 5:
      return '{"constructor":{"prototype":{"polluted":1}}}';
    case 6:
    case 7:
    case 8:
    case 9: {
      // Valid enough to be stored, with prototype names for names and ids, sometimes one field off.
      const name = rng.pick(PROTO_NAMES);
      const o: Record<string, unknown> =
        service === 'labels'
          ? {
              labelType: 'SHARED',
              properties: { title: name },
              ...(rng.next() < 0.7 ? { fields: [{ id: name, properties: { displayName: name }, textOptions: {} }] } : {}),
            }
          : { name, ...(rng.next() < 0.3 ? { description: name } : {}), ...(rng.next() < 0.3 ? { labels: [{ name }] } : {}) };
      if (rng.next() < 0.3) o[rng.pick(FIELDS)] = hostileValue(rng, ctx);
      const text = JSON.stringify(o);
      // An own key named like a built-in (JSON.parse makes even `__proto__` an own key).
      return rng.next() < 0.4 ? `${text.slice(0, -1)},"${rng.pick(PROTO_NAMES)}":${rng.pick(['1', '{"polluted":1}', 'null', '"x"'])}}` : text;
    }
    default:
      return JSON.stringify(hostileObject(rng, ctx));
  }
}

/** A plausible OAuth form (it gets past the first checks) with one to three values made hostile. */
function formBody(rng: Rng, ctx: Ctx): string {
  const p = new URLSearchParams({
    grant_type: rng.pick(['authorization_code', 'refresh_token']),
    client_id: rng.pick(['mobile-a.apps.mock', 'extension.apps.mock', 'opsctl']),
    code: '4/abc',
    redirect_uri: 'http://127.0.0.1:8080/cb',
    code_verifier: 'v'.repeat(43),
    refresh_token: '1//abc',
    token: rng.pick(ctx.tokens),
    request: 'abc',
    action: rng.pick(['allow', 'deny']),
    user: '110000000000000000001',
    scope: 'openid',
  });
  const n = 1 + rng.int(3);
  for (let i = 0; i < n; i++) {
    const key = rng.next() < 0.15 ? rng.pick(PROTO_NAMES) : rng.pick(FORM_KEYS);
    p.set(key, rng.next() < 0.7 ? rng.pick(PROTO_NAMES) : rng.pick(ODD_IDS));
  }
  return p.toString();
}

function auth(rng: Rng, ctx: Ctx): Record<string, string> {
  const bad = rng.pick(PROTO_NAMES);
  switch (rng.int(12)) {
    case 0:
      return { authorization: `Bearer ${bad}`, 'tracker-token': bad };
    case 1:
      return { authorization: `Basic ${Buffer.from(`${bad}:${bad}`).toString('base64')}` };
    case 2:
      return { authorization: rng.pick(['Basic %%%', 'Basic Og==', 'Bearer', 'Bearer  a b', 'Basic ' + Buffer.from('%E0%A4%A:x').toString('base64')]) };
    case 3:
      return {};
    default:
      // Both real credentials: each service reads its own header, so the request reaches the handler.
      return { authorization: `Bearer ${ctx.tokens[1]}`, 'tracker-token': ctx.tokens[0] };
  }
}

function fillPath(rng: Rng, ctx: Ctx, route: RouteInfo): string {
  const id = () => {
    const r = rng.next();
    if (r < 0.35) return rng.pick(PROTO_NAMES);
    if (r < 0.6) return rng.pick(ODD_IDS);
    return rng.pick(ctx.ids);
  };
  let path = route.path.replace(/:[A-Za-z_]+/g, () => encodeURIComponent(id()).replace(/%25/g, '%'));
  if (path.includes('*')) {
    const lid = rng.next() < 0.5 ? rng.pick(ctx.labelIds) : id();
    const suffix = rng.pick([
      '',
      '@latest',
      '@1',
      `@${rng.pick(PROTO_NAMES)}`,
      ':delta',
      ':publish',
      ':disable',
      ':enable',
      ':updateLabelCopyMode',
      ':updateLabelEnabledAppSettings',
      ':__proto__',
      '/permissions',
      '/permissions:batchUpdate',
      '/permissions:batchDelete',
      `/permissions/${rng.pick(PROTO_NAMES)}`,
      '/revisions/1/permissions',
      '/locks',
      '/revisions/__proto__/locks',
    ]);
    path = path.replace('*', lid + suffix);
  }
  return path;
}

function query(rng: Rng, ctx: Ctx): string {
  if (rng.next() < 0.4) return '';
  const p: string[] = [];
  const n = 1 + rng.int(4);
  for (let i = 0; i < n; i++) {
    const key = rng.pick([
      ...FORM_KEYS,
      'id',
      'part',
      'mine',
      'pageSize',
      'pageToken',
      'view',
      'page_size',
      'next',
      'query',
      'detail',
      '__proto__[polluted]',
      'constructor[prototype][polluted]',
      '__proto__',
    ]);
    const value = rng.next() < 0.5 ? rng.pick(PROTO_NAMES) : rng.pick([...ODD_IDS, ...ctx.tokens, 'true', 'snippet,__proto__']);
    p.push(`${encodeURIComponent(key)}=${encodeURIComponent(value)}`);
  }
  if (rng.next() < 0.1) p.push('%', '=%zz', '&&=');
  return `?${p.join('&')}`;
}

/** One hostile request to a route. */
function variant(rng: Rng, ctx: Ctx, route: RouteInfo): RawRequest {
  const target = fillPath(rng, ctx, route) + query(rng, ctx);
  const headers = auth(rng, ctx);
  const label = `${route.method} ${target}`;
  const kind = rng.int(12);
  if (kind === 0) {
    // A declared length far over the limit with two bytes sent: 413 at once, not a wait for the rest.
    return {
      method: route.method,
      target,
      headers: { ...headers, 'content-type': 'application/json' },
      body: '{}',
      contentLength: '99999999999',
      label: `${label} (Content-Length 99,999,999,999)`,
    };
  }
  if (kind === 1) {
    const form = formBody(rng, ctx);
    return {
      method: route.method,
      target,
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
      label: `${label} form ${form}`,
    };
  }
  if (kind === 2) {
    const type = rng.pick([
      'application/xml',
      'multipart/form-data; boundary=x',
      'multipart/form-data',
      'text/plain',
      'application/json; charset=latin1',
      'application/x-www-form-urlencoded; charset=utf-16',
      '',
    ]);
    const body = rng.pick([
      '--x\r\nContent-Disposition: form-data; name="file0"\r\n\r\nabc\r\n--x--\r\n',
      '<a/>',
      deep(3000, '0'),
      '%%%&&&==',
      jsonBody(rng, ctx, route.service),
    ]);
    return { method: route.method, target, headers: { ...headers, 'content-type': type }, body, label: `${label} ${type} ${body.slice(0, 60)}` };
  }
  const body = jsonBody(rng, ctx, route.service);
  return { method: route.method, target, headers: { ...headers, 'content-type': 'application/json' }, body, label: `${label} ${body.slice(0, 80)}` };
}

/** Targets and request shapes no route table names: the server itself must answer them with a 4xx. */
function oddRequests(ctx: Ctx): RawRequest[] {
  const targets = [
    'http://[bad',
    'http://',
    'http://x:99999/api/v3/labels',
    'https://%zz/',
    'http://example.com/api/v3/labels',
    '//api/v3/labels',
    '*',
    '/%',
    '/%zz',
    '/api/v3/%E0%A4%A',
    `/api/v3/${'a'.repeat(9000)}`,
    '/v2beta/labels/%00',
    '/revoke?token=%',
    '/__proto__',
    '/constructor',
  ];
  const out: RawRequest[] = targets.map((target) => ({ method: 'GET', target, headers: { authorization: `Bearer ${ctx.tokens[0]}` }, label: `GET ${target}` }));
  for (const method of ['PROPFIND', 'OPTIONS', 'HEAD', 'TRACE', 'CONNECT'])
    out.push({ method, target: method === 'CONNECT' ? '127.0.0.1:1' : '/api/v3/labels', label: `${method} /api/v3/labels` });
  return out;
}

/** Paths in the state whose key is a prototype member's name or whose object has an unusual prototype. */
function oddKeys(value: unknown, path: string, out: string[] = []): string[] {
  if (!value || typeof value !== 'object') return out;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== Array.prototype && proto !== null) out.push(`${path} has an unusual prototype`);
  for (const key of Object.keys(value)) {
    if (PROTO_NAMES.includes(key)) out.push(`${path}.${key}`);
    oddKeys((value as Record<string, unknown>)[key], `${path}.${key}`, out);
  }
  return out;
}

interface Target {
  mock: MockServer;
  routes: RouteInfo[];
  ctx: Ctx;
}

/** A mock with every service, its route table, and real credentials and records to aim at. */
async function start(state: string): Promise<Target> {
  const mock = await createMockServer({
    port: 0,
    host: '127.0.0.1',
    state,
    options: { tracker: { rateLimit: { limit: 1_000_000, windowMs: 60_000 } } },
  });
  const routes = await mock.routes();
  // Real credentials and records, so most requests get past authentication into the handlers.
  const trackerToken = await mock.store.read((s: TestState) => s.tracker.token as string);
  const scopes = ['openid', 'email', 'profile', 'media', 'media.readonly', 'drive.labels', 'drive.admin.labels'].map((s) =>
    s.includes('.') || s === 'media' ? `https://www.googleapis.com/auth/${s}` : s,
  );
  const bearer = await mock.store.write(
    (s) =>
      mintAccessToken(s, { client_id: 'mobile-a.apps.mock', sub: '110000000000000000001', email: 'alice@example.com', scopes, ttlSeconds: 3600 }, Date.now())
        .token,
  );
  const post = (path: string, headers: Record<string, string>, body: unknown) =>
    fetch(`${mock.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }).then((r) =>
      r.json(),
    );
  const label = await post(
    '/v2beta/labels',
    { authorization: `Bearer ${bearer}` },
    { labelType: 'SHARED', properties: { title: 'fuzz' }, fields: [{ id: 'f1', properties: { displayName: 'F' }, textOptions: {} }] },
  );
  const tlabel = await post('/api/v3/labels', { 'tracker-token': trackerToken }, { name: 'fuzz' });
  const epic = await post('/api/v3/epics', { 'tracker-token': trackerToken }, { name: 'fuzz' });
  const story = await post('/api/v3/stories', { 'tracker-token': trackerToken }, { name: 'fuzz', epic_id: epic.id, label_ids: [tlabel.id] });
  const ctx: Ctx = {
    tokens: [trackerToken, bearer],
    ids: [String(tlabel.id), String(epic.id), String(story.id), 'mobile-a.apps.mock', 'deleted-recently.apps.mock', 'f1'].filter((x) => x !== 'undefined'),
    labelIds: [String(label.id ?? 'missing')],
  };
  return { mock, routes, ctx };
}

/**
 * Sends the seeded requests (the same ones on every run) and asserts: no 5xx, no hang, no dropped
 * connection, Object.prototype untouched, nothing odd stored, still serving.
 */
async function fuzz({ mock, routes, ctx }: Target, perRoute: number, what: string): Promise<void> {
  const protoBefore = Object.getOwnPropertyNames(Object.prototype).sort();
  const rng = seeded(SEED);
  const requests: RawRequest[] = [...oddRequests(ctx)];
  for (const route of routes) for (let i = 0; i < perRoute; i++) requests.push(variant(rng, ctx, route));

  const port = Number(new URL(mock.url).port);
  const serverErrors: string[] = [];
  const hangs: string[] = [];
  const broken: string[] = [];
  const polluted: string[] = [];
  const byStatus = new Map<number, number>();
  // Client and server share this thread: a few requests in flight keep it busy. The requests are fixed
  // by the seed; only the order in which their effects land may vary, and nothing asserted depends on it.
  let next = 0;
  const worker = async () => {
    while (next < requests.length) {
      const r = requests[next++]!;
      const out = await rawRequest(port, r, HANG_MS);
      // Caught at the request that did it (or one in flight with it), then undone, so one pollution
      // cannot mask later bugs.
      const added = Object.getOwnPropertyNames(Object.prototype).filter((k) => !protoBefore.includes(k));
      if (added.length) {
        polluted.push(`${r.label} added ${added.join(', ')} to Object.prototype`);
        for (const k of added) delete (Object.prototype as Record<string, unknown>)[k];
      }
      if (out.status === 'timeout') hangs.push(r.label);
      else if (out.status === 'error') broken.push(`${r.label}: ${out.message}`);
      else {
        byStatus.set(out.status, (byStatus.get(out.status) ?? 0) + 1);
        if (out.status >= 500) serverErrors.push(`${out.status} ${r.label}`);
      }
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));

  const services = [...new Set(routes.map((r) => r.service))];
  console.log(
    `mock fuzz (${what}): ${requests.length} requests over ${routes.length} routes (${services.join(', ')}), seed ${SEED}: ` +
      `${serverErrors.length} x 5xx, ${hangs.length} hangs, ${broken.length} unanswered, ${polluted.length} prototype changes; ` +
      `statuses ${[...byStatus]
        .sort((a, b) => a[0] - b[0])
        .map(([s, n]) => `${s}:${n}`)
        .join(' ')}`,
  );
  expect(polluted.slice(0, 20)).toEqual([]);
  expect(serverErrors.slice(0, 20)).toEqual([]);
  expect(hangs.slice(0, 20)).toEqual([]);
  expect(broken.slice(0, 20)).toEqual([]);
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(protoBefore);
  const probe = {} as Record<string, unknown>;
  expect([probe.revoked, probe.used, probe.polluted]).toEqual([undefined, undefined, undefined]);
  // Nothing a client sent became a key named like a built-in, or a record's prototype, in the state.
  expect(await mock.store.read((s) => oddKeys(s, 'state'))).toEqual([]);
  // Still serving after all of it.
  expect((await rawRequest(port, { method: 'GET', target: '/.well-known/openid-configuration', label: 'discovery' }, HANG_MS)).status).toBe(200);
}

describe('the mock under hostile clients (fuzz, generated from the route table)', () => {
  let dir: string;
  const started: MockServer[] = [];
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'opsctl-fuzz-'));
  });
  afterAll(async () => {
    for (const m of started) await m.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('in memory: every request answered with a 4xx or less, no hang, Object.prototype unchanged', async () => {
    const target = await start('memory');
    started.push(target.mock);
    await fuzz(target, PER_ROUTE, 'memory');
  }, 120_000);

  it('with a state file (the embedded default): the same, over fewer requests per route', async () => {
    const target = await start(join(dir, 'mock-state.json'));
    started.push(target.mock);
    await fuzz(target, Math.max(1, Math.round(PER_ROUTE / 4)), 'state file');
    // What was stored reads back as the mock's own shape.
    expect(JSON.parse(readFileSync(join(dir, 'mock-state.json'), 'utf8'))).toHaveProperty('oauth.accessTokens');
  }, 120_000);
});
