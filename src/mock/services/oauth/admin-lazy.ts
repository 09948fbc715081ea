/**
 * The developer console's API and the security-event delivery loop, loaded on first use: the route
 * table is listed here (method and path only) so that starting the oauth service, and every sign-in,
 * imports none of admin.ts, console.ts, integrity.ts, events.ts or delivery.ts. The first request to one
 * of these routes imports admin.ts and hands the request to its real handler.
 */

import type { Route, ServiceContext } from '../../service.js';
import type { AdminRoutes } from './admin.js';

const P = '/oauth2/mock';
const E = `${P}/events`;

/** Every route of admin.ts's `adminRoutes` (checked against it when it loads). */
export const ADMIN_ROUTE_TABLE: ReadonlyArray<readonly [Route['method'], string]> = [
  ['GET', `${P}/clients`],
  ['POST', `${P}/clients`],
  ['GET', `${P}/clients/:client_id`],
  ['PATCH', `${P}/clients/:client_id`],
  ['DELETE', `${P}/clients/:client_id`],
  ['POST', `${P}/clients/:client_id/integrity`],
  ['GET', `${P}/clients/:client_id/metrics`],
  ['POST', `${P}/clients/:client_id/integrity-token`],
  ['POST', `${P}/clients/:client_id/verify-ownership`],
  ['POST', `${P}/sweep`],
  ['GET', `${P}/store`],
  ['POST', `${P}/store/apps`],
  ['POST', `${P}/store/items`],
  ['GET', `${E}/receivers`],
  ['POST', `${E}/receivers`],
  ['DELETE', `${E}/receivers/:id`],
  ['GET', E],
  ['POST', E],
  ['POST', `${E}/deliver`],
];

export interface LazyConsole {
  /** The console's routes, each loading the real handler on its first request. */
  routes: Route[];
  /** Loads the console's API and starts its delivery loop (once). */
  load(): Promise<AdminRoutes>;
  /** Wakes the delivery loop, loading it first when it has not run yet. */
  kick(): Promise<void>;
  /** Stops the delivery loop, if it was ever started. */
  close(): Promise<void>;
}

export function lazyConsole(ctx: ServiceContext): LazyConsole {
  let loading: Promise<{ admin: AdminRoutes; handlers: Map<string, Route['handler']> }> | undefined;
  const key = (method: string, path: string) => `${method} ${path}`;
  const loadAll = () =>
    (loading ??= Promise.all([import('./admin.js'), import('./delivery.js')]).then(([{ adminRoutes }, { registerDeliverer }]) => {
      const admin = adminRoutes(ctx);
      const handlers = new Map(admin.routes.map((r) => [key(r.method, r.path), r.handler]));
      const listed = new Set(ADMIN_ROUTE_TABLE.map(([m, p]) => key(m, p)));
      const drift = [...handlers.keys()].filter((k) => !listed.has(k)).concat([...listed].filter((k) => !handlers.has(k)));
      if (drift.length) throw new Error(`admin-lazy.ts's ADMIN_ROUTE_TABLE and admin.ts's routes differ: ${drift.join(', ')}`);
      registerDeliverer(ctx.store, admin.deliverer);
      return { admin, handlers };
    }));
  const routes: Route[] = ADMIN_ROUTE_TABLE.map(([method, path]) => ({
    method,
    path,
    handler: async (req) => {
      const { handlers } = await loadAll();
      return (handlers.get(key(method, path)) as Route['handler'])(req);
    },
  }));
  return {
    routes,
    load: async () => (await loadAll()).admin,
    kick: async () => (await loadAll()).admin.deliverer.kick(),
    close: async () => {
      if (loading) await (await loading).admin.deliverer.close();
    },
  };
}
