import { existsSync } from 'node:fs';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { PtySession, SCRIPT } from '../helpers/pty.js';

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

// Debian's etcd 3.4 and its etcdctl (the simulated members serve no leases)
const etcd = existsSync('/usr/bin/etcd') && existsSync('/usr/bin/etcdctl');
describe.runIf(etcd)('kv lease grant: one line piped, as etcdctl prints it (a sandbox of real etcd 3.4)', () => {
  beforeAll(async () => {
    const up = await runBin(['kv', 'sandbox', 'up', '--members', '1', '--etcd-bin', '/usr/bin'], { env, timeout: 120_000 });
    expect(up.exitCode, String(up.stderr)).toBe(0);
  }, 150_000);
  afterAll(async () => {
    await runBin(['kv', 'sandbox', 'down'], { env, timeout: 120_000 });
  }, 150_000);

  it('piped: "lease <16 hex> granted with TTL(60s)" and nothing else; --json and --jq .id the fields; on a terminal the id and TTL as a record', async () => {
    const piped = await runBin(['kv', 'lease', 'grant', '60'], { env });
    expect(piped.exitCode, String(piped.stderr)).toBe(0);
    expect(String(piped.stdout)).toMatch(/^lease [0-9a-f]{16} granted with TTL\(60s\)$/);
    // the shape of etcdctl's own line, word for word but the id
    const endpoint = String((await runBin(['kv', 'sandbox', 'status', '--jq', '.[0].endpoint'], { env })).stdout).trim();
    const theirs = await execa('/usr/bin/etcdctl', ['--endpoints', endpoint, 'lease', 'grant', '60'], { env: { ETCDCTL_API: '3' }, extendEnv: false });
    expect(String(theirs.stdout).replace(/[0-9a-f]{16}/, 'ID')).toBe(String(piped.stdout).replace(/[0-9a-f]{16}/, 'ID'));
    // what a script written for etcdctl does with it
    const id = String(piped.stdout).split(' ')[1]!;
    const ttl = await runBin(['kv', 'lease', 'timetolive', id, '-w', 'simple'], { env });
    expect(String(ttl.stdout)).toMatch(new RegExp(`^lease ${id} granted with TTL\\(60s\\), remaining\\(\\d+s\\)$`));
    const json = await runBin(['kv', 'lease', 'grant', '60', '--json'], { env });
    expect(JSON.parse(String(json.stdout))).toEqual({ id: expect.stringMatching(/^[0-9a-f]{16}$/), ttl: 60 });
    expect(String((await runBin(['kv', 'lease', 'grant', '60', '--jq', '.id'], { env })).stdout)).toMatch(/^[0-9a-f]{16}$/);
    if (!existsSync(SCRIPT)) return;
    const tty = PtySession.opsctl(['kv', 'lease', 'grant', '60'], { env });
    try {
      expect(await tty.exitCode()).toBe(0);
      expect(tty.text).toMatch(/^id +[0-9a-f]{16}\nttl +60\n?$/m);
      expect(tty.text).not.toContain('granted with');
    } finally {
      tty.kill();
    }
  }, 120_000);
});
