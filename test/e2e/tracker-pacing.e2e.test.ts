import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execa, type ResultPromise } from 'execa';
import { BIN, runBin } from '../helpers/bin.js';

/**
 * Pacing shared between processes: `opsctl mock serve` (the built binary, test knobs on for its request
 * log) limited to 200 requests per 6 s, and 4 opsctl processes of one user (one data directory) making
 * 100 requests each at the same time. Together they must stay under the limit: not one 429.
 */
let serve: ResultPromise;
let serveDir: string;
let userDir: string;
let url = '';
let token = '';

beforeAll(async () => {
  serveDir = mkdtempSync(join(tmpdir(), 'opsctl-e2e-pace-serve-'));
  userDir = mkdtempSync(join(tmpdir(), 'opsctl-e2e-pace-user-'));
  serve = execa(process.execPath, [BIN, 'mock', 'serve', '--memory', '--port', '0', '--test', '--tracker-rate-limit', '200/6s', '--json'], {
    env: { NO_COLOR: '1', OPSCTL_CONFIG_DIR: serveDir },
    reject: false,
  });
  let out = '';
  serve.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  const started = Date.now();
  while (!out.includes('\n')) {
    if (serve.exitCode !== null || Date.now() - started > 30_000) throw new Error(`mock serve did not start (run npm run build first): ${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const info = JSON.parse(out.split('\n')[0]!);
  url = info.url;
  token = info.tracker_token;
});
afterAll(async () => {
  serve?.kill('SIGTERM');
  await serve;
  rmSync(serveDir, { recursive: true, force: true });
  rmSync(userDir, { recursive: true, force: true });
});

describe('4 processes share one token’s limit', () => {
  it('4 × 100 requests against a mock limited to 200/6 s: all succeed, 0 × 429', async () => {
    const env = { OPSCTL_CONFIG_DIR: userDir, OPSCTL_TRACKER_URL: url, OPSCTL_TRACKER_TOKEN: token, OPSCTL_TRACKER_RATE_LIMIT: '200/6s' };
    const files = [0, 1, 2, 3].map((p) => {
      const f = join(userDir, `labels-${p}.yaml`);
      // 1 list + 99 creates = 100 requests per process
      writeFileSync(f, `labels:\n${Array.from({ length: 99 }, (_, i) => `  - name: p${p}-label-${i}\n`).join('')}`);
      return f;
    });
    await fetch(`${url}/__mock/requests`, { method: 'DELETE' });
    const runs = await Promise.all(files.map((f) => runBin(['tracker', 'labels', 'apply', '-f', f], { env })));
    for (const r of runs) expect(r.exitCode, String(r.stderr)).toBe(0);
    const log = (await (await fetch(`${url}/__mock/requests`)).json()) as Array<{ path: string; status: number; at: number }>;
    const tracker = log.filter((q) => q.path.startsWith('/api/v3/'));
    expect(tracker).toHaveLength(400);
    expect(tracker.filter((q) => q.status === 429)).toHaveLength(0);
    expect(tracker.filter((q) => q.status === 201)).toHaveLength(396);
  }, 120_000);
});
