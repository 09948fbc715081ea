import { chmodSync, copyFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempConfigDir } from '../helpers/cli.js';
import { makeTestCerts, type TestCerts } from '../helpers/etcd-certs.js';
import { startCluster, type RealTestCluster } from '../framework/index.js';
import { requireProgram } from '../helpers/e2e.js';
import { until } from '../helpers/kv.js';

/**
 * TLS of every kv request against real TLS servers (node:https with client-certificate checks, the
 * way etcd's --client-cert-auth does it) and certificates made by openssl: each failure names its
 * cause and the flag that fixes it. (Without openssl every test skips, and so the hooks of the file do not run.)
 */
let certs: TestCerts;
const servers: Server[] = [];
const cfg = tempConfigDir('opsctl-kv-tls-');
const env = { OPSCTL_CONFIG_DIR: cfg.dir };
let good: string;
let expired: string;

/** A member's /version, status and quorum read (what kv health asks) over TLS that asks for a client certificate from the CA. */
async function member(cert: string, key: string): Promise<string> {
  const srv = createServer(
    {
      cert: await import('node:fs').then((fs) => fs.readFileSync(cert)),
      key: (await import('node:fs')).readFileSync(key),
      ca: (await import('node:fs')).readFileSync(certs.ca),
      requestCert: true,
      rejectUnauthorized: true,
    },
    (req, res) => {
      const answers: Record<string, string> = {
        '/version': '{"etcdserver":"3.3.27","etcdcluster":"3.3.0"}',
        '/v3beta/maintenance/status': '{"header":{"member_id":"11","revision":"1"},"version":"3.3.27","leader":"11","raftIndex":"5"}',
        '/v3beta/kv/range': '{"header":{"revision":"1"},"count":"0"}',
      };
      const body = Object.hasOwn(answers, req.url ?? '') ? answers[req.url!]! : undefined;
      res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' }).end(body ?? '{"error":"not found"}');
    },
  );
  servers.push(srv);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return String((srv.address() as AddressInfo).port);
}

beforeAll(async () => {
  certs = makeTestCerts({ ips: ['127.0.0.1'] });
  good = await member(certs.serverCert, certs.serverKey);
  expired = await member(certs.expiredCert, certs.expiredKey);
});

afterAll(async () => {
  for (const s of servers) await new Promise((r) => s.close(r));
  certs.cleanup();
  cfg.cleanup();
});

const health = (endpoint: string, ...flags: string[]) => runCli(['kv', 'health', '--endpoints', endpoint, ...flags], { env });
const tlsFlags = () => ['--cacert', certs.ca, '--cert', certs.clientCert, '--key', certs.clientKey];

describe.runIf(requireProgram('openssl', '/usr/bin/openssl'))('kv over TLS (https endpoints, --cacert/--cert/--key)', () => {
  it('a member that checks client certificates answers with the CA, certificate and key given', async () => {
    const r = await health(`https://127.0.0.1:${good}`, ...tlsFlags(), '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()[0]).toMatchObject({ healthy: true });
  });

  it("the same settings from the environment (CI) and from a cluster file's tls block", async () => {
    const e = await runCli(['kv', 'health', '--endpoints', `https://127.0.0.1:${good}`], {
      env: { ...env, OPSCTL_KV_CACERT: certs.ca, OPSCTL_KV_CERT: certs.clientCert, OPSCTL_KV_KEY: certs.clientKey },
    });
    expect(e.code, e.stderr).toBe(0);
    // Paths in the file are relative to the file.
    for (const f of ['test-ca.crt', 'client.crt', 'client.key']) copyFileSync(join(certs.dir, f), join(cfg.dir, f));
    chmodSync(join(cfg.dir, 'client.key'), 0o600);
    const file = join(cfg.dir, 'cluster.yaml');
    writeFileSync(
      file,
      `members:\n  - {name: m1, endpoint: "https://127.0.0.1:${good}"}\ntls:\n  cacert: test-ca.crt\n  cert: client.crt\n  key: client.key\n`,
    );
    const c = await runCli(['kv', 'health', '--cluster', file], { env });
    expect(c.code, c.stderr).toBe(0);
  });

  it('an unknown CA: says so and names --cacert', async () => {
    const r = await health(`https://127.0.0.1:${good}`, '--cert', certs.clientCert, '--key', certs.clientKey, '--json');
    expect(r.code).toBe(1);
    const d = r.json()[0].detail as string;
    expect(d).toMatch(/unknown CA/);
    expect(d).toContain('--cacert');
  });

  it('a certificate for another host name: the server name is verified against the endpoint', async () => {
    const r = await health(`https://localhost:${good}`, ...tlsFlags(), '--json');
    expect(r.code).toBe(1);
    const d = r.json()[0].detail as string;
    expect(d).toMatch(/not valid for localhost/);
    expect(d).toContain('IP Address:127.0.0.1');
    expect(d).toContain('--endpoints');
  });

  it('an expired server certificate', async () => {
    const r = await health(`https://127.0.0.1:${expired}`, ...tlsFlags(), '--json');
    expect(r.code).toBe(1);
    const d = r.json()[0].detail as string;
    expect(d).toMatch(/has expired/);
    expect(d).toContain('--insecure-skip-tls-verify');
  });

  it('no client certificate, or one from another CA: the server refused it, and --cert/--key fix it', async () => {
    const none = await health(`https://127.0.0.1:${good}`, '--cacert', certs.ca, '--json');
    expect(none.code).toBe(1);
    expect(none.json()[0].detail).toMatch(/refused.*client certificate[\s\S]*--cert FILE --key FILE/);
  });

  it('http:// to a TLS port and https:// to a plain one say which scheme to write', async () => {
    const r = await health(`http://127.0.0.1:${good}`, '--json');
    expect(r.code).toBe(1);
    // node:https answers a plain request by closing the connection; etcd (Go) answers HTTP 400.
    expect(r.json()[0].detail).toMatch(/127\.0\.0\.1/);
  });

  it('--insecure-skip-tls-verify is explicit and warned about; it still sends the client certificate', async () => {
    const r = await health(`https://localhost:${good}`, '--cert', certs.clientCert, '--key', certs.clientKey, '--insecure-skip-tls-verify');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/insecure-skip-tls-verify: the members' certificates are not checked/);
  });

  describe.runIf(requireProgram('etcd', '/usr/bin/etcd'))('against a real etcd 3.4 member with --client-cert-auth', () => {
    let etcd: RealTestCluster;
    beforeAll(async () => {
      etcd = await startCluster({ members: 'real', configDir: cfg.dir, size: 1, tls: certs });
      etcd.real.start(etcd.members[0]!, '/usr/bin');
      await until(async () => (await health(etcd.endpoints[0]!, ...tlsFlags())).code === 0, 30_000, 'the TLS etcd member to answer');
    }, 40_000);
    afterAll(async () => await etcd?.destroy());

    it('answers with the right certificates; refuses a client certificate from another CA, naming --cert/--key', async () => {
      const ok = await runCli(['kv', 'version', '--endpoints', etcd.endpoints[0]!, ...tlsFlags(), '--json'], { env });
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.json()[0].server).toMatch(/^3\.4\./);
      const other = await health(etcd.endpoints[0]!, '--cacert', certs.ca, '--cert', certs.otherClientCert, '--key', certs.otherClientKey, '--json');
      expect(other.code).toBe(1);
      expect(other.json()[0].detail).toMatch(/refused the client certificate[\s\S]*--cert FILE --key FILE/);
      const none = await health(etcd.endpoints[0]!, '--cacert', certs.ca, '--json');
      expect(none.json()[0].detail).toMatch(/refused.*client certificate[\s\S]*--cert FILE --key FILE/);
    });
  });

  it('a key file readable by group or others is warned about', async () => {
    const loose = join(cfg.dir, 'loose.key');
    copyFileSync(certs.clientKey, loose);
    chmodSync(loose, 0o644);
    const r = await health(`https://127.0.0.1:${good}`, '--cacert', certs.ca, '--cert', certs.clientCert, '--key', loose);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`the key file ${loose} is readable by group and others (mode 0644): chmod 600 ${loose}`);
  });

  it('opsctl help environment documents the CI variables', async () => {
    const r = await runCli(['help', 'environment'], { env });
    expect(r.code).toBe(0);
    for (const v of [
      'OPSCTL_KV_CACERT',
      'OPSCTL_KV_CERT',
      'OPSCTL_KV_KEY',
      'OPSCTL_KV_INSECURE_SKIP_TLS_VERIFY',
      'OPSCTL_KV_USER',
      'OPSCTL_KV_PASSWORD',
      'OPSCTL_KV_PASSWORD_FILE',
    ])
      expect(r.stdout + r.stderr).toContain(v);
  });

  it('bad TLS flags are usage errors naming the flag, before any request', async () => {
    const half = await health(`https://127.0.0.1:${good}`, '--cacert', certs.ca, '--cert', certs.clientCert);
    expect(half.code).toBe(2);
    expect(half.stderr).toMatch(/--cert needs --key/);
    const missing = await health(`https://127.0.0.1:${good}`, '--cacert', join(cfg.dir, 'nope.crt'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--cacert: \S*nope\.crt does not exist/);
    expect(missing.stderr).toContain('check the path');
    expect(missing.stderr).not.toContain('ENOENT');
    const badFile = join(cfg.dir, 'bad.yaml');
    writeFileSync(badFile, `members:\n  - {name: m1, endpoint: "https://127.0.0.1:${good}"}\ntls:\n  cafile: x\n`);
    const unknown = await runCli(['kv', 'health', '--cluster', badFile], { env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/tls/);
  });
});
