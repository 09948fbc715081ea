import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCerts {
  dir: string;
  /** The CA the members and clients trust. */
  ca: string;
  /** Server certificate (serverAuth + clientAuth: etcd's gateway and peers use it as a client too) for `hosts`. */
  serverCert: string;
  serverKey: string;
  /** Client certificate signed by the CA (CN opsctl-client by default: not an etcd user). */
  clientCert: string;
  clientKey: string;
  /** Another CA, and a client certificate signed by it (refused by the members). */
  otherCa: string;
  otherClientCert: string;
  otherClientKey: string;
  /** A server certificate of the CA that expired in 2020. */
  expiredCert: string;
  expiredKey: string;
  cleanup(): void;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

/**
 * EC P-256 keys (fast) and certificates made by Debian's openssl CLI in a temp dir.
 * `clientCn`: with --client-cert-auth and auth enabled, etcd takes the user from the client
 * certificate's CN on gRPC (etcdctl) and ignores it on gateway requests, which use the token.
 */
export function makeTestCerts(hosts: { ips?: string[]; dns?: string[] } = { ips: ['127.0.0.1'] }, clientCn = 'opsctl-client'): TestCerts {
  const dir = mkdtempSync(join(tmpdir(), 'opsctl-certs-'));
  const san = [...(hosts.ips ?? []).map((i) => `IP:${i}`), ...(hosts.dns ?? []).map((d) => `DNS:${d}`)].join(',');
  writeFileSync(join(dir, 'server.ext'), `subjectAltName=${san}\nextendedKeyUsage=serverAuth,clientAuth\nbasicConstraints=CA:FALSE\n`);
  writeFileSync(join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n');
  const key = (name: string) => {
    openssl(dir, ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', `${name}.key`]);
    chmodSync(join(dir, `${name}.key`), 0o600);
  };
  const ca = (name: string) => {
    key(name);
    openssl(dir, ['req', '-x509', '-new', '-key', `${name}.key`, '-subj', `/CN=${name}`, '-days', '30', '-out', `${name}.crt`]);
  };
  const sign = (name: string, by: string, ext: string, cn: string) => {
    key(name);
    // An empty cn makes a certificate without a Common Name (etcd 3.4's gateway needs one with client-cert-auth).
    openssl(dir, ['req', '-new', '-key', `${name}.key`, '-subj', cn ? `/CN=${cn}` : '/O=opsctl-client', '-out', `${name}.csr`]);
    openssl(dir, [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${by}.crt`,
      '-CAkey',
      `${by}.key`,
      '-CAcreateserial',
      '-days',
      '30',
      '-extfile',
      ext,
      '-out',
      `${name}.crt`,
    ]);
  };
  ca('test-ca');
  ca('other-ca');
  sign('server', 'test-ca', 'server.ext', 'etcd-member');
  sign('client', 'test-ca', 'client.ext', clientCn);
  sign('other-client', 'other-ca', 'client.ext', 'opsctl-client');
  // An expired one: `openssl ca` takes explicit dates.
  key('expired');
  openssl(dir, ['req', '-new', '-key', 'expired.key', '-subj', '/CN=etcd-member', '-out', 'expired.csr']);
  writeFileSync(join(dir, 'index.txt'), '');
  writeFileSync(join(dir, 'serial'), '1000\n');
  writeFileSync(
    join(dir, 'ca.cnf'),
    '[ca]\ndefault_ca=d\n[d]\ndatabase=index.txt\nnew_certs_dir=.\nserial=serial\ndefault_md=sha256\npolicy=p\n[p]\ncommonName=supplied\n',
  );
  openssl(dir, [
    'ca',
    '-batch',
    '-config',
    'ca.cnf',
    '-cert',
    'test-ca.crt',
    '-keyfile',
    'test-ca.key',
    '-in',
    'expired.csr',
    '-out',
    'expired.crt',
    '-startdate',
    '20200101000000Z',
    '-enddate',
    '20200102000000Z',
    '-notext',
    '-extfile',
    'server.ext',
  ]);
  const p = (f: string) => join(dir, f);
  return {
    dir,
    ca: p('test-ca.crt'),
    serverCert: p('server.crt'),
    serverKey: p('server.key'),
    clientCert: p('client.crt'),
    clientKey: p('client.key'),
    otherCa: p('other-ca.crt'),
    otherClientCert: p('other-client.crt'),
    otherClientKey: p('other-client.key'),
    expiredCert: p('expired.crt'),
    expiredKey: p('expired.key'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
