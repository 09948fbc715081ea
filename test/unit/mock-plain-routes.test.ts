import Router from 'find-my-way';
import { describe, expect, it } from 'vitest';
import { plainRoute, plainTable } from '@opsctl/mock/plain-routes.js';
import { MockRuntime, ROUTER_OPTIONS } from '@opsctl/mock/runtime.js';
import type { Route } from '@opsctl/mock/service.js';

/**
 * The mock matches a plain request path without building its router (plain-routes.ts). Wherever it decides,
 * it must decide what find-my-way decides with the same routes and options: a differential over every route
 * of every service, instantiated with parameter values that collide with the literals around them.
 */

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

function routerOf(routes: readonly Route[]) {
  const router = Router(ROUTER_OPTIONS);
  for (const route of routes) router.on(route.method, route.path, () => undefined, { route });
  return router;
}

/** Paths to ask: each route's pattern with each value in its parameters, a trailing slash, a case change, a segment more or less. */
function paths(routes: readonly Route[]): string[] {
  const literals = [...new Set(routes.flatMap((r) => r.path.split('/').filter((s) => s && !s.includes(':') && !s.includes('*'))))];
  const values = ['12', 'abc', '0', 'search', 'x'.repeat(100), 'x'.repeat(101), 'a.b', '~-_', ...literals.slice(0, 40)];
  const out = new Set<string>(['/', '/api', '/api/v3', '/api/v3/']);
  for (const route of routes) {
    for (const value of values) {
      const path = route.path.replace(/:[A-Za-z0-9_]+/g, value);
      out.add(path);
      out.add(`${path}/`);
      out.add(path.toUpperCase());
      out.add(`${path}/extra`);
      out.add(path.split('/').slice(0, -1).join('/'));
    }
  }
  return [...out];
}

describe('plain route matching', () => {
  it.each(['tracker', 'oauth', 'api', 'labels'] as const)('%s: every path it decides, find-my-way decides alike', async (service) => {
    const rt = new MockRuntime({ state: 'memory', services: [service] });
    try {
      const { instance } = await rt.load(service);
      const table = plainTable(instance.routes);
      if (service === 'tracker') expect(table).toBeDefined();
      const router = routerOf(instance.routes);
      let decided = 0;
      for (const path of paths(instance.routes)) {
        for (const method of METHODS) {
          const plain = plainRoute(table, method, path);
          if (!plain) continue;
          decided++;
          const found = router.find(method, path);
          expect(found, `${method} ${path}`).not.toBeNull();
          expect((found!.store as { route: Route }).route, `${method} ${path}`).toBe(plain.route);
          expect({ ...found!.params }, `${method} ${path}`).toEqual({ ...plain.params });
        }
      }
      if (table) expect(decided).toBeGreaterThan(instance.routes.length);
    } finally {
      await rt.store.close();
    }
  });

  it('leaves to the router what it cannot decide: no match, escapes, empty and long segments, patterns that are not plain', () => {
    const handler = () => Promise.reject(new Error('not called'));
    const routes: Route[] = [
      { method: 'GET', path: '/a/:id', handler },
      { method: 'GET', path: '/a/list', handler },
    ];
    const table = plainTable(routes);
    expect(plainRoute(table, 'GET', '/a/list')?.route).toBe(routes[1]);
    expect(plainRoute(table, 'GET', '/a/list/')?.route).toBe(routes[1]);
    expect(plainRoute(table, 'GET', '/a/7')?.params).toEqual({ id: '7' });
    for (const path of ['/a/%37', '/a/7;x', '//a/7', '/a', '/a/7/8', `/a/${'x'.repeat(101)}`, '/'])
      expect(plainRoute(table, 'GET', path), path).toBeUndefined();
    expect(plainRoute(table, 'POST', '/a/7')).toBeUndefined();
    expect(plainTable([...routes, { method: 'GET', path: '/b/*', handler }])).toBeUndefined();
    expect(plainTable([{ method: 'GET', path: '/b/:id::publish', handler }])).toBeUndefined();
  });
});
