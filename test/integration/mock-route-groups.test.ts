import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildGroupsFor, ensureRouter, MockRuntime, registerRoutesFor } from '@opsctl/mock/runtime.js';
import { createMockServer, type MockServer } from '@opsctl/mock/server.js';
import type { TestState } from '../helpers/mock.js';

/**
 * The mock registers a service's routes in groups, as requests come (start-up: the tracker's whole
 * router costs about 10 ms of CPU, a command needs one group). Laziness must change no answer.
 */

type Registered = { routes: Array<{ method: string; path: string }> };
const registered = (router: unknown) => (router as Registered).routes.map((r) => `${r.method} ${r.path}`);

describe('route groups', () => {
  it('a loaded service has built and registered none of its grouped routes; a request builds and registers its own group alone', async () => {
    const rt = new MockRuntime({ state: 'memory' });
    const svc = await rt.load('tracker');
    // no router until a request needs one (a plain path is matched without it), and no grouped route built
    expect(svc.router).toBeUndefined();
    expect([...svc.pending.keys()]).toEqual(['/api/v3/openapi.json']);
    buildGroupsFor(svc, '/api/v3/labels/12');
    expect(svc.pending.has('/api/v3/labels')).toBe(true);
    expect(svc.pending.has('/api/v3/epics')).toBe(false);
    const router = await ensureRouter(svc);
    expect(registered(router).some((r) => r.includes('/api/v3/labels'))).toBe(false);

    registerRoutesFor(svc, '/api/v3/labels/12');
    const after = registered(router);
    expect(after).toContain('GET /api/v3/labels/:id');
    expect(after).toContain('POST /api/v3/labels');
    expect(svc.pending.has('/api/v3/labels')).toBe(false);
    expect(after.some((r) => r.includes('/api/v3/epics'))).toBe(false);
    // once the router is made, a group built later goes straight into it
    buildGroupsFor(svc, '/api/v3/epics/3');
    expect(registered(router)).toContain('GET /api/v3/epics/:id');
    await rt.store.close();
  });

  it('routes() lists every route, in the order the service declares them', async () => {
    const rt = new MockRuntime({ state: 'memory', services: ['tracker'] });
    const svc = await rt.load('tracker');
    const listed = (await rt.routes()).map((r) => `${r.method} ${r.path}`);
    const declared = [...(svc.groups?.all() ?? []), ...svc.instance.routes];
    expect(declared.length).toBeGreaterThan(100);
    expect(listed).toEqual(declared.map((r) => `${r.method} ${r.path}`));
    expect(svc.pending.size).toBe(0);
    await rt.store.close();
  });
});

describe('a first request gets the answer a fully built router gives (real HTTP, port 0)', () => {
  let full: MockServer;
  let token: string;

  beforeAll(async () => {
    full = await createMockServer({ state: 'memory', services: ['tracker'] });
    await full.service('tracker');
    token = await full.store.read((s: TestState) => s.tracker.token as string);
    await full.routes(); // every group registered
  });
  afterAll(async () => {
    await full?.close();
  });

  const cases: Array<[string, string]> = [
    ['GET', '/api/v3/labels'],
    ['GET', '/api/v3/labels/'],
    ['GET', '/api/v3/lab%65ls'],
    ['GET', '/api/v3/labels;x'],
    ['GET', '/api/v3/labels/999999'],
    ['PUT', '/api/v3/labels'],
    ['GET', '/api/v3/epics'],
    ['DELETE', '/api/v3/epics'],
    ['GET', '/api/v3/member'],
    ['GET', '/api/v3/nothing-here'],
    ['GET', '/api/v3'],
    ['GET', '/api/v3/labels/1/extra/parts'],
    ['GET', '//api/v3/labels'],
    ['POST', '/api/v3/stories/search'],
  ];

  // the other services, unauthenticated: a route found answers 401 or its own error, a path not routed 404 or 405
  const others: Array<[string, string]> = [
    ['GET', '/v2beta/labels'],
    ['PATCH', '/v2beta/labels/abc:publish'],
    ['PUT', '/v2beta/labels'],
    ['GET', '/v2beta/users/me/capabilities'],
    ['GET', '/v2beta/limits/label'],
    ['GET', '/v2beta/nothing'],
    ['GET', '/$discovery/rest'],
    ['GET', '/.well-known/openid-configuration'],
    ['GET', '/token'],
    ['GET', '/o/oauth2/nothing'],
  ];

  it.each(others)('all services: %s %s', async (method, path) => {
    const [fresh, all] = [await createMockServer({ state: 'memory' }), await createMockServer({ state: 'memory' })];
    try {
      await all.routes();
      const ask = async (m: MockServer) => {
        const res = await fetch(`${m.url}${path}`, { method });
        return { status: res.status, type: res.headers.get('content-type'), body: res.status >= 400 ? await res.text() : '' };
      };
      expect(await ask(fresh)).toEqual(await ask(all));
    } finally {
      await Promise.all([fresh.close(), all.close()]);
    }
  });

  it.each(cases)('%s %s', async (method, path) => {
    const fresh = await createMockServer({ state: 'memory', services: ['tracker'] });
    try {
      // the same token in both, so an authenticated route answers alike
      await fresh.service('tracker'); // its state (the token) exists; no route group is registered until a request
      await fresh.store.write((s: TestState) => void (s.tracker.token = token));
      const ask = (m: MockServer) =>
        fetch(`${m.url}${path}`, {
          method,
          headers: { 'tracker-token': token, 'content-type': 'application/json' },
          body: method === 'POST' ? '{}' : undefined,
        });
      const [a, b] = [await ask(fresh), await ask(full)];
      expect(a.status).toBe(b.status);
      const [ja, jb] = [(await a.json()) as unknown, (await b.json()) as unknown];
      // records carry their own times and ids; the shape of the answer (an error's words included) is the same
      expect(Array.isArray(ja)).toBe(Array.isArray(jb));
      if (a.status >= 400) expect(ja).toEqual(jb);
    } finally {
      await fresh.close();
    }
  });
});
