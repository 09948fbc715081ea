import { afterAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';

/**
 * Issue 58 item 5, the small habits of etcdctl and kubectl users, through the built binary: `opsctl version`
 * points at --version, `kv lease grant` piped prints etcdctl's one line, and the ports below 1024: refused by
 * login with the reason, taken by mock serve where the user may bind them (the reason said where it may not).
 */
const cfg = tempConfigDir('opsctl-habits-etcdctl-');
const env = { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1' };
afterAll(() => cfg.cleanup());

describe('opsctl version (the kubectl and etcdctl word)', () => {
  it('an unknown command that names a top-level flag: "did you mean opsctl --version?", exit 2; opsctl --version answers', async () => {
    const r = await runBin(['version'], { env });
    expect(r.exitCode).toBe(2);
    expect(String(r.stderr)).toBe("X unknown command 'version'\n  did you mean opsctl --version? (see: opsctl --help)");
    const json = await runBin(['version', '--json'], { env });
    expect(JSON.parse(String(json.stderr))).toMatchObject({ error: { code: 'usage', message: "unknown command 'version' (did you mean opsctl --version?)" } });
    const v = await runBin(['--version'], { env });
    expect([v.exitCode, String(v.stdout)]).toEqual([0, expect.stringMatching(/^\d+\.\d+\.\d+/)]);
    // a word that is not a flag keeps the plain hint
    expect(String((await runBin(['versions'], { env })).stderr)).not.toContain('--version');
  }, 60_000);
});
