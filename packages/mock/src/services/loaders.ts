import type { ServiceModule, ServiceName } from '../service.js';

/** Each service module, imported lazily (one line per service). */
export const SERVICE_LOADERS: Partial<Record<ServiceName, () => Promise<ServiceModule>>> = {
  tracker: () => import('./tracker/index.js').then((m) => m.default),
  oauth: () => import('./oauth/index.js').then((m) => m.default),
  api: () => import('./api/index.js').then((m) => m.default),
  labels: () => import('./labels/index.js').then((m) => m.default),
};
