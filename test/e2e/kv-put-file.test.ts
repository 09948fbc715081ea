import { execa } from 'execa';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { startCluster, type RealTestCluster } from '../framework/index.js';
import { etcdReleaseDirs } from '../helpers/etcd-releases.js';
import { until } from '../helpers/kv.js';

const releases = etcdReleaseDirs();
const LIMIT = 1024;

/**
 * `kv put KEY -` (stdin) and `kv put KEY --file F`: a value too long for an argument reaches a real
 * etcd 3.3.27 member started with --max-request-bytes 1024, and its refusal is shown with the fix.
 */
describe.runIf(releases)('kv put: the value from stdin or a file (real etcd, --max-request-bytes 1024)', () => {
  const cfg = tempConfigDir('opsctl-kv-put-');
  let c: RealTestCluster;
  const kv = (args: string[], input?: string) =>
    execa(process.execPath, [BIN, 'kv', ...args, '--endpoints', c.endpoints.join(',')], {
      reject: false,
      input: input ?? '',
      env: { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1' },
      extendEnv: true,
      timeout: 60_000,
    });

  beforeAll(async () => {
    c = await startCluster({ members: 'real', configDir: cfg.dir, size: 1, bins: { '3.3': releases!.v33 }, extraConfig: () => `max-request-bytes: ${LIMIT}` });
    c.real.start(c.members[0]!, '3.3');
    await until(async () => (await kv(['health'])).exitCode === 0 || undefined, 60_000, 'the member healthy');
  }, 300_000);

  afterAll(async () => {
    await c?.destroy();
    cfg.cleanup();
  });

  it('a value from stdin (-) and from --file is stored as it was', async () => {
    const fromStdin = 'line one\nline two: "quoted" & $dollars\n';
    const a = await kv(['put', 'cfg/stdin', '-'], fromStdin);
    expect(a.exitCode, String(a.stderr)).toBe(0);
    expect(JSON.parse(String((await kv(['get', 'cfg/stdin', '--json'])).stdout)).kvs[0].value).toBe(fromStdin);

    const file = join(cfg.dir, 'value.txt');
    const content = `${'x'.repeat(600)}\n`;
    writeFileSync(file, content);
    const b = await kv(['put', 'cfg/file', '--file', file]);
    expect(b.exitCode, String(b.stderr)).toBe(0);
    expect(JSON.parse(String((await kv(['get', 'cfg/file', '--json'])).stdout)).kvs[0].value).toBe(content);
  });

  it('a value over --max-request-bytes reaches the server; its "request is too large" is shown with the fix, exit 1, nothing stored', async () => {
    const big = 'y'.repeat(LIMIT * 4);
    const file = join(cfg.dir, 'big.txt');
    writeFileSync(file, big);
    for (const r of [await kv(['put', 'cfg/big', '--file', file]), await kv(['put', 'cfg/big', '-'], big)]) {
      expect(r.exitCode).toBe(1);
      expect(String(r.stderr)).toMatch(/request is too large \(HTTP \d+\)/);
      expect(String(r.stderr)).toContain('--max-request-bytes');
      expect(String(r.stderr)).not.toContain('unexpected error');
    }
    // nothing stored: nothing printed, exit 0 (etcdctl's habit); --require says so and exits 1
    const g = await kv(['get', 'cfg/big']);
    expect([g.exitCode, String(g.stdout)]).toEqual([0, '']);
    const req = await kv(['get', 'cfg/big', '--require']);
    expect(req.exitCode).toBe(1);
    expect(String(req.stderr)).toContain('no key matches "cfg/big" (--require)');
  });

  it('bad input is a usage error naming the fix, before any request: both a value and --file, no value, an unreadable file', async () => {
    const both = await kv(['put', 'k', 'v', '--file', join(cfg.dir, 'value.txt')]);
    expect(both.exitCode).toBe(2);
    expect(String(both.stderr)).toContain('give the value as an argument or with --file, not both');
    const none = await kv(['put', 'k']);
    expect(none.exitCode).toBe(2);
    expect(String(none.stderr)).toContain('kv put k: no value');
    const missing = await kv(['put', 'k', '--file', 'no-such-file.txt']);
    expect(missing.exitCode).toBe(2);
    expect(String(missing.stderr)).toContain('--file: no-such-file.txt does not exist');
    expect((await kv(['get', 'k', '--require'])).exitCode).toBe(1);
  });
});
