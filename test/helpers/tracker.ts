import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { runCli, tempConfigDir, type RunResult } from './cli.js';
import { startMock, trackerEnv } from './mock.js';

/** A direct HTTP call to the tracker mock: {status, body, headers}. */
export function trackerCall(mock: { url: string; trackerToken: string }) {
  return (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    request(`${mock.url}/api/v3${path}`, {
      method: method as 'GET',
      headers: { 'content-type': 'application/json', 'tracker-token': mock.trackerToken, ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    }).then(async (r) => ({ status: r.statusCode, body: (await r.body.json().catch(() => undefined)) as any, headers: r.headers }));
}

type TrackerMock = Awaited<ReturnType<typeof startMock>>;

export interface TrackerFixture {
  /** The test-mode mock (tracker only) on port 0, shared by the file. */
  readonly mock: TrackerMock;
  /** OPSCTL_CONFIG_DIR (a fresh temp dir per test), URL and token pointing the CLI at the mock. */
  readonly env: NodeJS.ProcessEnv;
  /** The per-test config dir. */
  readonly dir: string;
  /** Runs the CLI in-process against the mock. */
  cli(...argv: string[]): Promise<RunResult>;
  /** Runs the CLI with --json and parses stdout; throws (with stderr) on a non-zero exit. */
  json(...argv: string[]): Promise<any>;
  /** Writes a file into the per-test config dir and returns its path. */
  file(name: string, text: string): string;
  /** The requests the mock received since the test began that were not GETs. */
  writes(): TrackerMock['requests'];
}

/**
 * Registers the hooks every tracker integration file needs: one mock for the file, a fresh config dir
 * and an empty request log per test, and `reset` run on the store before each test.
 */
export function useTrackerMock(reset?: (tracker: Record<string, any>) => void): TrackerFixture {
  let mock: TrackerMock | undefined;
  let cfg: ReturnType<typeof tempConfigDir> | undefined;
  let env: NodeJS.ProcessEnv = {};
  beforeAll(async () => {
    mock = await startMock({ services: ['tracker'] });
  });
  afterAll(async () => {
    await mock?.close();
  });
  beforeEach(async () => {
    cfg = tempConfigDir();
    env = trackerEnv(mock!, cfg.dir);
    if (reset) await mock!.store.write((s) => reset(s.tracker as Record<string, any>));
    mock!.requests.length = 0;
  });
  afterEach(() => cfg?.cleanup());
  const fixture: TrackerFixture = {
    get mock() {
      return mock!;
    },
    get env() {
      return env;
    },
    get dir() {
      return cfg!.dir;
    },
    cli: (...argv) => runCli(argv, { env }),
    async json(...argv) {
      const r = await runCli([...argv, '--json'], { env });
      if (r.code !== 0) throw new Error(`${argv.join(' ')} exited ${r.code}: ${r.stderr}`);
      return r.json();
    },
    file(name, text) {
      const p = join(cfg!.dir, name);
      writeFileSync(p, text);
      return p;
    },
    writes: () => mock!.requests.filter((r) => r.method !== 'GET'),
  };
  return fixture;
}
