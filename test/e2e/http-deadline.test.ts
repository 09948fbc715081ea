import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';

/**
 * One deadline for the whole exchange, body included (OPSCTL_HTTP_TIMEOUT_MS): a server that sends
 * its headers and then one byte at a time, and one that accepts the connection and never answers,
 * both end the command with exit 1 and a message naming the endpoint. The test's own deadline
 * (execa's timeout) is far above the command's, so an "ended" here is the command's doing.
 */
const DEADLINE_MS = 1500;
const TEST_DEADLINE_MS = 30_000;

let drip: Server;
let hole: TcpServer;
const sockets = new Set<Socket>();
const timers = new Set<NodeJS.Timeout>();
let dir: string;

const listen = (s: Server | TcpServer) => new Promise<number>((r) => s.listen(0, '127.0.0.1', () => r((s.address() as AddressInfo).port)));

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'opsctl-deadline-'));
  // Headers at once, then a space every 200 ms forever (a JSON body that never ends).
  drip = createHttpServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('[');
    const t = setInterval(() => res.write(' '), 200);
    timers.add(t);
    res.on('close', () => {
      clearInterval(t);
      timers.delete(t);
    });
  });
  drip.on('connection', (s) => sockets.add(s));
  // Accepts, reads and never answers.
  hole = createTcpServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.resume();
  });
});

afterAll(async () => {
  for (const t of timers) clearInterval(t);
  for (const s of sockets) s.destroy();
  await Promise.all([drip, hole].map((s) => new Promise((r) => (s.listening ? s.close(r) : r(undefined)))));
  rmSync(dir, { recursive: true, force: true });
});

function run(args: string[], url: string) {
  return runBin(args, {
    timeout: TEST_DEADLINE_MS,
    env: { OPSCTL_CONFIG_DIR: dir, OPSCTL_TRACKER_URL: url, OPSCTL_TRACKER_TOKEN: 'tok', OPSCTL_HTTP_TIMEOUT_MS: String(DEADLINE_MS), CI: '1' },
  });
}

describe('every request has a deadline for the whole exchange', () => {
  it('a server that drips its body byte by byte: tracker labels list ends with exit 1 naming the endpoint', async () => {
    const url = `http://127.0.0.1:${await listen(drip)}`;
    const r = await run(['tracker', 'labels', 'list'], url);
    expect(r.timedOut).toBe(false);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`tracker: GET ${url}/`);
    expect(r.stderr).toContain('the answer was not complete within 1.5 s (200 received, the body still coming)');
    expect(r.stderr).toContain('OPSCTL_HTTP_TIMEOUT_MS');
    expect(r.stderr).not.toContain('unexpected error');
  });

  it('a black hole (accepts, never answers): tracker labels list ends with exit 1 naming the endpoint', async () => {
    const url = `http://127.0.0.1:${await listen(hole)}`;
    const r = await run(['tracker', 'labels', 'list'], url);
    expect(r.timedOut).toBe(false);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`tracker: GET ${url}/`);
    expect(r.stderr).toContain('no answer within 1.5 s');
    expect(r.stderr).not.toContain('unexpected error');
  });
});

describe('kv: a member that drips its answer or never answers is named as unreachable within --request-timeout', () => {
  const kv = (args: string[]) => runBin(['kv', ...args], { timeout: TEST_DEADLINE_MS, env: { OPSCTL_CONFIG_DIR: dir, CI: '1' } });

  it('kv health: both members unhealthy, each named with the deadline, exit 1', async () => {
    const dripUrl = `http://127.0.0.1:${(drip.address() as AddressInfo | null)?.port ?? (await listen(drip))}`;
    const holeUrl = `http://127.0.0.1:${(hole.address() as AddressInfo | null)?.port ?? (await listen(hole))}`;
    const r = await kv(['health', '--endpoints', `${dripUrl},${holeUrl}`, '--request-timeout', '1s', '--json']);
    expect(r.timedOut).toBe(false);
    expect(r.exitCode).toBe(1);
    const rows = JSON.parse(String(r.stdout)) as Array<{ endpoint: string; healthy: boolean; detail: string }>;
    expect(rows.map((x) => [x.endpoint, x.healthy, x.detail])).toEqual([
      [dripUrl, false, `${dripUrl}: unreachable (no complete answer within 1000 ms)`],
      [holeUrl, false, `${holeUrl}: unreachable (no complete answer within 1000 ms)`],
    ]);
  });

  it('kv upgrade --dry-run: refused before any change, naming both members as not reachable, exit 1', async () => {
    const dripUrl = `http://127.0.0.1:${(drip.address() as AddressInfo | null)?.port ?? (await listen(drip))}`;
    const holeUrl = `http://127.0.0.1:${(hole.address() as AddressInfo | null)?.port ?? (await listen(hole))}`;
    const r = await kv(['upgrade', '--to', '3.3', '--dry-run', '--endpoints', `${dripUrl},${holeUrl}`, '--request-timeout', '1s']);
    expect(r.timedOut).toBe(false);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('upgrade refused before any change');
    expect(r.stderr).toContain(`(${dripUrl}) is not reachable: ${dripUrl}: unreachable (no complete answer within 1000 ms)`);
    expect(r.stderr).toContain(`(${holeUrl}) is not reachable: ${holeUrl}: unreachable (no complete answer within 1000 ms)`);
    expect(r.stderr).not.toContain('unexpected error');
  });
});
