import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createMockServer, type MockServer } from '@opsctl/mock/server.js';
import { oauth } from '@opsctl/mock/services/oauth/tokens.js';
import { pending, clients } from '@opsctl/mock/services/oauth/common.js';
import { LABEL_SCOPES, mintToken } from '../helpers/labels.js';
import { rawExchange, type RawRequest } from '../helpers/fuzz.js';
import type { TestState } from '../helpers/mock.js';

/**
 * Each concrete way a client could get a 500 out of the mock, hang it, or change Object.prototype
 * (issue 13): prototype-named tokens, codes and request ids; deep JSON; huge declared lengths; bad targets.
 */

const PROTO_NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'];
const WAIT_MS = 10_000;

let mock: MockServer;
let port: number;
let token: string;
let trackerToken: string;
const protoBefore = Object.getOwnPropertyNames(Object.prototype).sort();

beforeAll(async () => {
  mock = await createMockServer({ port: 0, host: '127.0.0.1', state: 'memory' });
  port = Number(new URL(mock.url).port);
  await mock.service('oauth');
  token = await mintToken(mock, { scopes: [LABEL_SCOPES.rw, 'openid', 'email'] });
  await mock.service('tracker');
  trackerToken = await mock.store.read((s: TestState) => s.tracker.token as string);
});
afterAll(async () => {
  await mock?.close();
});
afterEach(() => {
  // Nothing any request did may show on every object of the process.
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(protoBefore);
  const probe = {} as Record<string, unknown>;
  expect([probe.revoked, probe.used, probe.polluted]).toEqual([undefined, undefined, undefined]);
});

const call = (method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}) =>
  fetch(`${mock.url}${path}`, { method, headers: init.headers, body: init.body }).then(async (r) => ({
    status: r.status,
    text: await r.text(),
  }));
const raw = (r: Omit<RawRequest, 'label'>) => rawExchange(port, { ...r, label: `${r.method} ${r.target}` }, WAIT_MS);

describe('a bearer token named like a member of Object.prototype is an unknown token', () => {
  const labelRoutes: Array<[string, string]> = [
    ['GET', '/v2beta/labels'],
    ['POST', '/v2beta/labels'],
    ['GET', '/v2beta/labels/abc'],
    ['DELETE', '/v2beta/labels/abc'],
    ['POST', '/v2beta/labels/abc:publish'],
    ['GET', '/v2beta/labels/abc/permissions'],
    ['GET', '/v2beta/limits/label'],
    ['GET', '/v2beta/users/me/capabilities'],
  ];
  it.each(PROTO_NAMES)('%s: 401 in the service shape on every label route, channels, userinfo; 400 on tokeninfo', async (name) => {
    for (const [method, path] of labelRoutes) {
      const r = await call(method, path, {
        headers: { authorization: `Bearer ${name}`, 'content-type': 'application/json' },
        body: method === 'GET' || method === 'DELETE' ? undefined : '{}',
      });
      expect({ path, status: r.status }).toEqual({ path, status: 401 });
      expect(JSON.parse(r.text).error.status).toBe('UNAUTHENTICATED');
    }
    const channels = await call('GET', `/media/v3/channels?part=id&mine=true`, { headers: { authorization: `Bearer ${name}` } });
    expect(channels.status).toBe(401);
    expect(JSON.parse(channels.text).error.errors[0].reason).toBe('authError');
    const viaQuery = await call('GET', `/media/v3/channels?part=id&mine=true&access_token=${name}`);
    expect(viaQuery.status).toBe(401);
    const userinfo = await call('GET', '/oauth2/v3/userinfo', { headers: { authorization: `Bearer ${name}` } });
    expect(userinfo.status).toBe(401);
    expect(JSON.parse(userinfo.text).error).toBe('invalid_token');
    for (const r of [await call('GET', `/tokeninfo?access_token=${name}`), await call('GET', '/tokeninfo', { headers: { authorization: `Bearer ${name}` } })]) {
      expect(r.status).toBe(400);
      expect(JSON.parse(r.text)).toEqual({ error: 'invalid_token', error_description: 'Invalid Value' });
    }
  });

  it('a real token still works next to them', async () => {
    const r = await call('GET', '/v2beta/labels', { headers: { authorization: `Bearer ${token}` } });
    expect(r.status).toBe(200);
  });
});

describe('no credentials needed to try, and none of these changes Object.prototype', () => {
  it.each(PROTO_NAMES)('POST /revoke with token=%s: 400 invalid_token (a GET: 405, RFC 7009 revokes by POST only)', async (name) => {
    const post = await call('POST', '/revoke', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${name}` });
    expect(post.status).toBe(400);
    expect(JSON.parse(post.text).error).toBe('invalid_token');
    const get = await call('GET', `/revoke?token=${name}`);
    expect(get.status).toBe(405);
  });

  it.each(PROTO_NAMES)('/token with code=%s (a public client, so no secret): 400 invalid_grant', async (name) => {
    const form = new URLSearchParams({
      grant_type: 'authorization_code',
      client_id: 'mobile-a.apps.mock',
      code: name,
      redirect_uri: 'com.example.mobilea:/cb',
    });
    const r = await call('POST', '/token', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text)).toEqual({ error: 'invalid_grant', error_description: 'Malformed auth code.' });
  });

  it.each(PROTO_NAMES)('/token with refresh_token=%s and with client_id=%s', async (name) => {
    const refresh = new URLSearchParams({ grant_type: 'refresh_token', client_id: 'mobile-a.apps.mock', refresh_token: name });
    const r = await call('POST', '/token', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: refresh.toString() });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text).error).toBe('invalid_grant');
    const unknownClient = new URLSearchParams({ grant_type: 'authorization_code', client_id: name, code: 'x', redirect_uri: 'http://127.0.0.1:1/' });
    const c = await call('POST', '/token', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: unknownClient.toString() });
    expect(c.status).toBe(401);
    expect(JSON.parse(c.text).error).toBe('invalid_client');
  });

  it.each(PROTO_NAMES)('the consent form with request=%s: the sign-in request is unknown (400 page)', async (name) => {
    const r = await call('POST', '/o/oauth2/v2/auth/consent', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ request: name, action: 'allow', user: '110000000000000000001' }).toString(),
    });
    expect(r.status).toBe(400);
    expect(r.text).toContain('This sign-in request is unknown or has expired');
  });

  it.each(PROTO_NAMES)('the authorization endpoint with client_id=%s (401 page) and scope=%s (invalid_scope)', async (name) => {
    const unknown = await call('GET', `/o/oauth2/v2/auth?client_id=${name}&redirect_uri=http://127.0.0.1:1/&response_type=code&scope=openid`);
    expect(unknown.status).toBe(401);
    expect(unknown.text).toContain('invalid_client');
    const scope = await call(
      'GET',
      `/o/oauth2/v2/auth?client_id=opsctl-desktop.apps.mock&redirect_uri=http://127.0.0.1:1/&response_type=code&scope=openid%20${name}`,
    );
    expect([400, 401]).toContain(scope.status);
    const defaultClient = (await mock.store.read((s) => Object.keys(clients(s))))[0];
    const withRealClient = await call(
      'GET',
      `/o/oauth2/v2/auth?client_id=${encodeURIComponent(defaultClient!)}&redirect_uri=http://127.0.0.1:1/&response_type=code&scope=openid%20${name}`,
    );
    expect(withRealClient.status).toBe(400);
    expect(withRealClient.text).toContain('invalid_scope');
  });

  it.each(PROTO_NAMES)('restoring client %s: 404', async (name) => {
    const r = await call('POST', `/oauth2/mock/clients/${name}/restore`);
    expect(r.status).toBe(404);
  });

  it('keeps its id-keyed records prototype-free in memory (the JSON on disk is unchanged)', async () => {
    const protos = await mock.store.read((s) =>
      [oauth(s).accessTokens, oauth(s).refreshTokens, oauth(s).codes, clients(s), pending(s)].map((m) => Object.getPrototypeOf(m)),
    );
    expect(protos).toEqual([null, null, null, null, null]);
    const json = await mock.store.read((s: TestState) => JSON.parse(JSON.stringify(s.oauth.accessTokens)) as Record<string, unknown>);
    expect(Object.keys(json)).toContain(token);
  });
});

describe('body keys named like members of Object.prototype are unknown fields', () => {
  it.each(PROTO_NAMES)('tracker create and update with a "%s" key: 400 naming it, nothing stored', async (name) => {
    const headers = { 'tracker-token': trackerToken, 'content-type': 'application/json' };
    const created = await call('POST', '/api/v3/labels', { headers, body: `{"name":"proto-${name}","${name}":{"polluted":1}}` });
    expect(created.status).toBe(400);
    expect(JSON.parse(created.text).errors).toHaveProperty([name]);
    const ok = await call('POST', '/api/v3/labels', { headers, body: JSON.stringify({ name: `ok-${name}` }) });
    expect(ok.status).toBe(201);
    const { id } = JSON.parse(ok.text);
    const updated = await call('PUT', `/api/v3/labels/${id}`, { headers, body: `{"${name}":1}` });
    expect(updated.status).toBe(400);
    const stored = await mock.store.read((s: TestState) => (s.tracker.labels as Array<Record<string, unknown>>).find((l) => l.id === id)!);
    expect(Object.getPrototypeOf(stored)).toBe(Object.prototype);
    expect(Object.hasOwn(stored, name)).toBe(false);
  });
});

describe('bodies: size and depth limits at the server, in each service own error shape', () => {
  it('JSON nested 5,000 deep in a label field: 400 INVALID_ARGUMENT, not a stack overflow', async () => {
    const deep = '['.repeat(5000) + ']'.repeat(5000);
    const bodies = [
      `{"labelType":"SHARED","properties":{"title":${deep}}}`,
      `{"labelType":"SHARED","properties":{"title":"t"},"fields":[{"id":"f","properties":{"displayName":"F"},"textOptions":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}]}`,
    ];
    for (const body of bodies) {
      const r = await call('POST', '/v2beta/labels', { headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body });
      expect(r.status).toBe(400);
      expect(JSON.parse(r.text).error).toMatchObject({
        code: 400,
        status: 'INVALID_ARGUMENT',
        message: expect.stringContaining('nests deeper than 64 levels'),
      });
    }
    const tracker = await call('POST', '/api/v3/labels', {
      headers: { 'tracker-token': trackerToken, 'content-type': 'application/json' },
      body: `{"name":${deep}}`,
    });
    expect(tracker.status).toBe(400);
    expect(JSON.parse(tracker.text)).toMatchObject({ error: 'too_deep' });
  });

  it('nesting within the limit still reaches the service (its own validation answers)', async () => {
    const r = await call('POST', '/v2beta/labels', {
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: `{"labelType":"SHARED","properties":{"title":${'['.repeat(60)}${']'.repeat(60)}}}`,
    });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text).error.message).not.toContain('nests deeper');
  });

  it.each([
    ['/api/v3/labels', { 'tracker-token': 'whatever' }, (j: any) => expect(j).toMatchObject({ error: 'too_large' })],
    ['/v2beta/labels', { authorization: 'Bearer nope' }, (j: any) => expect(j.error).toMatchObject({ code: 413 })],
    ['/token', {}, (j: any) => expect(j).toMatchObject({ error: 'too_large' })],
    ['/api/v3/files', { 'tracker-token': 'whatever' }, (j: any) => expect(j).toMatchObject({ error: 'too_large' })],
  ] as const)('POST %s declaring Content-Length 99,999,999,999 and sending 2 bytes: 413 without waiting for the rest', async (path, headers, shape) => {
    // rawExchange never sends more than the two bytes and keeps the connection open: only an
    // answer that does not wait for the body can arrive.
    const r = await raw({
      method: 'POST',
      target: path,
      headers: { ...headers, 'content-type': 'application/json' },
      body: '{}',
      contentLength: '99999999999',
    });
    expect(r.status).toBe(413);
    expect(r.headers.connection).toBe('close');
    shape(JSON.parse(r.body));
  });

  it('a body over the limit sent without a length (chunked) is refused with 413 once it passes the limit', async () => {
    const small = await createMockServer({ port: 0, host: '127.0.0.1', state: 'memory', services: ['tracker'], maxBodyBytes: 1000 });
    try {
      await small.service('tracker');
      const t = await small.store.read((s: TestState) => s.tracker.token as string);
      const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
      const r = await rawExchange(
        Number(new URL(small.url).port),
        {
          method: 'POST',
          target: '/api/v3/labels',
          headers: { 'tracker-token': t, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
          contentLength: undefined,
          body: chunk(`{"name":"${'x'.repeat(2000)}"}`),
          label: 'chunked',
        },
        WAIT_MS,
      );
      expect(JSON.parse(r.body)).toMatchObject({ error: 'too_large', message: 'request body is larger than 1000 bytes' });
      expect(r.status).toBe(413);
      const ok = await fetch(`${small.url}/api/v3/labels`, {
        method: 'POST',
        headers: { 'tracker-token': t, 'content-type': 'application/json' },
        body: '{"name":"fits"}',
      });
      expect(ok.status).toBe(201);
    } finally {
      await small.close();
    }
  });

  it('the upload route keeps its own larger limit, set per server with options.tracker.maxUploadBytes', async () => {
    const upload = (url: string, t: string, bytes: number) => {
      const form = new FormData();
      form.append('file0', new Blob([Buffer.alloc(bytes, 7)]), 'big.bin');
      return fetch(`${url}/api/v3/files`, { method: 'POST', headers: { 'tracker-token': t }, body: form });
    };
    const routes = await mock.routes();
    const files = routes.find((r) => r.method === 'POST' && r.path === '/api/v3/files');
    const labels = routes.find((r) => r.method === 'POST' && r.path === '/api/v3/labels');
    expect(files!.maxBodyBytes).toBeGreaterThan(labels!.maxBodyBytes);
    const big = await upload(mock.url, trackerToken, 3 * 1024 * 1024);
    expect(big.status).toBe(201);
    const small = await createMockServer({
      port: 0,
      host: '127.0.0.1',
      state: 'memory',
      services: ['tracker'],
      options: { tracker: { maxUploadBytes: 64 * 1024 } },
    });
    try {
      await small.service('tracker');
      const t = await small.store.read((s: TestState) => s.tracker.token as string);
      expect((await upload(small.url, t, 32 * 1024)).status).toBe(201);
      const r = await upload(small.url, t, 128 * 1024);
      expect(r.status).toBe(413);
      expect(await r.json()).toMatchObject({ error: 'too_large' });
    } finally {
      await small.close();
    }
  });

  it('malformed JSON is a 400 in the service shape (after authentication)', async () => {
    const r = await call('POST', '/api/v3/labels', { headers: { 'tracker-token': trackerToken, 'content-type': 'application/json' }, body: '{"name":' });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text)).toMatchObject({ error: 'invalid_json' });
  });
});

describe('request targets and methods the route table does not name', () => {
  it.each(['http://[bad', 'http://', 'https://%zz/x', 'http://x:99999/api/v3/labels'])(
    'an absolute-form target that is not a URL (%s): 400',
    async (target) => {
      const r = await raw({ method: 'GET', target });
      expect(r.status).toBe(400);
      expect(JSON.parse(r.body).message).toContain('not a valid URL');
    },
  );

  it('a valid absolute-form target is served by its path', async () => {
    const r = await raw({ method: 'GET', target: `http://127.0.0.1:${port}/.well-known/openid-configuration` });
    expect(r.status).toBe(200);
  });

  it('malformed percent-escapes in a path parameter: 4xx', async () => {
    for (const target of ['/api/v3/labels/%E0%A4%A', '/v2beta/labels/%E0%A4%A', '/oauth2/mock/clients/%E0%A4%A/restore']) {
      const r = await raw({
        method: target.includes('restore') ? 'POST' : 'GET',
        target,
        headers: { 'tracker-token': trackerToken, authorization: `Bearer ${token}` },
      });
      expect({ target, client: r.status >= 400 && r.status < 500 }).toEqual({ target, client: true });
    }
  });

  it('CONNECT is answered 405, not dropped', async () => {
    const r = await raw({ method: 'CONNECT', target: '127.0.0.1:1' });
    expect(r.status).toBe(405);
  });
});

describe('test knobs (test mode only) refuse malformed input', () => {
  it('a fault with a non-string path or a status out of range is 400, later requests are unaffected; a huge declared length is 413', async () => {
    const knobbed = await createMockServer({ port: 0, host: '127.0.0.1', state: 'memory', services: ['oauth'], test: true });
    try {
      const post = (body: string) => fetch(`${knobbed.url}/__mock/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      for (const body of [
        '{"status":503,"path":5}',
        '{"status":"x"}',
        '{"status":700}',
        '[]',
        '{"status":503,"times":"2"}',
        '{"__proto__":{"status":503}}',
        '{"a":',
      ]) {
        const r = await post(body);
        expect({ body, status: r.status }).toEqual({ body, status: 400 });
      }
      expect((await fetch(`${knobbed.url}/.well-known/openid-configuration`)).status).toBe(200);
      expect((await post('{"status":503,"path":"/token","times":1}')).status).toBe(204);
      const knobPort = Number(new URL(knobbed.url).port);
      for (const target of ['/__mock/faults', '/__mock/clock']) {
        const r = await rawExchange(
          knobPort,
          { method: 'POST', target, headers: { 'content-type': 'application/json' }, body: '{}', contentLength: '99999999999', label: target },
          WAIT_MS,
        );
        expect({ target, status: r.status }).toEqual({ target, status: 413 });
      }
    } finally {
      await knobbed.close();
    }
  });
});
