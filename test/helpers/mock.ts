import { createMockServer, type MockServer, type MockServerOptions } from '@opsctl/mock/server.js';

/** The mock state as tests poke at it: any slice, unnarrowed (src/ narrows each service's own). */
export type TestState = Record<string, any>;

/** A test-mode mock on 127.0.0.1 port 0 (in-memory unless a state file is given). */
export async function startMock(opts: MockServerOptions = {}): Promise<MockServer & { trackerToken: string }> {
  const server = await createMockServer({ port: 0, host: '127.0.0.1', state: 'memory', test: true, ...opts });
  let trackerToken = '';
  if (server.services.includes('tracker')) {
    await server.service('tracker');
    trackerToken = await server.store.read((s: TestState) => s.tracker.token as string);
  }
  return Object.assign(server, { trackerToken });
}

/** Environment that points the CLI's tracker at a mock. */
export function trackerEnv(server: { url: string; trackerToken: string }, configDir: string): NodeJS.ProcessEnv {
  return { OPSCTL_CONFIG_DIR: configDir, OPSCTL_TRACKER_URL: server.url, OPSCTL_TRACKER_TOKEN: server.trackerToken };
}
