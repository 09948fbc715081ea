import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempConfigDir } from '../helpers/cli.js';
import { startCluster, type KvSandbox } from '../framework/index.js';

describe('kv upgrade --to: bad input before anything else', () => {
  it.each(['4.0', '3.9', '2.1'])('--to %s is not a supported target: exit 2 naming the supported ones', async (to) => {
    const cfg = tempConfigDir();
    try {
      const r = await runCli(['kv', 'upgrade', '--to', to], { env: { OPSCTL_CONFIG_DIR: cfg.dir } });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`--to: ${to} is not a supported target`);
      expect(r.stderr).toContain('3.3 to 3.7 (one hop per minor');
      expect(r.stderr).not.toContain('unexpected error');
    } finally {
      cfg.cleanup();
    }
  });
});

describe('kv upgrade on a simulated 3.3 sandbox', () => {
  let sb: KvSandbox;
  beforeAll(async () => {
    sb = (await startCluster({ members: 'simulated', size: 3, version: '3.3' })).sandbox;
  });
  afterAll(async () => {
    await sb.down();
  });
  const versions = async () => (await sb.kv('version', '--json')).json<Array<{ server: string; cluster: string }>>().map((v) => `${v.server}/${v.cluster}`);

  it('--target-bin on simulated members is refused before any change (exit 2); --to 3.4 plans the 3.4 rulebook', async () => {
    const before = await versions();
    const r = await sb.kv('upgrade', '--to', '3.4', '--yes', '--target-bin', '3.4=/usr/bin');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--target-bin: the sandbox runs simulated members');
    expect(await versions()).toEqual(before);
    expect(sb.journal()).toBeUndefined();
    const dry = await sb.kv('upgrade', '--to', '3.4', '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/Plan: upgrade 3\.3 → 3\.4/);
    expect(dry.stdout).toMatch(/checks \(rulebook of 3\.3 → 3\.4\)/);
    expect(dry.stdout).toContain('[log-outputs]');
  });

  it('--to 3.2 is called a downgrade and points to kv rollback (exit 1, nothing changed)', async () => {
    const before = await versions();
    const r = await sb.kv('upgrade', '--to', '3.2');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('newer than 3.2: that is a downgrade');
    expect(r.stderr).toContain('opsctl kv rollback');
    expect(r.stderr).not.toContain('not 3.1');
    expect(await versions()).toEqual(before);
  });
});
