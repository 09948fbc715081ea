import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';

let cfg: ReturnType<typeof tempConfigDir>;
beforeEach(() => {
  cfg = tempConfigDir();
});
afterEach(() => cfg.cleanup());

describe('the built binary', () => {
  it('prints its version and exits 0', async () => {
    const r = await runBin(['--version']);
    expect(r.exitCode).toBe(0);
    expect(String(r.stdout)).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('keeps embedded state between processes: create in one, list in the next', async () => {
    const env = { OPSCTL_CONFIG_DIR: cfg.dir };
    const created = await runBin(['tracker', 'labels', 'create', '--name', 'e2e', '--color', '#abcdef', '--json=id'], { env });
    expect(created.exitCode, String(created.stderr)).toBe(0);
    const listed = await runBin(['tracker', 'labels', 'list'], { env });
    expect(listed.exitCode).toBe(0);
    expect(String(listed.stdout).replace(/\n$/, '')).toBe(`${JSON.parse(String(created.stdout)).id}\te2e\t#abcdef\tfalse\t`);
  });

  it('serves the mock with `mock serve`; OPSCTL_TRACKER_URL points the CLI at it; SIGTERM saves and exits 0', async () => {
    const state = `${cfg.dir}/served.json`;
    const server = execa(process.execPath, [BIN, 'mock', 'serve', '--port', '0', '--state', state, '--json'], {
      env: { OPSCTL_CONFIG_DIR: cfg.dir },
      reject: false,
    });
    const info = await new Promise<{ url: string; tracker_token: string }>((resolve, reject) => {
      let buf = '';
      server.stdout.on('data', (c: Buffer) => {
        buf += c.toString();
        if (buf.includes('\n')) resolve(JSON.parse(buf.split('\n')[0]!));
      });
      server.once('exit', () => reject(new Error('mock serve exited early')));
    });
    expect(info.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const env = { OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_TRACKER_URL: info.url, OPSCTL_TRACKER_TOKEN: info.tracker_token };
    expect((await runBin(['tracker', 'labels', 'create', '--name', 'served'], { env })).exitCode).toBe(0);
    const list = await runBin(['tracker', 'labels', 'list', '--json=name'], { env });
    expect(JSON.parse(String(list.stdout))).toEqual([{ name: 'served' }]);
    const noToken = await runBin(['tracker', 'labels', 'list'], { env: { OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_TRACKER_URL: info.url } });
    expect(noToken.exitCode).toBe(4);
    server.kill('SIGTERM');
    const done = await server;
    expect(done.exitCode).toBe(0);
    const saved = JSON.parse(await import('node:fs').then((fs) => fs.readFileSync(state, 'utf8')));
    expect(saved.tracker.labels.map((l: { name: string }) => l.name)).toEqual(['served']);
  });

  it('two concurrent processes creating 50 labels each leave 100 labels', async () => {
    const env = { OPSCTL_CONFIG_DIR: cfg.dir };
    const worker = async (who: string) => {
      for (let i = 0; i < 50; i++) {
        const r = await runBin(['tracker', 'labels', 'create', '--name', `${who}-${i}`], { env });
        if (r.exitCode !== 0) throw new Error(`${who}-${i}: ${String(r.stderr)}`);
      }
    };
    await Promise.all([worker('a'), worker('b')]);
    const list = await runBin(['tracker', 'labels', 'list', '--json=id,name'], { env });
    const labels = JSON.parse(String(list.stdout)) as Array<{ id: number; name: string }>;
    expect(labels).toHaveLength(100);
    expect(new Set(labels.map((l) => l.id)).size).toBe(100);
    expect(new Set(labels.map((l) => l.name)).size).toBe(100);
  }, 180_000);

  it('exits 2 with a clear message on bad input, and nothing is created', async () => {
    const env = { OPSCTL_CONFIG_DIR: cfg.dir };
    const r = await runBin(['tracker', 'labels', 'create', '--name', 'x', '--color', 'red'], { env });
    expect(r.exitCode).toBe(2);
    expect(String(r.stderr)).toContain('--color: is not a hex colour');
    const list = await runBin(['tracker', 'labels', 'list', '--json'], { env });
    expect(JSON.parse(String(list.stdout))).toEqual([]);
  });
});
