import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { BIN, runBin } from '../helpers/bin.js';

/** `opsctl mock serve` flags for the tracker's plan entitlements (the built binary, a state file). */
async function serve(dir: string, args: string[]) {
  const child = execa(process.execPath, [BIN, 'mock', 'serve', '--port', '0', '--state', join(dir, 'state.json'), '--json', ...args], {
    env: { NO_COLOR: '1', OPSCTL_CONFIG_DIR: dir },
    reject: false,
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  const started = Date.now();
  while (!out.includes('\n')) {
    if (child.exitCode !== null || Date.now() - started > 30_000) throw new Error(`mock serve did not start (run npm run build first): ${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    child,
    info: JSON.parse(out.split('\n')[0]!) as { url: string; tracker_token: string; tracker_entitlements: { groups: number; objectives: number } },
  };
}

describe('mock serve --tracker-max-groups / --tracker-max-objectives', () => {
  it('limits groups and objectives with 403 UnusableEntitlementError, and a restart with other flags changes the stored limits', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'opsctl-e2e-ent-'));
    try {
      const { child, info } = await serve(dir, ['--tracker-max-groups', '1', '--tracker-max-objectives', '2']);
      expect(info.tracker_entitlements).toEqual({ groups: 1, objectives: 2 });
      const env = { OPSCTL_CONFIG_DIR: dir, OPSCTL_TRACKER_URL: info.url, OPSCTL_TRACKER_TOKEN: info.tracker_token };
      expect((await runBin(['tracker', 'groups', 'create', '--name', 'One', '--mention-name', 'one'], { env })).exitCode).toBe(0);
      const second = await runBin(['tracker', 'groups', 'create', '--name', 'Two', '--mention-name', 'two'], { env });
      expect(second.exitCode).toBe(1);
      expect(String(second.stderr)).toMatch(/entitlement \(1 active groups\)/);
      // the seeded objective ("Grow adoption") is one of the 2
      expect((await runBin(['tracker', 'objectives', 'create', '--name', 'a'], { env })).exitCode).toBe(0);
      expect((await runBin(['tracker', 'objectives', 'create', '--name', 'b'], { env })).exitCode).toBe(1);
      child.kill('SIGTERM');
      await child;

      const again = await serve(dir, ['--tracker-max-groups', '5']);
      expect(again.info.tracker_entitlements).toEqual({ groups: 5, objectives: 2 });
      again.child.kill('SIGTERM');
      await again.child;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('refuses a value that is not a positive whole number (exit 2, naming the flag)', async () => {
    const r = await runBin(['mock', 'serve', '--memory', '--port', '0', '--tracker-max-groups', 'lots']);
    expect(r.exitCode).toBe(2);
    expect(String(r.stderr)).toContain('--tracker-max-groups: "lots" is not a positive whole number');
  });
});
