import type { Handler, MockError, MockReply, MockRequest } from './http.js';
import type { MockState, Store } from './store.js';

export const SERVICE_NAMES = ['tracker', 'oauth', 'api', 'labels'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

export interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** A find-my-way path (`:param`, `*`); a literal colon is written `::`. */
  path: string;
  handler: Handler;
  /**
   * Largest body this route accepts (bytes); without it the server's `maxBodyBytes` applies. A larger
   * declared Content-Length is refused with 413 before any of the body is read.
   */
  maxBodyBytes?: number;
  /**
   * The route reads its own body as a stream (`req.stream`, after authentication, under
   * `maxBodyBytes`) instead of the server buffering it: for uploads.
   */
  streamBody?: boolean;
}

/** Options per service; each service reads its own key. */
export interface MockServiceOptions {
  tracker?: {
    rateLimit?: { limit: number; windowMs: number };
    token?: string;
    /** Largest multipart body `POST /files` accepts (default 50 MiB, streamed); other routes use the server's `maxBodyBytes`. */
    maxUploadBytes?: number;
    /** Refuse (422) what the contract only advises against (a project abbreviation over 3 characters); the real service takes it. */
    strict?: boolean;
    [k: string]: unknown;
  };
  oauth?: Record<string, unknown>;
  api?: Record<string, unknown>;
  labels?: Record<string, unknown>;
}

export interface ServiceContext {
  store: Store;
  now(): number;
  options: MockServiceOptions;
  /** The same server's other services (loaded on demand), e.g. labels asks oauth to check a bearer token. */
  service(name: ServiceName): Promise<ServiceInstance>;
}

export interface ServiceInstance {
  routes: Route[];
  /** Runs before the handler; throws a MockError (401/403) to refuse. */
  authenticate?(req: MockRequest, route: Route): void | Promise<void>;
  /** The service's own error shape. */
  errorReply(err: MockError): MockReply;
  /** Rate limit: requests per window, counted per key (e.g. the token). */
  rateLimit?: { limit: number; windowMs: number; key(req: MockRequest): string };
  /**
   * Routes whose code is loaded on first need (e.g. the oauth mock's developer-console API): the server
   * registers them before answering a request no other route matches, and before listing its routes.
   */
  moreRoutes?(): Promise<Route[]>;
  /** Routes built by their group only when a request's path is in it (beside `routes`, listed before them). */
  routeGroups?: RouteGroups;
  /** Anything the service offers its siblings. */
  [extra: string]: unknown;
}

/**
 * A service's routes by group, each group built on first need: a group is a path's first three segments
 * (`/api/v3/labels`), all literal in each of its routes, so a path outside the group matches none of them.
 */
export interface RouteGroups {
  /** The routes of the group `key`, built; undefined when it has none or was taken before. */
  take(key: string): Route[] | undefined;
  /** The routes of every group not taken yet, built. */
  takeAll(): Route[];
  /** Every grouped route (built), in the service's order. */
  all(): Route[];
}

export interface ServiceModule {
  name: ServiceName;
  /** Fills in this service's slice of a new or older state; returns true when it changed anything. */
  initState(state: MockState, options: MockServiceOptions): boolean;
  create(ctx: ServiceContext): ServiceInstance | Promise<ServiceInstance>;
}

/**
 * Which service owns which path prefix. All services share one origin, each at the root paths its real
 * counterpart uses, so they never collide; a module is imported only when its first request arrives.
 */
export const SERVICE_PREFIXES: ReadonlyArray<[string, ServiceName]> = [
  ['/api/v3/', 'tracker'],
  ['/o/oauth2/', 'oauth'],
  ['/token', 'oauth'],
  ['/revoke', 'oauth'],
  ['/tokeninfo', 'oauth'],
  ['/.well-known/', 'oauth'],
  ['/oauth2/', 'oauth'],
  ['/device', 'oauth'],
  ['/media/', 'api'],
  ['/v2beta/', 'labels'],
  ['/v2/', 'labels'],
  ['/$discovery/', 'labels'],
  // a label's web page (labels view ID --web)
  ['/labels/', 'labels'],
];

export type { Handler };
