import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempConfigDir } from '../helpers/cli.js';

const PASSWORD = 'slow-bcrypt-pw-1';

/**
 * A member whose sign-in does not answer in time (etcd checks the password with bcrypt at every
 * sign-in, slowly on a busy member): the verbs say that the sign-in timed out and how to give it longer,
 * not that the member failed a quorum read. A stand-in of etcd 3.4's gateway on port 0 that answers
 * /version and holds /v3/auth/authenticate.
 */
describe('kv: a sign-in that times out is said as such', () => {
  const cfg = tempConfigDir('opsctl-kv-signin-');
  let server: Server;
  let ep: string;
  const held: Array<() => void> = [];
  const seen: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      if (req.url === '/version') {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ etcdserver: '3.4.23', etcdcluster: '3.4.0' }));
      } else if (req.url === '/v3/maintenance/status') {
        // a member that knows its leader (itself): the quorum read is asked of it
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ header: { member_id: '1', revision: '1' }, version: '3.4.23', leader: '1', raftTerm: '2', raftIndex: '9' }));
      } else if (req.url === '/v3/auth/authenticate') {
        // never answered while the test runs; released in afterAll
        held.push(() => res.destroy());
      } else {
        res.statusCode = 404;
        res.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    ep = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const release of held) release();
    await new Promise((resolve) => server.close(resolve));
    cfg.cleanup();
  });

  it('endpoint health and get: the sign-in of the user named, the timeout, --request-timeout as the fix; never the password', async () => {
    for (const verb of [
      ['endpoint', 'health', '-w', 'simple'],
      ['get', 'k'],
    ]) {
      const r = await runCli(['kv', ...verb, '--endpoints', ep, '--user', 'root', '--request-timeout', '300ms'], {
        env: { OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_KV_PASSWORD: PASSWORD },
      });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stdout + r.stderr).toContain(`${ep}: etcd did not answer the sign-in of user root within 300 ms`);
      expect(r.stdout + r.stderr).not.toMatch(/quorum read/);
      expect(r.stderr).toContain('--request-timeout');
      expect(r.stdout + r.stderr).not.toContain(PASSWORD);
    }
    expect(seen).toContain('POST /v3/auth/authenticate');
  });
});
