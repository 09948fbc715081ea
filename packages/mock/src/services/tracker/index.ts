import { MockError, type MockRequest } from '../../http.js';
import type { Route, RouteGroups, ServiceContext, ServiceModule } from '../../service.js';
import { API, errorReply, maxUploadBytes, tracker } from './common.js';
import { ROUTE_GROUPS, ROUTE_MANIFEST, UPLOAD } from './route-manifest.js';
import { shapeReply } from './shape.js';
import { initTracker } from './state.js';
import { OPENAPI_PATH, openapiRoute } from './openapi.js';

export const DEFAULT_RATE_LIMIT = { limit: 200, windowMs: 60_000 };

/**
 * The token a request carries: the seed's `Tracker-Token` header, the real service's `Shortcut-Token`
 * (what the official client sends by default), or the deprecated `token` query parameter.
 */
export function requestToken(req: MockRequest): string | undefined {
  for (const name of ['tracker-token', 'shortcut-token']) {
    const header = req.headers[name];
    if (typeof header === 'string' && header) return header;
  }
  return req.query.get('token') ?? undefined;
}

/**
 * The routes of ROUTE_MANIFEST, each answered by its group's own handler: the group's module is imported
 * and its routes built (once per service instance) on the first request to any of them. Method, path and
 * body limits are the manifest's, so routing, listing and limits need no group loaded. The server builds the
 * routes of a request's path only (RouteGroups: `/api/v3/labels` is every route under /labels).
 */
function manifestRoutes(ctx: ServiceContext): RouteGroups {
  const built = new Map<string, Promise<Route[]>>();
  const group = (name: string): Promise<Route[]> => {
    let p = built.get(name);
    if (!p) {
      const load = ROUTE_GROUPS.get(name);
      if (!load) throw new Error(`the tracker's route manifest names no such group: ${name}`);
      p = load().then((make) => make(ctx));
      p.catch(() => built.delete(name));
      built.set(name, p);
    }
    return p;
  };
  const route = (name: string, spec: string, kind: string | undefined, at: number): Route => {
    const [method, rest] = spec.split(' ') as [Route['method'], string];
    const path = `${API}${rest}`;
    const upload = kind === UPLOAD ? { maxBodyBytes: maxUploadBytes(ctx.options), streamBody: true } : {};
    return {
      method,
      path,
      ...upload,
      handler: async (req: MockRequest) => {
        const route = (await group(name))[at];
        if (route?.method !== method || route.path !== path) throw new Error(`the tracker's route manifest is out of date: ${name} builds no ${spec} at ${at}`);
        return shapeReply(await route.handler(req));
      },
    };
  };
  const routes: Array<Route | undefined> = [];
  const taken = new Set<string>();
  // The routes of the groups `want` accepts (`/api/v3/<first segment>`), built in the manifest's order, each once.
  const build = (want: (key: string) => boolean): Route[] => {
    const out: Route[] = [];
    const seen = new Map<string, number>();
    ROUTE_MANIFEST.forEach(([name, spec, kind], i) => {
      const at = seen.get(name) ?? 0;
      seen.set(name, at + 1);
      if (routes[i] || !want(groupKey(spec))) return;
      out.push((routes[i] = route(name, spec, kind, at)));
    });
    return out;
  };
  return {
    take(key) {
      if (taken.has(key)) return undefined;
      taken.add(key);
      return build((k) => k === key);
    },
    takeAll: () => build(() => true),
    all: () => (build(() => true), routes.filter((r): r is Route => r !== undefined)),
  };
}

/** The group (RouteGroups) of a manifest route `METHOD /segment/...`: `/api/v3/segment`. */
function groupKey(spec: string): string {
  const rest = spec.slice(spec.indexOf(' ') + 1);
  const end = rest.indexOf('/', 1);
  return `${API}${end < 0 ? rest : rest.slice(0, end)}`;
}

const trackerService: ServiceModule = {
  name: 'tracker',
  initState: initTracker,
  create(ctx) {
    const rate = ctx.options.tracker?.rateLimit ?? DEFAULT_RATE_LIMIT;
    return {
      routes: [openapiRoute()],
      routeGroups: manifestRoutes(ctx),
      errorReply,
      async authenticate(req) {
        if (req.path === OPENAPI_PATH && req.method === 'GET') return;
        const token = requestToken(req);
        const valid = await ctx.store.read((s) => tracker(s).token);
        if (!token) throw new MockError(401, 'unauthorized', 'missing Tracker-Token (or Shortcut-Token) header');
        if (token !== valid) throw new MockError(401, 'unauthorized', 'invalid tracker token');
      },
      rateLimit: { ...rate, key: (req) => requestToken(req) ?? 'anonymous' },
    };
  },
};

export default trackerService;
