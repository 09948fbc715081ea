import type Router from 'find-my-way';
import type { OpsError } from '@opsctl/shared/errors.js';
import { DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_JSON_DEPTH } from './body.js';
import type { Fault, LoggedRequest, MockServerOptions, RouteInfo } from './server-types.js';
import { plainTable, type PlainTable } from './plain-routes.js';
import { SERVICE_LOADERS } from './services/loaders.js';
import {
  SERVICE_NAMES,
  type MockServiceOptions,
  type Route,
  type RouteGroups,
  type ServiceContext,
  type ServiceInstance,
  type ServiceName,
} from './service.js';
import { FileStore, MemoryStore, type Store } from './store.js';

type RouterInstance = Router.Instance<Router.HTTPVersion.V1>;

export interface LoadedService {
  instance: ServiceInstance;
  /** The service's find-my-way router, made on first need (ensureRouter): a request plainRoute matches loads none. */
  router?: RouterInstance;
  /** The routes no group holds (see routeGroup): the router has them from the start. */
  ungrouped: Route[];
  hits: Map<string, number[]>;
  /** The service's `moreRoutes`, once they are being registered. */
  more?: Promise<void>;
  /** Routes not yet in the router, by their group (see routeGroup): a request registers only its own group. */
  pending: Map<string, Route[]>;
  /** The service's routes for a match without the router (plain-routes.ts), undefined when they are not all plain. */
  plain: PlainTable;
  /** The service's routes built by group on first need (RouteGroups), if it has any. */
  groups?: RouteGroups;
}

/** The router's options (plain-routes.ts matches as a router made with them does). */
export const ROUTER_OPTIONS = { ignoreTrailingSlash: true, caseSensitive: true };

/** How many leading path segments name a route group (`/api/v3/labels`). */
const GROUP_SEGMENTS = 3;

/**
 * The group of a route pattern: its first path segments when they are all literal, so only a path
 * that starts with exactly those segments can match it; undefined when one of them is a parameter or
 * a wildcard (such a route is registered when the router is made). Building the tracker's whole router costs about
 * 10 ms of CPU; a command that makes one request needs one group of a few routes.
 */
function routeGroup(pattern: string): string | undefined {
  const segments = pattern.split('/').filter(Boolean).slice(0, GROUP_SEGMENTS);
  return segments.some((s) => /[:*(]/.test(s)) ? undefined : `/${segments.join('/')}`;
}

/** The group a request path belongs to: its first path segments. */
const pathGroup = (pathname: string): string => `/${pathname.split('/').filter(Boolean).slice(0, GROUP_SEGMENTS).join('/')}`;

/**
 * Builds the service's grouped routes a request path can match (RouteGroups): its group, or every group for a path
 * with a percent-escape or a `;` (see registerRoutesFor). They join the routes matched without the router and
 * the routes pending for it, as if the service had returned them from the start: a path is only ever matched
 * against routes it can match, so the answer is the same.
 */
export function buildGroupsFor(svc: LoadedService, pathname: string): void {
  if (!svc.groups) return;
  const routes = /[%;]/.test(pathname) ? svc.groups.takeAll() : svc.groups.take(pathGroup(pathname));
  if (routes?.length) addRoutes(svc, routes);
}

/** Every grouped route not built yet, built (before every route is registered or listed). */
function buildAllGroups(svc: LoadedService): void {
  const routes = svc.groups?.takeAll();
  if (routes?.length) addRoutes(svc, routes);
}

function addRoutes(svc: LoadedService, routes: Route[]): void {
  const plain = plainTable(routes);
  if (!plain) svc.plain = undefined;
  else if (svc.plain) for (const [method, list] of plain) svc.plain.set(method, [...(svc.plain.get(method) ?? []), ...list]);
  sortRoutes(routes, svc.pending, svc.ungrouped, svc.router);
}

/** Each route into its group's pending list (or the router, once it is made), or the routes no group holds. */
function sortRoutes(routes: readonly Route[], pending: Map<string, Route[]>, ungrouped: Route[], router?: RouterInstance): void {
  for (const route of routes) {
    const group = routeGroup(route.path);
    if (router) register(router, route);
    else if (group === undefined) ungrouped.push(route);
    else if (pending.has(group)) pending.get(group)!.push(route);
    else pending.set(group, [route]);
  }
}

let routerModule: Promise<typeof Router> | undefined;

/** The service's router, made (and find-my-way loaded) on first need, with the routes no group holds. */
export async function ensureRouter(svc: LoadedService): Promise<RouterInstance> {
  if (!svc.router) {
    const make = await (routerModule ??= import('find-my-way').then((m) => m.default));
    if (!svc.router) {
      const router = make(ROUTER_OPTIONS);
      for (const route of svc.ungrouped) register(router, route);
      svc.router = router;
    }
  }
  return svc.router;
}

function built(svc: LoadedService): RouterInstance {
  if (!svc.router) throw new Error('the service has no router yet (ensureRouter)');
  return svc.router;
}

/**
 * Puts the routes a request path can match into the router: its group (a path with a percent-escape,
 * which the router decodes, or a `;`, where it ends the path, takes every group). A path that matches
 * nothing then has every group registered by the caller (registerAllRoutes) before a 404 or 405 is decided.
 */
export function registerRoutesFor(svc: LoadedService, pathname: string): void {
  if (svc.pending.size === 0) return;
  if (/[%;]/.test(pathname)) {
    registerAllRoutes(svc);
    return;
  }
  const group = svc.pending.get(pathGroup(pathname));
  if (!group) return;
  svc.pending.delete(pathGroup(pathname));
  for (const route of group) register(built(svc), route);
}

/** Registers every route still pending; true when there were any. */
export function registerAllRoutes(svc: LoadedService): boolean {
  buildAllGroups(svc);
  if (svc.pending.size === 0) return false;
  const groups = [...svc.pending.values()];
  svc.pending.clear();
  for (const group of groups) for (const route of group) register(built(svc), route);
  return true;
}

function register(router: RouterInstance, route: Route): void {
  router.on(route.method, route.path, () => undefined, { route });
}

/**
 * What one mock server holds while it runs: its store, its clock, the services loaded so far (each
 * on first request) and, in test mode, the request log and the injected faults.
 */
export class MockRuntime {
  readonly enabled: readonly ServiceName[];
  readonly store: Store;
  readonly options: MockServiceOptions;
  readonly maxBody: number;
  readonly maxDepth: number;
  readonly test: boolean;
  readonly onLocalError?: (err: OpsError) => void;
  /** Test mode only: every request, oldest first. */
  readonly requests: LoggedRequest[] = [];
  /** Test mode only: faults still to inject. */
  readonly faults: Array<Fault & { left: number }> = [];
  readonly ctx: ServiceContext;
  /** How far tests moved the mock clock forward (test knob POST /__mock/clock). */
  clockOffsetMs = 0;
  private readonly baseNow: () => number;
  private readonly loaded = new Map<ServiceName, Promise<LoadedService>>();

  constructor(opts: MockServerOptions) {
    this.enabled = (opts.services ?? SERVICE_NAMES).filter((name) => SERVICE_LOADERS[name]);
    // `mock serve` and tests: the operator reads it on stderr, once per failed request, without a stack.
    this.onLocalError = opts.onLocalError ?? ((err) => process.stderr.write(`opsctl mock: ${err.message}${err.hint ? `\n  ${err.hint}` : ''}\n`));
    this.store =
      typeof opts.state === 'object' ? opts.state : opts.state && opts.state !== 'memory' ? new FileStore(opts.state, undefined, opts.lock) : new MemoryStore();
    this.baseNow = opts.now ?? Date.now;
    this.options = opts.options ?? {};
    this.maxBody = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.maxDepth = opts.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH;
    this.test = Boolean(opts.test);
    this.ctx = { store: this.store, now: this.now, options: this.options, service: (name) => this.load(name).then((l) => l.instance) };
  }

  /** The mock clock: the base clock plus whatever tests moved it forward. */
  readonly now = (): number => this.baseNow() + this.clockOffsetMs;

  /** A service, loaded on first use: its module, its initial state in the store, its router. */
  load(name: ServiceName): Promise<LoadedService> {
    let p = this.loaded.get(name);
    if (!p) {
      p = this.start(name);
      p.catch(() => this.loaded.delete(name));
      this.loaded.set(name, p);
    }
    return p;
  }

  private async start(name: ServiceName): Promise<LoadedService> {
    const loader = SERVICE_LOADERS[name];
    if (!loader) throw new Error(`the mock has no ${name} service`);
    const mod = await loader();
    await this.store.addInit((state) => mod.initState(state, this.options));
    const instance = await mod.create(this.ctx);
    const pending = new Map<string, Route[]>();
    const ungrouped: Route[] = [];
    sortRoutes(instance.routes, pending, ungrouped);
    return { instance, ungrouped, hits: new Map(), pending, plain: plainTable(instance.routes), groups: instance.routeGroups };
  }

  /** Makes the next `times` (default 1) matching requests fail (test mode). */
  inject(fault: Fault): void {
    if (!this.test) throw new Error('faults can only be injected into a mock started with test: true');
    this.faults.push({ ...fault, left: fault.times ?? 1 });
  }

  /** Every route of every served service, read from the routers (loads each service). */
  async routes(): Promise<RouteInfo[]> {
    const out: RouteInfo[] = [];
    for (const service of this.enabled) {
      const svc = await this.load(service);
      const router = await ensureRouter(svc);
      registerAllRoutes(svc);
      await addMoreRoutes(svc);
      // in the service's own order (groups are registered as requests come), its on-demand routes last
      const order = new Map([...(svc.groups?.all() ?? []), ...svc.instance.routes].map((route, i) => [route, i]));
      const registered = (router as unknown as { routes: Array<{ method: string; path: string; store: { route: Route } }> }).routes;
      const at = (r: (typeof registered)[number]) => order.get(r.store.route) ?? order.size;
      for (const r of [...registered].sort((a, b) => at(a) - at(b))) {
        out.push({ service, method: r.method, path: r.path, maxBodyBytes: r.store.route.maxBodyBytes ?? this.maxBody });
      }
    }
    return out;
  }

  /** Stops every loaded service (background loops such as event delivery stop and save). */
  async closeServices(): Promise<void> {
    for (const p of this.loaded.values()) {
      const inst = await p.then((l) => l.instance).catch(() => undefined);
      if (typeof inst?.close === 'function') await (inst.close as () => Promise<void>)().catch(() => undefined);
    }
  }
}

/** Registers a service's on-demand routes (once); true when the service has any (now registered). */
export async function addMoreRoutes(svc: LoadedService): Promise<boolean> {
  const { instance } = svc;
  if (!instance.moreRoutes) return false;
  if (!svc.more) {
    const p = Promise.all([ensureRouter(svc), instance.moreRoutes()]).then(([router, routes]) => {
      for (const route of routes) register(router, route);
    });
    p.catch(() => (svc.more = undefined));
    svc.more = p;
  }
  await svc.more;
  return true;
}
