import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { requireProgram } from '../helpers/e2e.js';
import { makeTestCerts, type TestCerts } from '../helpers/etcd-certs.js';
import { startCluster, type RealTestCluster } from '../framework/index.js';

const PASSWORD = 'tls-auth-Root-7';

/**
 * etcdctl's ETCDCTL_USER path on a client-certificate TLS cluster with auth enabled (real etcd 3.4,
 * the built binary). etcd 3.4 refuses JSON-gateway requests from a certificate with a Common Name
 * while client-cert-auth is on, so opsctl gets a certificate without one (same CA): the certificate
 * alone is then no user and is refused a snapshot (admin only on 3.4); with --user root, etcdctl
 * gets ETCDCTL_USER next to the TLS flags and takes it.
 */
describe.runIf(requireProgram('etcd', '/usr/bin/etcd') && requireProgram('etcdctl', '/usr/bin/etcdctl'))(
  'kv snapshot via etcdctl on a TLS cluster with auth (real etcd 3.4, built binary)',
  () => {
    const cfg = tempConfigDir('opsctl-kv-authtls-');
    let certs: TestCerts;
    let c: RealTestCluster;
    let ep: string;
    const tls = () => ['--cacert', certs.ca, '--cert', certs.clientCert, '--key', certs.clientKey];
    const opsctl = (args: string[], env: Record<string, string | undefined> = {}) =>
      runBin(args, {
        env: { OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_KV_PASSWORD: undefined, OPSCTL_KV_PASSWORD_FILE: undefined, ...env },
        timeout: 120_000,
      });

    beforeAll(async () => {
      certs = makeTestCerts({ ips: ['127.0.0.1'] }, '');
      c = await startCluster({ members: 'real', size: 1, version: '/usr/bin', tls: certs, ready: 'etcdctl', rootPassword: PASSWORD, configDir: cfg.dir });
      ep = c.endpoints[0]!;
      expect(ep).toMatch(/^https:/);
    }, 40_000);
    afterAll(async () => {
      await c?.destroy();
      certs?.cleanup();
      cfg.cleanup();
    });

    it('the certificate alone (no CN: no user) is refused the snapshot by etcdctl', () => {
      expect(() => c.real.etcdctl('/usr/bin', ['snapshot', 'save', join(cfg.dir, 'cert-only.db')])).toThrow(/user name is empty|permission denied/i);
    });

    it('--user root over TLS: etcdctl takes the snapshot with ETCDCTL_USER next to the TLS flags; the password is in no output', async () => {
      const file = join(cfg.dir, 'snap.db');
      const r = await opsctl(['kv', 'snapshot', 'save', file, '--endpoints', ep, ...tls(), '--via', 'etcdctl', '--user', 'root', '--json'], {
        OPSCTL_KV_PASSWORD: PASSWORD,
      });
      expect(r.exitCode, String(r.stderr)).toBe(0);
      expect(JSON.parse(String(r.stdout))).toMatchObject({ via: 'etcdctl' });
      expect(existsSync(file) && statSync(file).size).toBeGreaterThan(0);
      expect(String(r.stdout) + String(r.stderr)).not.toContain(PASSWORD);
    });

    it('a wrong password over TLS is refused by name (the certificate does not stand in for it)', async () => {
      const r = await opsctl(['kv', 'snapshot', 'save', join(cfg.dir, 'bad.db'), '--endpoints', ep, ...tls(), '--via', 'etcdctl', '--user', 'root'], {
        OPSCTL_KV_PASSWORD: 'not-the-password',
      });
      expect(r.exitCode).not.toBe(0);
      expect(r.exitCode).toBe(4);
      expect(String(r.stderr)).toMatch(/etcd refused user root: wrong user name or password/);
      expect(String(r.stderr)).not.toContain('not-the-password');
      expect(existsSync(join(cfg.dir, 'bad.db'))).toBe(false);
    });
  },
);

describe.runIf(requireProgram('etcd', '/usr/bin/etcd') && requireProgram('etcdctl', '/usr/bin/etcdctl'))(
  'a client certificate with a CN on etcd 3.4 with client-cert-auth and auth (built binary)',
  () => {
    const cfg = tempConfigDir('opsctl-kv-authcn-');
    let certs: TestCerts;
    let c: RealTestCluster;

    beforeAll(async () => {
      certs = makeTestCerts({ ips: ['127.0.0.1'] }, 'root');
      c = await startCluster({ members: 'real', size: 1, version: '/usr/bin', tls: certs, ready: 'etcdctl', rootPassword: PASSWORD, configDir: cfg.dir });
    }, 40_000);
    afterAll(async () => {
      await c?.destroy();
      certs?.cleanup();
      cfg.cleanup();
    });

    it('etcdctl is root by the CN alone; opsctl --user through the gateway is refused by etcd, and the error says which certificate to use', async () => {
      expect(c.real.etcdctl('/usr/bin', ['put', 'cn/key', 'v'])).toMatch(/OK/);
      const r = await runBin(
        ['kv', 'get', 'cn/key', '--endpoints', c.endpoints[0]!, '--cacert', certs.ca, '--cert', certs.clientCert, '--key', certs.clientKey, '--user', 'root'],
        {
          env: { OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_KV_PASSWORD: PASSWORD, OPSCTL_KV_PASSWORD_FILE: undefined },
          timeout: 60_000,
        },
      );
      expect(r.exitCode).toBe(1);
      expect(String(r.stderr)).toMatch(/etcd refuses JSON-gateway requests from a client certificate with a Common Name \(CN\) while --client-cert-auth is on/);
      expect(String(r.stderr)).toMatch(/without a CN, and log in with --user NAME/);
      expect(String(r.stderr)).not.toContain(PASSWORD);
    });
  },
);
