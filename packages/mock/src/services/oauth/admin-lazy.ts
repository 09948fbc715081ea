/**
 * The developer console's API and the security-event delivery loop, loaded on first use, so that
 * starting the oauth service, and every sign-in, imports none of admin.ts, console.ts, integrity.ts,
 * events.ts or delivery.ts, and registers none of the console's routes. The server registers them
 * (the service's `moreRoutes`) before answering a request no other route matches.
 */

import type { ServiceContext } from '../../service.js';
import type { AdminRoutes } from './admin.js';

export interface LazyConsole {
  /** Loads the console's API and registers its delivery loop (once). */
  load(): Promise<AdminRoutes>;
  /** Wakes the delivery loop, loading it first when it has not run yet. */
  kick(): Promise<void>;
  /** Stops the delivery loop, if it was ever loaded. */
  close(): Promise<void>;
}

export function lazyConsole(ctx: ServiceContext): LazyConsole {
  let loading: Promise<AdminRoutes> | undefined;
  const load = () =>
    (loading ??= Promise.all([import('./admin.js'), import('./delivery.js')]).then(([{ adminRoutes }, { registerDeliverer }]) => {
      const admin = adminRoutes(ctx);
      registerDeliverer(ctx.store, admin.deliverer);
      return admin;
    }));
  return {
    load,
    kick: async () => (await load()).deliverer.kick(),
    close: async () => {
      if (loading) await (await loading).deliverer.close();
    },
  };
}
