import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempConfigDir } from '../helpers/cli.js';
import { requireProgram } from '../helpers/e2e.js';
import { startCluster, type RealTestCluster } from '../framework/index.js';

const PASSWORD = 'kv-auth-test-pw';

/**
 * etcd auth against a real etcd 3.4 member (Debian's) with auth enabled: the gateway's authenticate
 * call and token header, the password sources, and etcdctl getting the same credentials in its
 * environment (a 3.4 snapshot needs an authenticated admin).
 */
describe.runIf(requireProgram('etcd', '/usr/bin/etcd') && requireProgram('etcdctl', '/usr/bin/etcdctl'))(
  'kv with etcd auth (real etcd 3.4, auth enabled)',
  () => {
    const cfg = tempConfigDir('opsctl-kv-auth-');
    let c: RealTestCluster;
    let ep: string;
    const kv = (args: string[], env: Record<string, string> = {}) =>
      runCli(['kv', ...args, '--endpoints', ep], { env: { OPSCTL_CONFIG_DIR: cfg.dir, ...env } });

    beforeAll(async () => {
      c = await startCluster({ members: 'real', size: 1, version: '/usr/bin', ready: 'etcdctl', rootPassword: PASSWORD, configDir: cfg.dir });
      ep = c.endpoints[0]!;
      writeFileSync(join(cfg.dir, 'pw'), `${PASSWORD}\n`, { mode: 0o600 });
    }, 40_000);

    afterAll(async () => {
      await c?.destroy();
      cfg.cleanup();
    });

    it('without --user a write is refused, and the error says how to log in', async () => {
      const r = await kv(['put', 'a', '1']);
      expect(r.code).toBe(4);
      expect(r.stderr).toMatch(/etcd refused the request: .*user name is empty/);
      expect(r.stderr).toMatch(/pass --user NAME/);
    });

    it('--user with the password from OPSCTL_KV_PASSWORD or --password-file: put and get with the token', async () => {
      const put = await kv(['put', 'auth/key', 'v1', '--user', 'root'], { OPSCTL_KV_PASSWORD: PASSWORD });
      expect(put.code, put.stderr).toBe(0);
      const get = await kv(['get', 'auth/key', '--user', 'root', '--password-file', join(cfg.dir, 'pw')]);
      expect(get.code, get.stderr).toBe(0);
      expect(get.stdout.trim()).toBe('v1');
      // The password is in no output.
      expect(put.stdout + put.stderr + get.stdout + get.stderr).not.toContain(PASSWORD);
    });

    it('a wrong password says so; no terminal and no password source is a usage error naming the fix', async () => {
      const wrong = await kv(['get', 'auth/key', '--user', 'root'], { OPSCTL_KV_PASSWORD: 'nope' });
      expect(wrong.code).toBe(4);
      expect(wrong.stderr).toMatch(/etcd refused user root: wrong user name or password/);
      const none = await kv(['get', 'auth/key', '--user', 'root']);
      expect(none.code).toBe(2);
      expect(none.stderr).toMatch(/--user root: no password[\s\S]*--password-file FILE or set OPSCTL_KV_PASSWORD/);
    });

    it('etcdctl gets the credentials in its environment, not its argv: a snapshot (admin only on 3.4) succeeds', async () => {
      const file = join(cfg.dir, 'snap.db');
      const r = await kv(['snapshot', 'save', file, '--via', 'etcdctl', '--user', 'root', '--json'], { OPSCTL_KV_PASSWORD: PASSWORD });
      expect(r.code, r.stderr).toBe(0);
      expect(r.json().via).toBe('etcdctl');
      expect(r.stdout + r.stderr).not.toContain(PASSWORD);
      // Without credentials etcdctl is refused: the credentials above did the work.
      expect(() =>
        execFileSync('/usr/bin/etcdctl', ['--endpoints', ep, 'snapshot', 'save', join(cfg.dir, 'anon.db')], { env: { ETCDCTL_API: '3' }, stdio: 'pipe' }),
      ).toThrow(/user name is empty|permission denied/);
    });
  },
);
