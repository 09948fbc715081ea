import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempConfigDir } from '../helpers/cli.js';
import { kvSandbox } from '../helpers/kv.js';

describe('kv upgrade --to: bad input before anything else', () => {
  it.each(['4.0', '3.9', '2.1'])('--to %s is not a supported target: exit 2 naming the supported ones', async (to) => {
    const cfg = tempConfigDir();
    try {
      const r = await runCli(['kv', 'upgrade', '--to', to], { env: { OPSCTL_CONFIG_DIR: cfg.dir } });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`--to: ${to} is not a supported target`);
      expect(r.stderr).toContain('3.3 (from 3.2), 3.4 (from 3.3)');
      expect(r.stderr).not.toContain('unexpected error');
    } finally {
      cfg.cleanup();
    }
  });
});

describe('kv upgrade on a simulated 3.3 sandbox', () => {
  let sb: ReturnType<typeof kvSandbox>;
  beforeAll(async () => {
    sb = kvSandbox();
    const up = await sb.kv('sandbox', 'up', '--members', '3', '--kv-version', '3.3', '--heartbeat', '50ms');
    expect(up.code, up.stderr).toBe(0);
  });
  afterAll(async () => {
    await sb.down();
  });
  const versions = async () => (await sb.kv('version', '--json')).json<Array<{ server: string; cluster: string }>>().map((v) => `${v.server}/${v.cluster}`);

  it('--to 3.4 is refused before any change: simulated members cannot run 3.4 (exit 2)', async () => {
    const before = await versions();
    const r = await sb.kv('upgrade', '--to', '3.4', '--yes');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('cannot start 3.4 members');
    expect(r.stderr).toContain('--etcd-bin');
    expect(await versions()).toEqual(before);
    expect(sb.journal()).toBeUndefined();
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
