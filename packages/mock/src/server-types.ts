/** The shapes of a mock server: its options, its routes as listed, a logged request, an injected fault, the server itself. */
import type { Transport } from './transport.js';
import { type OpsError } from '@opsctl/shared/errors.js';
import type { MockServiceOptions, ServiceInstance, ServiceName } from './service.js';
import type { Store, StoreLockOptions } from './store.js';

export interface MockServerOptions {
  /** Services to serve (default: all). */
  services?: readonly ServiceName[];
  /** A state file path, `memory` (the default), or a ready store. */
  state?: string | Store;
  port?: number;
  host?: string;
  /** Turns on the test knobs: forced statuses, injected faults, the request log. Off for real use. */
  test?: boolean;
  options?: MockServiceOptions;
  now?: () => number;
  /** Largest request body a route without its own `maxBodyBytes` accepts (bytes, default 1 MiB). */
  maxBodyBytes?: number;
  /**
   * Told of each of the mock's own storage errors (its state file, directory or lock: an OpsError naming
   * the path and the fix), which the client is answered as a 503. The embedded mock passes them on to
   * the command, which shows them as they are.
   */
  onLocalError?: (err: OpsError) => void;
  /** A state file's lock waits: the command's abort signal, where notices go (see StoreLockOptions). */
  lock?: StoreLockOptions;
  /** Deepest JSON nesting accepted in a request body (default 64); deeper is refused with 400. */
  maxJsonDepth?: number;
}

/** One registered route, as the router knows it (what `routes()` lists). */
export interface RouteInfo {
  service: ServiceName;
  method: string;
  /** The find-my-way pattern, e.g. `/api/v3/labels/:id`. */
  path: string;
  /** The body limit in force on this route (bytes). */
  maxBodyBytes: number;
}

export interface LoggedRequest {
  service: ServiceName;
  method: string;
  path: string;
  query: string;
  status: number;
  at: number;
}

export interface Fault {
  service?: ServiceName;
  method?: string;
  /** Exact path, or a prefix ending in `*`. */
  path?: string;
  status: number;
  /** How many matching requests to fail (default 1). */
  times?: number;
  retryAfter?: number;
  message?: string;
}

export interface MockServer {
  /** The one origin every service is served from, e.g. http://127.0.0.1:41234 */
  url: string;
  /** The URL of each served service (all the same origin). */
  urls: Partial<Record<ServiceName, string>>;
  store: Store;
  services: readonly ServiceName[];
  /** Test mode only: every request, oldest first. */
  requests: LoggedRequest[];
  /** Test mode only: make the next matching requests fail. */
  inject(fault: Fault): void;
  /** A loaded service instance (loads it if needed). */
  service(name: ServiceName): Promise<ServiceInstance>;
  /** Every route of every served service, read from the routers (loads each service). */
  routes(): Promise<RouteInfo[]>;
  /** Answers a request from this process without a socket (the embedded profile's HttpClient transport). */
  answer: Transport;
  /** The mock's clock (what every service calls "now"); tests move it forward instead of waiting. */
  clock: { now(): number; advance(ms: number): void };
  close(): Promise<void>;
}
