import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { requireProgram } from '../helpers/e2e.js';
import { PtySession, SCRIPT } from '../helpers/pty.js';

/**
 * Issue 27, item 10h: the built binary on a real pseudo-terminal, its request held open by a slow
 * endpoint, interrupted with the Ctrl-C key: exit 130 and no "retrying" (before, the destroyed client's
 * error was taken for a network error: "The client is destroyed; retrying (attempt 2 of 4)").
 */
const hasScript = requireProgram('script (util-linux, for the pty tests)', SCRIPT);
let server: Server;
let url: string;
let dir: string;
const held: IncomingMessage[] = [];
const sessions: PtySession[] = [];

beforeAll(async () => {
  // answers nothing: every request waits until the client goes away
  server = createServer((req) => {
    held.push(req);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = mkdtempSync(join(tmpdir(), 'opsctl-small-interrupt-'));
});
afterEach(() => {
  for (const s of sessions.splice(0)) s.kill();
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

async function until(what: () => boolean, ms = 90_000): Promise<void> {
  const end = Date.now() + ms;
  while (!what()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe.runIf(hasScript)('Ctrl-C during a request', () => {
  it.each([
    ['tracker labels list (GET, retried on network errors)', ['tracker', 'labels', 'list'], { OPSCTL_TRACKER_URL: '', OPSCTL_TRACKER_TOKEN: 'tok' }],
    ['api GET', ['api', '/media/v3/channels'], { OPSCTL_API_URL: '', OPSCTL_ACCESS_TOKEN: 'tok' }],
  ])('%s: exit 130, no "retrying"', async (_name, args, extra) => {
    const env: NodeJS.ProcessEnv = { OPSCTL_CONFIG_DIR: join(dir, 'config'), NO_COLOR: '1' };
    for (const [k, v] of Object.entries(extra)) env[k] = v || url;
    const before = held.length;
    const s = PtySession.opsctl(args, { env });
    sessions.push(s);
    await until(() => held.length > before);
    s.ctrlC();
    expect(await s.exitCode()).toBe(130);
    expect(s.text).not.toMatch(/retrying/i);
    expect(s.text).not.toContain('destroyed');
    expect(s.text).not.toContain('unexpected error');
    // one request only: nothing was sent again after the interrupt
    expect(held.length).toBe(before + 1);
  });
});
