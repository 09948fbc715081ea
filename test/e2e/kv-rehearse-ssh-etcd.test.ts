import { copyFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { makeTestCerts, type TestCerts } from '../helpers/etcd-certs.js';
import { etcdLadderDirs, PINNED_ETCD } from '../helpers/etcd-releases.js';
import { until } from '../helpers/kv.js';
import { canNetns, hubRunner, type NetnsHosts, netnsHosts } from '../helpers/netns.js';
import { requireSsh, sshHosts, type SshHosts } from '../helpers/sshd.js';
import { writeStandinSystemctl } from '../helpers/standin-systemctl.js';

const dirs = etcdLadderDirs();
/** Where every host keeps its member: the same path on each, a directory of its own there (sshHosts' `own`), empty here. */
const AT = '/srv';
const atIsFree = existsSync(AT) && readdirSync(AT).length === 0;
const ok = Boolean(dirs) && canNetns('kv rehearsal of members on other hosts') && requireSsh() && atIsFree;

/**
 * The rehearsal of members on other hosts (issue kv-rehearse, item 4): three hosts, each a network namespace with a
 * real OpenSSH server whose sessions see a filesystem of their own at /srv (a mount namespace per host: each host's
 * etcd keeps its data at the SAME path, /srv/etcd/data, and its certificate and key at /srv/etcd/tls, as real hosts
 * do; this machine's /srv stays empty). The members speak TLS with client and peer certificates (client-cert-auth):
 * their keys are brought here only with --rehearsal-copy-keys; without it the plan says why it does not rehearse. The
 * systemd preset over ssh (a STAND-IN `systemctl` on the sessions' PATH starts the unit's etcd, as in
 * kv-paths-ssh-etcd.test.ts). opsctl brings every member's files here under one pause of all three (each host holds
 * its pause until every copy is in), starts the clone's members here, each in a mount namespace of its own where its
 * copies are mounted over /srv/etcd/…, and runs the whole plan on them before the first stop; then the upgrade.
 */
describe.runIf(ok)(`the rehearsal of TLS members on other hosts, the same paths on each (ssh, real ${PINNED_ETCD['3.5']} → ${PINNED_ETCD['3.6']})`, () => {
  let hosts: NetnsHosts;
  let ssh: SshHosts;
  let certs: TestCerts;
  const tls = () => ['--cacert', certs.ca, '--cert', certs.clientCert, '--key', certs.clientKey];
  const cfg = tempConfigDir('opsctl-rehearse-ssh-');
  const standin = join(cfg.dir, 'standin-bin');
  const own = (i: number) => join(cfg.dir, `host${i + 1}`);
  const inHub = hubRunner(
    () => hosts.hub,
    () => cfg.dir,
    600_000,
  );
  // (opsctl's temporary files in a directory of this test's: other files' rehearsals run meanwhile)
  const tmp = join(cfg.dir, 'tmp');
  const opsctl = (...args: string[]) => inHub('env', [`TMPDIR=${tmp}`, process.execPath, BIN, ...args]);
  const endpoints = () => hosts.addrs.map((a) => `https://${a}:2379`);
  const version = async (i: number) => {
    const r = await inHub('curl', ['-sS', '--max-time', '2', ...tls(), `${endpoints()[i]}/version`], 10_000);
    return /"etcdserver":"([^"]+)"/.exec(String(r.stdout))?.[1];
  };

  beforeAll(async () => {
    hosts = netnsHosts(3, 'kvrsh', 216);
    mkdirSync(tmp, { recursive: true });
    certs = makeTestCerts({ ips: hosts.addrs });
    const bins: Record<string, string> = { '3.5': dirs!.v35, '3.6': dirs!.v36 };
    writeStandinSystemctl(standin, { bins, memberDir: `${AT}/etcd`, test: 'kv-rehearse-ssh' });
    const cluster = hosts.addrs.map((a, i) => `etcd${i + 1}=https://${a}:2380`).join(',');
    const security = [
      `  cert-file: ${AT}/etcd/tls/server.crt`,
      `  key-file: ${AT}/etcd/tls/server.key`,
      `  trusted-ca-file: ${AT}/etcd/tls/ca.crt`,
      '  client-cert-auth: true',
    ];
    hosts.addrs.forEach((a, i) => {
      mkdirSync(join(own(i), 'etcd', 'tls'), { recursive: true });
      copyFileSync(certs.serverCert, join(own(i), 'etcd', 'tls', 'server.crt'));
      copyFileSync(certs.serverKey, join(own(i), 'etcd', 'tls', 'server.key'));
      copyFileSync(certs.ca, join(own(i), 'etcd', 'tls', 'ca.crt'));
      writeFileSync(
        join(own(i), 'etcd', 'etcd.yaml'),
        [
          `name: etcd${i + 1}`,
          `data-dir: ${AT}/etcd/data`,
          `listen-client-urls: https://${a}:2379`,
          `advertise-client-urls: https://${a}:2379`,
          `listen-peer-urls: https://${a}:2380`,
          `initial-advertise-peer-urls: https://${a}:2380`,
          `initial-cluster: ${cluster}`,
          'initial-cluster-state: new',
          'initial-cluster-token: opsctl-rehearse-ssh',
          'client-transport-security:',
          ...security,
          'peer-transport-security:',
          ...security,
          '',
        ].join('\n'),
      );
    });
    ssh = await sshHosts(
      hosts,
      () => ({ PATH: `${standin}:/usr/local/bin:/usr/bin:/bin` }),
      (i) => [own(i), AT],
    );
    for (let i = 0; i < 3; i++) expect((await ssh.run(i, 'systemctl start etcd-3.5')).exitCode).toBe(0);
    await until(async () => (await opsctl('kv', 'health', '--endpoints', endpoints().join(','), ...tls())).exitCode === 0, 120_000, 'three 3.5 members');
  }, 300_000);

  afterAll(async () => {
    for (let i = 0; i < 3; i++) await ssh?.run(i, 'systemctl stop etcd-3.5');
    await ssh?.stop();
    hosts?.destroy();
    certs?.cleanup();
    cfg.cleanup();
  }, 120_000);

  it('rehearses the plan on the members brought here with their keys when told to (each in its own mounts), then upgrades; nothing left here', async () => {
    const file = join(cfg.dir, 'cluster.yaml');
    writeFileSync(
      file,
      [
        'members:',
        ...hosts.addrs.map((a, i) => `  - { name: etcd${i + 1}, endpoint: "https://${a}:2379", host: "${a}" }`),
        `tls: { cacert: ${certs.ca}, cert: ${certs.clientCert}, key: ${certs.clientKey} }`,
        'driver:',
        '  type: systemd',
        '  units: { "3.5": etcd-3.5, "3.6": etcd-3.6 }',
        `  ssh: ${ssh.ssh}`,
        '  sudo: false',
        `  bins: { "3.6": "${dirs!.v36}/etcd" }`,
        `  binLink: ${AT}/etcd/etcd-bin`,
        '',
      ].join('\n'),
    );
    const put = await inHub(join(dirs!.v35, 'etcdctl'), ['--endpoints', endpoints().join(','), ...tls(), 'put', 'before/rehearsal', 'kept']);
    expect(put.exitCode, String(put.stderr)).toBe(0);
    const pids = await Promise.all([0, 1, 2].map((i) => ssh.run(i, `cat ${AT}/etcd/pid`).then((r) => r.stdout.trim())));

    // without --rehearsal-copy-keys: their keys stay on their hosts, and the plan says so
    const dry = await opsctl('kv', 'upgrade', '--to', '3.6', '--dry-run', '--no-backup', '--cluster', file);
    expect(`${String(dry.stdout)}${String(dry.stderr)}`).toMatch(
      /rehearsal: not run \(etcd1 runs with certificates, whose keys never leave its host unless you say so \(--rehearsal-copy-keys/,
    );
    // with it: the plan says it will rehearse (not "not run: on another host")
    const keys = await opsctl('kv', 'upgrade', '--to', '3.6', '--dry-run', '--no-backup', '--rehearsal-copy-keys', '--cluster', file);
    expect(`${String(keys.stdout)}${String(keys.stderr)}`).toMatch(
      /rehearsal: before the first stop, the whole plan \(3\.5 → 3\.6\) runs on a clone of the cluster/,
    );

    // --rehearsal-max-copy 0: the operator's way on without a rehearsal (each member's trials the proof)
    const none = await opsctl(
      'kv',
      'upgrade',
      '--to',
      '3.6',
      '--dry-run',
      '--no-backup',
      '--rehearsal-copy-keys',
      '--rehearsal-max-copy',
      '0',
      '--cluster',
      file,
    );
    expect(`${String(none.stdout)}${String(none.stderr)}`).toMatch(
      /rehearsal: not run \(--rehearsal-max-copy 0: no copy, no rehearsal\); each member's own trials are the proof/,
    );

    // --rehearse alone: the clone only, the cluster untouched
    const alone = await opsctl('kv', 'upgrade', '--to', '3.6', '--rehearse', '--rehearsal-copy-keys', '--yes', '--no-backup', '--cluster', file);
    const said = `${String(alone.stdout)}\n${String(alone.stderr)}`;
    expect(alone.exitCode, said).toBe(0);
    expect(said).toMatch(/rehearsal: passed on a clone of the cluster in [\d.]+ s \(copy [\d.]+ s\): 3\.5 → 3\.6/);
    process.stderr.write(`[kv rehearse ssh] ${/rehearsal: passed[^\n]*/.exec(said)?.[0]}\n`);
    expect(await Promise.all([0, 1, 2].map((i) => ssh.run(i, `cat ${AT}/etcd/pid`).then((r) => r.stdout.trim())))).toEqual(pids);
    expect(await Promise.all([0, 1, 2].map(version))).toEqual([PINNED_ETCD['3.5'], PINNED_ETCD['3.5'], PINNED_ETCD['3.5']]);
    // nothing left here: this machine's /srv as it was, no copy, no clone's member
    expect(readdirSync(AT)).toEqual([]);
    expect(readdirSync(tmp).filter((f) => f.startsWith('opsctl-rehearsal-'))).toEqual([]);

    // the upgrade reuses the verdict and runs
    const up = await opsctl('kv', 'upgrade', '--to', '3.6', '--yes', '--no-backup', '--rehearsal-copy-keys', '--cluster', file);
    const upSaid = `${String(up.stdout)}\n${String(up.stderr)}`;
    expect(up.exitCode, upSaid).toBe(0);
    expect(upSaid).toMatch(/rehearsal: passed \d+ min ago .* reused/);
    expect(await Promise.all([0, 1, 2].map(version))).toEqual([PINNED_ETCD['3.6'], PINNED_ETCD['3.6'], PINNED_ETCD['3.6']]);
    const got = await inHub(join(dirs!.v36, 'etcdctl'), ['--endpoints', endpoints().join(','), ...tls(), 'get', 'before/rehearsal', '--print-value-only']);
    expect(String(got.stdout).trim()).toBe('kept');
    expect(readdirSync(AT)).toEqual([]);
  }, 600_000);
});
