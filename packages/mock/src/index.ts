/**
 * @opsctl/mock: the mock of every service opsctl talks to, as its own package.
 *
 * Its public face: `createMockServer()` (tests, `opsctl mock serve`) and `createEmbeddedMock()`, the one
 * adapter opsctl's wiring builds for the embedded profile (src/wiring/embedded.ts). The developer console and
 * the security events have their own entry, `@opsctl/mock/console`, for the `opsctl mock …` verbs.
 * The package imports nothing of the CLI: what both sides share is in @opsctl/shared.
 */
import type { MockServer, MockServerOptions } from './server-types.js';
export type { Fault, LoggedRequest, MockServer, MockServerOptions, RouteInfo } from './server-types.js';
export { createEmbeddedMock, type EmbeddedMock, type EmbeddedMockOptions } from './embedded.js';
export { FileStore, MemoryStore, sliceField, stateTrackerToken, type Store } from './store.js';
export type { SalvageReport } from './store-files.js';
export { SERVICE_NAMES, type MockServiceOptions, type ServiceName } from './service.js';
export type { Transport, TransportRequest, TransportResponse } from './transport.js';

/** Reads and checks an authorization server's clients file (JSON or YAML) the way the mock will; throws naming the problem. */
export async function readClientsFile(path: string): Promise<void> {
  await (await import('./services/oauth/index.js')).readRegistryFile(path);
}

/** Reads a CI issuer's key set (JWKS) for token exchange (`--trust-jwks`, OPSCTL_MOCK_TRUST_JWKS); throws naming the file and the problem. */
export async function readTrustJwks(path: string): Promise<{ keys: unknown[] }> {
  return (await import('./services/oauth/trust-file.js')).readTrustJwks(path);
}

/**
 * Every mocked service on a loopback socket (server.ts), loaded when called: the embedded mock, which this
 * entry also serves, answers in-process and loads node:http only when it needs a socket.
 */
export async function createMockServer(opts?: MockServerOptions): Promise<MockServer> {
  return (await import('./server.js')).createMockServer(opts);
}
