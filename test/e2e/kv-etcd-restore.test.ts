import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { makeTestCerts, type TestCerts } from '../helpers/etcd-certs.js';
import { startCluster, type RealTestCluster, type SimulatedTestCluster } from '../framework/index.js';
import { etcdReleaseDirs } from '../helpers/etcd-releases.js';
import { readJournal } from '../helpers/kv.js';

const releases = etcdReleaseDirs();
type RealCluster = RealTestCluster['real'];

/**
 * The way back on real etcd: a 3-member sandbox of etcd 3.2.32 (the local driver), an upgrade to
 * 3.3.27 whose first start fails (--on-failure rollback puts the member back), the finished upgrade,
 * then `kv restore` from the journal's restore point back to 3.2.32. All through the built binary.
 */
describe.runIf(releases)('kv restore and --on-failure rollback: real etcd 3.2.32 → 3.3.27 → back (the built binary)', () => {
  const cfg = tempConfigDir('opsctl-kv-restore-');
  const env = { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1' };
  const opsctl = (...args: string[]) => runBin(args, { env, timeout: 180_000 });
  const FAST = ['--poll-interval', '100ms', '--healthy-timeout', '60s', '--stop-timeout', '30s'];
  let endpoints: string[] = [];
  const etcdctl = (bin: string, ...args: string[]) =>
    execFileSync(join(bin, 'etcdctl'), ['--endpoints', endpoints.join(','), '--dial-timeout', '5s', '--command-timeout', '15s', ...args], {
      env: { PATH: '/usr/bin:/bin', ETCDCTL_API: '3' },
      stdio: 'pipe',
    }).toString();
  const servers = async () => JSON.parse(String((await opsctl('kv', 'version', '--json')).stdout)) as Array<{ server: string; cluster: string }>;
  const sandboxMembers = () =>
    JSON.parse(String(execFileSync('cat', [join(cfg.dir, 'data', 'kv', 'sandbox', 'sandbox.json')]))).members as Array<{ name: string; dataDir: string }>;

  let sandbox: SimulatedTestCluster | undefined;

  beforeAll(async () => {
    sandbox = await startCluster({ members: 'simulated', size: 3, etcdBin: releases!.v32, configDir: cfg.dir });
    endpoints = sandbox.endpoints;
    for (let i = 0; i < 30; i++) etcdctl(releases!.v32, 'put', `before/${String(i).padStart(2, '0')}`, `value-${i}`);
    // A few overwrites: the snapshot's total key count (revisions) differs from its live keys.
    for (let i = 0; i < 5; i++) etcdctl(releases!.v32, 'put', 'before/00', `rewritten-${i}`);
  }, 300_000);

  afterAll(async () => {
    await sandbox?.destroy();
    cfg.cleanup();
  }, 300_000);

  it('--on-failure rollback: a 3.3 binary that exits at start; the member is put back on 3.2.32 with its data, exit 3, the cluster healthy on 3.2', async () => {
    // The injected failure: a release directory whose etcd exits at once (its etcdctl is the real one).
    const broken = join(cfg.dir, 'broken-3.3');
    mkdirSync(broken);
    // it names its version like the real 3.3.27 (opsctl checks a target binary's version before any stop), then fails to start
    writeFileSync(
      join(broken, 'etcd'),
      `#!/bin/sh\n[ "$1" = --version ] && exec ${join(releases!.v33, 'etcd')} --version\necho "etcdmain: injected start failure" >&2\nexit 1\n`,
      { mode: 0o755 },
    );
    symlinkSync(join(releases!.v33, 'etcdctl'), join(broken, 'etcdctl'));
    // the trial start refuses it first, before anything stops, quoting it
    const tried = await opsctl('kv', 'upgrade', '--to', '3.3', '--yes', '--target-bin', broken, '--settle', '0s', '--on-failure', 'rollback', ...FAST);
    expect(tried.exitCode, String(tried.stderr)).toBe(1);
    expect(String(tried.stderr)).toMatch(/\[trial-start\] member kv\d: etcd 3\.3\.27 exited \(1\) in \d+ ms: "etcdmain: injected start failure"/);
    expect((await servers()).map((x) => x.server)).toEqual(['3.2.32', '3.2.32', '3.2.32']);
    // the operator overrides it (say, a binary that fails only in the trial): the member's own start fails, and is put back
    const r = await opsctl(
      'kv',
      'upgrade',
      '--to',
      '3.3',
      '--yes',
      '--target-bin',
      broken,
      '--settle',
      '0s',
      '--on-failure',
      'rollback',
      '--skip-trial',
      'kv1,kv2,kv3',
      '--skip-reason',
      'the test: a binary that fails only outside the trial',
      ...FAST,
    );
    expect(r.exitCode, String(r.stderr)).toBe(3);
    expect(String(r.stderr)).toMatch(/process exited after its start/);
    expect(String(r.stderr)).toMatch(
      new RegExp(`--on-failure rollback: kv\\d is back on ${releases!.v32.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/etcd \\(data dir restored from `),
    );
    const v = await servers();
    expect(v.map((x) => x.server)).toEqual(['3.2.32', '3.2.32', '3.2.32']);
    expect(v.every((x) => x.cluster === '3.2.0')).toBe(true);
    expect((await opsctl('kv', 'health')).exitCode).toBe(0);
    expect(etcdctl(releases!.v32, 'get', 'before/', '--prefix', '--keys-only').split('\n').filter(Boolean)).toHaveLength(30);
  }, 300_000);

  it('after the finished 3.3 upgrade: kv rollback names kv restore; snapshot status matches etcdctl 3.3.27; kv restore brings every member back to 3.2.32 with the snapshot keys', async () => {
    const up = await opsctl('kv', 'upgrade', '--to', '3.3', '--yes', '--target-bin', releases!.v33, '--settle', '0s', ...FAST, '--json');
    expect(up.exitCode, String(up.stderr)).toBe(0);
    expect((await servers()).every((x) => x.server === '3.3.27' && x.cluster === '3.3.0')).toBe(true);
    etcdctl(releases!.v33, 'put', 'after/upgrade', 'lost by the restore');
    const rp = readJournal(cfg.dir).restorePoint;
    expect(rp.liveKeys).toBe(30);

    const rb = await opsctl('kv', 'rollback', ...FAST);
    expect(rb.exitCode).toBe(1);
    expect(String(rb.stderr)).toContain(`opsctl kv restore --snapshot ${rp.file} --to-version 3.2`);

    // opsctl's figures are etcdctl 3.3.27's, digit for digit.
    const ours = JSON.parse(String((await opsctl('kv', 'snapshot', 'status', rp.file, '--json')).stdout));
    const theirs = JSON.parse(
      execFileSync(join(releases!.v33, 'etcdctl'), ['snapshot', 'status', rp.file, '-w', 'json'], { env: { ETCDCTL_API: '3' } }).toString(),
    );
    expect(ours).toMatchObject({
      hash: theirs.hash.toString(16),
      revision: String(theirs.revision),
      totalKey: theirs.totalKey,
      totalSize: theirs.totalSize,
      kind: 'etcd',
      sha256: rp.sha256,
    });
    expect(ours.totalKey).toBeGreaterThan(30); // every entry of every bucket, as etcdctl counts
    // Read from the file itself: the live keys, the cluster version then, the members (bbolt buckets).
    expect(ours).toMatchObject({ liveKeys: 30, clusterVersion: '3.2.0' });
    expect(ours.members.map((m: { name: string }) => m.name).sort()).toEqual(['kv1', 'kv2', 'kv3']);
    const table = await opsctl('kv', 'snapshot', 'status', rp.file);
    expect(String(table.stdout)).toMatch(new RegExp(`^HASH\\t${theirs.hash.toString(16)}$`, 'm'));

    const r = await opsctl('kv', 'restore', '--snapshot', rp.file, '--to-version', '3.2', '--yes', ...FAST, '--json');
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const report = JSON.parse(String(r.stdout));
    expect(report).toMatchObject({ status: 'restored', version: '3.2', revision: rp.revision, keys: 30, expectedKeys: 30, clusterVersion: '3.2.0' });
    process.stderr.write(
      `[kv restore e2e] real etcd 3.3.27 → 3.2.32 from ${rp.file}: phases ${JSON.stringify(report.phasesMs)} ms, total ${report.totalMs} ms\n`,
    );
    const v = await servers();
    expect(v.map((x) => x.server)).toEqual(['3.2.32', '3.2.32', '3.2.32']);
    expect(v.every((x) => x.cluster === '3.2.0')).toBe(true);
    expect(etcdctl(releases!.v32, 'get', 'before/', '--prefix', '--keys-only').split('\n').filter(Boolean)).toHaveLength(30);
    expect(etcdctl(releases!.v32, 'get', 'before/00', '--print-value-only').trim()).toBe('rewritten-4');
    expect(etcdctl(releases!.v32, 'get', 'after/', '--prefix', '--keys-only').trim()).toBe('');
    // Writable again, one new cluster (the new token gave it a new id), old data kept beside each member.
    etcdctl(releases!.v32, 'put', 'after/restore', 'ok');
    for (const m of sandboxMembers()) {
      expect(readdirSync(dirname(m.dataDir)).filter((f) => f.startsWith('data.before-restore-'))).toHaveLength(1);
    }
  }, 240_000);
});

/**
 * The command driver (a host's control script, as over ssh) on a real 3-member 3.2.32 cluster with
 * client-certificate TLS: the seed's own 3.3 failure (a numeric auto-compaction-retention, which 3.2
 * reads and 3.3 refuses at start; no config template, so the pre-flight cannot see it) with
 * --on-failure rollback through the backup and restoreBackup templates; then the finished upgrade and
 * kv restore through the restoreCheck and restore templates, the peer URLs read from the member list.
 */
describe.runIf(releases)('kv restore and --on-failure rollback through the command driver: real etcd over TLS (the built binary)', () => {
  const cfg = tempConfigDir('opsctl-kv-restore-cmd-');
  const env = { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1' };
  const opsctl = (...args: string[]) => runBin(args, { env, timeout: 180_000 });
  const FAST = ['--poll-interval', '100ms', '--healthy-timeout', '60s', '--stop-timeout', '30s'];
  let certs: TestCerts;
  let c: RealCluster;
  let cluster: RealTestCluster | undefined;
  let clusterFile: string;
  const servers = () =>
    Promise.resolve(
      c.members.map((m) => JSON.parse(c.etcdctl(releases!.v33, ['--endpoints', m.clientUrl, 'endpoint', 'status', '-w', 'json']))[0].Status.version as string),
    );

  beforeAll(async () => {
    certs = makeTestCerts({ ips: ['127.0.0.1'] });
    cluster = await startCluster({
      members: 'real',
      size: 3,
      tls: certs,
      bins: { '3.2': releases!.v32, '3.3': releases!.v33 },
      version: '3.2',
      configDir: cfg.dir,
      // (a put, not a get: the probe key is one of the cluster's keys, the restore point counts it)
      ready: (t) => putWorks(t.real, 'probe'),
      file: (real) => {
        const d = (x: string) => `${real.dir}/{name}/${x}`;
        return {
          extra: [
            `backup: sh -c 'cp -a ${d('data')} ${d('data.bak-{run}')}'`,
            `restoreBackup: sh -c 'mv ${d('data')} ${d('data.failed-{run}')} && cp -a ${d('data.bak-{run}')} ${d('data')}'`,
            `restoreCheck: test -d ${d('data')}`,
            `restore: sh -c 'mv ${d('data')} ${d('data.before-restore-{run}')} && ETCDCTL_API=3 exec ${releases!.v32}/etcdctl snapshot restore {snapshot} --name {name} --initial-cluster {cluster} --initial-cluster-token {token} --initial-advertise-peer-urls {peer} --data-dir ${d('data')}'`,
          ],
        };
      },
    });
    c = cluster.real;
    clusterFile = cluster.file;
    for (let i = 0; i < 25; i++) c.etcdctl(releases!.v32, ['put', `before/${String(i).padStart(2, '0')}`, `value-${i}`]);
  }, 300_000);

  afterAll(async () => {
    await cluster?.destroy();
    certs?.cleanup();
    cfg.cleanup();
  });

  it('a member 3.3 refuses to start is put back on 3.2.32 with its backed-up data (exit 3); fixed, the upgrade finishes; kv restore brings 3.2.32 back', async () => {
    const originals = c.members.map((m) => readFileSync(m.configFile, 'utf8'));
    for (const m of c.members) writeFileSync(m.configFile, `${readFileSync(m.configFile, 'utf8')}auto-compaction-retention: 1\n`);
    // the trials and the config rule refuse this config before any stop; the operator overrides both, by name
    const refused = await opsctl('kv', 'upgrade', '--to', '3.3', '--yes', '--cluster', clusterFile, '--target-bin', `3.3=${releases!.v33}`, ...FAST);
    expect(refused.exitCode, String(refused.stderr)).toBe(1);
    expect(String(refused.stderr)).toMatch(/\[config-3\.3\] member etcd\d: .*auto-compaction-retention is the number 1/);
    expect(String(refused.stderr)).toMatch(/\[trial-start\] member etcd\d: /);
    const r = await opsctl(
      'kv',
      'upgrade',
      '--to',
      '3.3',
      '--yes',
      '--cluster',
      clusterFile,
      '--target-bin',
      `3.3=${releases!.v33}`,
      '--settle',
      '0s',
      '--on-failure',
      'rollback',
      '--ignore-check',
      'config-3.3',
      '--skip-trial',
      'etcd1,etcd2,etcd3',
      '--skip-reason',
      'the test: the member start is what fails here',
      ...FAST,
    );
    expect(r.exitCode, String(r.stderr)).toBe(3);
    expect(String(r.stderr)).toMatch(/process exited after its start/);
    expect(String(r.stderr)).toMatch(/--on-failure rollback: etcd\d is back on 3\.2 \(`sh -c '?mv .*data\.failed-.* done\), the cluster healthy/);
    expect(await servers()).toEqual(['3.2.32', '3.2.32', '3.2.32']);
    expect(c.members.every((m) => c.alive(m))).toBe(true);
    const failedDirs = c.members.flatMap((m) => readdirSync(m.dir).filter((f) => f.startsWith('data.failed-')));
    expect(failedDirs).toHaveLength(1);

    c.members.forEach((m, i) => writeFileSync(m.configFile, originals[i]!));
    const up = await opsctl(
      'kv',
      'upgrade',
      '--to',
      '3.3',
      '--yes',
      '--cluster',
      clusterFile,
      '--target-bin',
      `3.3=${releases!.v33}`,
      '--settle',
      '0s',
      ...FAST,
      '--json',
    );
    expect(up.exitCode, String(up.stderr)).toBe(0);
    expect(await servers()).toEqual(['3.3.27', '3.3.27', '3.3.27']);
    c.etcdctl(releases!.v33, ['put', 'after/upgrade', 'lost by the restore']);
    const rp = readJournal(cfg.dir).restorePoint;
    expect(rp.liveKeys).toBe(26); // before/00..24 and probe

    // Another cluster's snapshot (a one-member 3.2.32 cluster, fewer revisions than this one: only
    // its member list, read from the file, gives it away) is refused with nothing stopped.
    const other = await startCluster({ members: 'real', size: 1, version: releases!.v32, ready: (t) => putWorks(t.real, 'x') });
    try {
      const foreign = join(cfg.dir, 'foreign.db');
      other.real.etcdctl(releases!.v32, ['snapshot', 'save', foreign]);
      const pids = c.members.map((m) => c.pid(m));
      const refused = await opsctl('kv', 'restore', '--cluster', clusterFile, '--snapshot', foreign, '--yes');
      expect(refused.exitCode).toBe(1);
      expect(String(refused.stderr)).toContain(
        `the snapshot ${foreign} was taken from a cluster of etcd1=${other.members[0]!.peerUrl}; this cluster is ${c.members.map((m) => `${m.name}=${m.peerUrl}`).join(', ')}`,
      );
      expect(String(refused.stderr)).toContain(rp.file);
      expect(c.members.map((m) => c.pid(m))).toEqual(pids);
    } finally {
      await other.destroy();
    }

    const dry = await opsctl('kv', 'restore', '--cluster', clusterFile, '--snapshot', rp.file, '--dry-run');
    expect(dry.exitCode, String(dry.stderr)).toBe(0);
    expect(String(dry.stdout)).toMatch(/checked: `test -d .*\/etcd1\/data` ok/);
    const r2 = await opsctl('kv', 'restore', '--cluster', clusterFile, '--snapshot', rp.file, '--to-version', '3.2', '--yes', ...FAST, '--json');
    expect(r2.exitCode, String(r2.stderr)).toBe(0);
    const report = JSON.parse(String(r2.stdout));
    expect(report).toMatchObject({ status: 'restored', version: '3.2', revision: rp.revision, keys: 26, expectedKeys: 26 });
    process.stderr.write(`[kv restore e2e, command driver + TLS] phases ${JSON.stringify(report.phasesMs)} ms, total ${report.totalMs} ms\n`);
    expect(await servers()).toEqual(['3.2.32', '3.2.32', '3.2.32']);
    expect(c.etcdctl(releases!.v32, ['get', 'before/', '--prefix', '--keys-only']).split('\n').filter(Boolean)).toHaveLength(25);
    expect(c.etcdctl(releases!.v32, ['get', 'after/', '--prefix', '--keys-only']).trim()).toBe('');
    for (const m of c.members) expect(readdirSync(m.dir).filter((f) => f.startsWith('data.before-restore-'))).toHaveLength(1);
  }, 300_000);
});

/** A put of `key` through 3.2.32's etcdctl works: the cluster is up (the key is kept). */
function putWorks(real: RealCluster, key: string): boolean {
  try {
    real.etcdctl(releases!.v32, ['put', key, '1']);
    return true;
  } catch {
    return false;
  }
}
