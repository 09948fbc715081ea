import { describe, expect, it } from 'vitest';
import { MemoryStore } from '@opsctl/mock/store.js';
import type { Route, ServiceContext } from '@opsctl/mock/service.js';
import trackerService from '@opsctl/mock/services/tracker/index.js';
import { ROUTE_GROUPS, ROUTE_MANIFEST } from '@opsctl/mock/services/tracker/route-manifest.js';

/**
 * The tracker service routes by a manifest (method, path, group) and imports a group's handlers on its
 * first request. The manifest must say exactly what the groups build: the same routes, in the same order,
 * with the same body limits.
 */

const context = (): ServiceContext => ({
  store: new MemoryStore(),
  now: () => 0,
  options: { tracker: { maxUploadBytes: 1234 } },
  service: () => Promise.reject(new Error('no sibling services here')),
});

const shape = (r: Route) => ({ method: r.method, path: r.path, maxBodyBytes: r.maxBodyBytes, streamBody: r.streamBody });

describe("the tracker's route manifest", () => {
  it('lists, group by group, the routes each group builds, with their limits', async () => {
    const ctx = context();
    const built: Route[] = [];
    for (const [name, load] of ROUTE_GROUPS) {
      const routes = (await load())(ctx);
      expect(routes.length, name).toBeGreaterThan(0);
      built.push(...routes);
    }
    const service = await trackerService.create(ctx);
    const served = [...(service.routeGroups?.all() ?? []), ...service.routes];
    // the OpenAPI document is the service's own route, after the manifest's
    expect(served.at(-1)?.path).toBe('/api/v3/openapi.json');
    expect(served.slice(0, -1).map(shape)).toEqual(built.map(shape));
    // the one streaming route carries the configured upload limit without its group loaded
    expect(served.filter((r) => r.streamBody).map(shape)).toEqual([{ method: 'POST', path: '/api/v3/files', maxBodyBytes: 1234, streamBody: true }]);
  });

  it("builds a path's group alone, each route once", async () => {
    const groups = (await trackerService.create(context())).routeGroups!;
    const labels = groups.take('/api/v3/labels')!;
    expect(labels.map((r) => `${r.method} ${r.path}`)).toEqual(
      ROUTE_MANIFEST.filter(([, route]) => /^\w+ \/labels(\/|$)/.test(route)).map(([, route]) => route.replace(' ', ' /api/v3')),
    );
    expect(groups.take('/api/v3/labels')).toBeUndefined();
    expect(groups.take('/api/v3/nope')).toEqual([]);
    const rest = groups.takeAll();
    expect(rest).toHaveLength(ROUTE_MANIFEST.length - labels.length);
    expect(new Set(groups.all()).size).toBe(ROUTE_MANIFEST.length);
  });

  it('names each group of ROUTE_GROUPS, and no other, in ROUTE_GROUPS order', () => {
    const order = [...new Set(ROUTE_MANIFEST.map(([name]) => name))];
    expect(order).toEqual([...ROUTE_GROUPS.keys()]);
    // one route is one line: no method and path twice
    const lines = ROUTE_MANIFEST.map(([, route]) => route);
    expect(new Set(lines).size).toBe(lines.length);
  });
});
