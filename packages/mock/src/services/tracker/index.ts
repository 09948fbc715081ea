import { MockError, type MockRequest } from '../../http.js';
import type { Route, ServiceContext, ServiceModule } from '../../service.js';
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
 * body limits are the manifest's, so routing, listing and limits need no group loaded.
 */
function manifestRoutes(ctx: ServiceContext): Route[] {
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
  const seen = new Map<string, number>();
  return ROUTE_MANIFEST.map(([name, spec, kind]): Route => {
    const at = seen.get(name) ?? 0;
    seen.set(name, at + 1);
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
  });
}

const trackerService: ServiceModule = {
  name: 'tracker',
  initState: initTracker,
  create(ctx) {
    const rate = ctx.options.tracker?.rateLimit ?? DEFAULT_RATE_LIMIT;
    return {
      routes: manifestRoutes(ctx).concat(openapiRoute()),
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
