import { execa } from 'execa';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MemberSpec } from '../../src/kv/cluster/cluster-file.js';
import { CommandDriver } from '../../src/kv/drivers/command.js';
import { runDataTrial, runDataTrials, type DataTrialFinding, type DataTrialOptions } from '../../src/kv/trial/data.js';
import { makeTestCerts, type TestCerts } from '../helpers/etcd-certs.js';
import { startCluster, type RealCluster, type RealStart, type RealTestCluster } from '../framework/index.js';
import { BIN } from '../helpers/bin.js';
import { etcdLadderDirs } from '../helpers/etcd-releases.js';
import { until } from '../helpers/kv.js';

/**
 * The data trial (src/kv/trial/data.ts) on real etcd: each member's data copied while it runs (its .snap
 * files, `etcdctl snapshot save`, its WAL), the hop's target started on the copy with the member's own
 * settings in a network namespace of its own, and its KV hash compared with the live member's. The
 * members run under a control script; the command driver with `trial: sh -s` reads each one's settings
 * from /proc and runs the trial's script here, as `ssh {host} sudo sh -s` would on its host.
 */
const dirs = etcdLadderDirs();
const root = process.getuid?.() === 0;

describe.runIf(Boolean(dirs))('the data trial: the target on a copy of each member data, isolated, before any stop (real etcd)', () => {
  // made when the block runs (a skipped block's body runs at collection too: it would leave the directory behind)
  let scratch = '';
  beforeAll(() => {
    scratch = mkdtempSync('/var/tmp/opsctl-data-trial-e2e-');
  });
  const made: Array<{ destroy(): void | Promise<void> }> = [];
  /** Each cluster's TestCluster (its config dir, where another cluster file is written). */
  const tested = new Map<RealCluster, RealTestCluster>();
  const driver = (PATH = process.env.PATH ?? '/usr/bin:/bin') =>
    new CommandDriver({ stop: 'false', start: 'false', running: 'true', trial: 'sh -s' }, execa, { PATH }, 60_000);
  const spec = (c: RealCluster, i: number): MemberSpec => ({ name: c.members[i]!.name, endpoint: c.members[i]!.clientUrl });
  const trial = (c: RealCluster, i: number, to: { version: string; binDir: string; release: string }, o: Partial<DataTrialOptions> = {}) =>
    runDataTrial(
      { hop: `→ ${to.version}`, member: spec(c, i), target: { version: to.version, binDir: to.binDir }, release: to.release },
      { driver: driver(), timeoutS: 60, scratch, ...o },
    );
  const v36 = () => ({ version: '3.6', binDir: dirs!.v36, release: '3.6.16' });
  const v35 = () => ({ version: '3.5', binDir: dirs!.v35, release: '3.5.35' });

  /** A cluster of `bin`, every member serving (etcdctl's endpoint health on every member's endpoint: 3.2's etcdctl has no --cluster). */
  const up = async (o: Omit<RealStart, 'members' | 'version' | 'ready'>, bin: string): Promise<RealCluster> => {
    const ctl = existsSync(join(bin, 'etcdctl')) ? bin : '/usr/bin';
    const healthy = (t: RealTestCluster) => {
      try {
        t.real.etcdctl(ctl, ['endpoint', 'health']);
        return true;
      } catch {
        return false;
      }
    };
    const t = await startCluster({ ...o, members: 'real', version: bin, ready: healthy });
    made.push(t);
    tested.set(t.real, t);
    return t.real;
  };
  /** Another command-driver cluster file for `c`, in its config dir (`name`), the config dir of the test's run being its own. */
  const clusterFile = (c: RealCluster, name: string, extra?: string[]) => tested.get(c)!.clusterFile({ name, ...(extra ? { extra } : {}) });
  /** Nothing of a trial is left: no copy, no process. */
  const leftNothing = () => {
    expect(readdirSync(scratch)).toEqual([]);
    expect(execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })).not.toContain(scratch);
  };

  afterAll(async () => {
    for (const c of made) await c.destroy();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  describe('3.5.35 members holding custom v2 content in their WAL (a v2 key put through --enable-v2)', () => {
    let c: RealCluster;
    beforeAll(async () => {
      // (bin-3.5 and bin-3.6 beside ctl.sh: the cluster file's bins: names them)
      c = await up({ size: 3, extraConfig: () => 'enable-v2: true', bins: { '3.5': dirs!.v35, '3.6': dirs!.v36 } }, dirs!.v35);
      c.etcdctl(dirs!.v35, ['put', 'app/k', 'v']);
      const put = await fetch(`${c.endpoints[0]}/v2/keys/legacy`, { method: 'PUT', body: new URLSearchParams({ value: 'old' }) });
      expect(put.status).toBe(201);
      // the operator dropped enable-v2 for 3.6 (its own rule); the members still run with it
      for (const m of c.members) writeFileSync(m.configFile, readFileSync(m.configFile, 'utf8').replace(/^enable-v2:.*\n/m, ''));
    }, 120_000);

    it("3.6.16 on each member's copy: a problem in etcd 3.6's own words; the same copy starts on 3.5.35; no member touched", async () => {
      const pids = c.members.map((m) => c.pid(m));
      const found = await Promise.all(c.members.map((_, i) => trial(c, i, v36())));
      for (const [i, f] of found.entries()) {
        expect(f, JSON.stringify(f)).toMatchObject({ member: c.members[i]!.name, result: 'problem' });
        expect(f.detail).toContain(`etcd 3.6.16 exited (2)`);
        expect(f.detail).toContain(`after it started on a copy of ${c.members[i]!.name}'s data`);
        expect(f.detail).toContain('"detected disallowed v2 WAL for stage --v2-deprecation=write-only (method: PUT)"');
        expect(f.data).toMatchObject({ isolation: 'unshare -n', copied: { attempts: 1, sha256: 'verified', walFiles: 1 } });
      }
      // the data, not the settings: 3.5.35 starts on the same member's copy and answers with its data
      const control = await trial(c, 0, v35());
      expect(control, JSON.stringify(control)).toMatchObject({ result: 'ok' });
      expect(c.members.map((m) => c.pid(m))).toEqual(pids);
      for (const m of c.members) expect(c.alive(m)).toBe(true);
      leftNothing();
    }, 180_000);

    it('kv upgrade --to 3.6 (the built binary, no trial template, the v2store rule switched off): refused by the data trial before any stop', async () => {
      const cfg = mkdtempSync('/var/tmp/opsctl-data-trial-cli-');
      try {
        const file = clusterFile(c, 'upgrade-cli.yaml');
        const pids = c.members.map((m) => c.pid(m));
        const r = await execa(
          process.execPath,
          [
            BIN,
            'kv',
            'upgrade',
            '--to',
            '3.6',
            '--yes',
            '--no-backup',
            '--cluster',
            file,
            '--target-bin',
            `3.6=${dirs!.v36}`,
            '--ignore-check',
            'v2store-check',
            '--no-fix-v2store',
          ],
          { reject: false, env: { OPSCTL_CONFIG_DIR: cfg, NO_COLOR: '1', CI: '1' }, timeout: 300_000 },
        );
        const err = String(r.stderr);
        expect(r.exitCode, err).toBe(1);
        for (const m of c.members) {
          expect(err).toMatch(
            new RegExp(
              `3\\.5 → 3\\.6 \\[data-trial\\] member ${m.name}: etcd 3\\.6\\.16 exited \\(2\\)[^\\n]*detected disallowed v2 WAL for stage --v2-deprecation=write-only`,
            ),
          );
          // its settings are fine: the settings trial passed
          expect(err).not.toMatch(new RegExp(`\\[trial-start\\] member ${m.name}`));
        }
        expect(err).toMatch(/nothing was stopped or changed/);
        expect(c.members.map((m) => c.pid(m))).toEqual(pids);
        expect(existsSync(join(cfg, 'data', 'kv', 'journals'))).toBe(false);
        leftNothing();
      } finally {
        rmSync(cfg, { recursive: true, force: true });
      }
    }, 300_000);

    it("kv upgrade --to 3.6 --dry-run with the binaries named only by the cluster file's bins: (no --target-bin): etcdutl check v2store runs beside bins' 3.5 binary on each host", async () => {
      const cfg = mkdtempSync('/var/tmp/opsctl-data-trial-bins-');
      try {
        // (bins: names bin-3.5/etcd and bin-3.6/etcd, as the operator's file does; the trial template reaches the hosts)
        const file = clusterFile(c, 'upgrade-bins.yaml', ['trial: sh -s']);
        expect(readFileSync(file, 'utf8')).toMatch(/bins:\n\s+"3\.5": .*bin-3\.5\/etcd/);
        const r = await execa(process.execPath, [BIN, 'kv', 'upgrade', '--to', '3.6', '--dry-run', '--no-backup', '--cluster', file, '--json'], {
          reject: false,
          env: { OPSCTL_CONFIG_DIR: cfg, NO_COLOR: '1', CI: '1' },
          timeout: 300_000,
        });
        const err = String(r.stderr);
        expect(err).not.toMatch(/binaries' directory on the hosts is not known/);
        const rows = (JSON.parse(String(r.stdout)) as { checks: Array<{ rule: string; member?: string; result: string; detail: string }> }).checks;
        const v2 = rows.filter((x) => x.rule === 'v2store-check');
        expect(v2.map((x) => x.member).sort()).toEqual(c.members.map((m) => m.name).sort());
        for (const x of v2) expect(x.detail, JSON.stringify(x)).toMatch(/etcdutl check v2store on its host: .*custom v2 content/);
        // the binary rule reads bins: too: the 3.6 binary's version asked on the hosts
        expect(err).not.toMatch(/its version is not known before the start/);
      } finally {
        rmSync(cfg, { recursive: true, force: true });
      }
    }, 300_000);
  });

  describe('clean 3.5.35 members with v2 snapshot files (snapshot-count 100)', () => {
    let c: RealCluster;
    beforeAll(async () => {
      c = await up({ size: 3, snapshotCount: 100 }, dirs!.v35);
      // 260 writes through the gateway: two .snap files in every member's data dir
      for (let i = 0; i < 260; i++) {
        const r = await fetch(`${c.endpoints[i % 3]}/v3/kv/put`, {
          method: 'POST',
          body: JSON.stringify({ key: Buffer.from(`k/${i}`).toString('base64'), value: Buffer.from(`v${i}`).toString('base64') }),
        });
        expect(r.status).toBe(200);
      }
      await until(() => c.members.every((m) => readdirSync(join(m.dir, 'data', 'member', 'snap')).some((f) => f.endsWith('.snap'))), 30_000, '.snap files');
    }, 120_000);

    it("3.6.16 on each member's copy: ok, its KV hash at the copy's revision equal to the live member's; the live cluster untouched", async () => {
      const status = () => JSON.parse(c.etcdctl(dirs!.v35, ['endpoint', 'status', '-w', 'json'])) as Array<{ Status: { header: { revision: number } } }>;
      const members = () => c.etcdctl(dirs!.v35, ['member', 'list', '-w', 'simple']);
      const logs = () => c.members.map((m) => readFileSync(join(m.dir, 'etcd.log'), 'utf8').length);
      const before = { revisions: status().map((s) => s.Status.header.revision), members: members(), logs: logs() };
      const found: DataTrialFinding[] = await Promise.all(c.members.map((_, i) => trial(c, i, v36())));
      for (const [i, f] of found.entries()) {
        expect(f, JSON.stringify(f)).toMatchObject({ member: c.members[i]!.name, result: 'ok' });
        expect(f.data!.hash).toMatch(/^\d+$/);
        expect(f.data!.hash).toBe(f.data!.liveHash);
        expect(Number(f.data!.revision)).toBeGreaterThanOrEqual(before.revisions[i]!);
        expect(f.data!.copied!.snapFiles).toBeGreaterThanOrEqual(1);
        // the stream's sha256 trailer checked (openssl here)
        expect(f.data!.copied!.sha256).toBe('verified');
        expect(f.detail).toMatch(new RegExp(`with the member's data: KV hash ${f.data!.hash} at revision ${f.data!.revision}, as ${c.members[i]!.name}`));
      }
      // no second process ever joined: the same members, the same revision, every one healthy; the copies sent no peer a message
      expect(members()).toBe(before.members);
      expect(status().map((s) => s.Status.header.revision)).toEqual(before.revisions);
      c.etcdctl(dirs!.v35, ['endpoint', 'health', '--cluster']);
      for (const [i, m] of c.members.entries()) {
        const since = readFileSync(join(m.dir, 'etcd.log'), 'utf8').slice(before.logs[i]);
        expect(since).toContain('successfully sent database snapshot to client');
        expect(since).not.toMatch(/established TCP streaming connection|peer became active|added member|removed member/);
      }
      leftNothing();
    }, 180_000);

    it('not checked, saying why and what makes it run: no unshare on the PATH; no etcdctl anywhere; too little space for the copy; a damaged snapshot stream (its sha256 checked by sha256sum where the host has no openssl)', async () => {
      const farm = (without: string[]) => {
        const d = mkdtempSync(join(scratch, '..', 'opsctl-data-trial-path-'));
        made.push({ destroy: () => rmSync(d, { recursive: true, force: true }) });
        for (const from of ['/usr/bin', '/bin'])
          for (const f of readdirSync(from)) if (!without.includes(f) && !existsSync(join(d, f))) symlinkSync(join(from, f), join(d, f));
        return d;
      };
      const noUnshare = await trial(c, 0, v36(), { driver: driver(farm(['unshare'])) });
      expect(noUnshare).toMatchObject({ result: 'not-checked' });
      expect(noUnshare.detail).toBe("data trial not run: unshare (util-linux) is not on the host's PATH: install util-linux");
      const bare = farm(['etcdctl']);
      const onlyEtcd = mkdtempSync(join(scratch, '..', 'opsctl-data-trial-bin-'));
      made.push({ destroy: () => rmSync(onlyEtcd, { recursive: true, force: true }) });
      symlinkSync(join(dirs!.v36, 'etcd'), join(onlyEtcd, 'etcd'));
      const noCtl = await trial(c, 1, { ...v36(), binDir: onlyEtcd }, { driver: driver(bare) });
      expect(noCtl.detail).toBe(
        `data trial not run: no etcdctl beside the target (${onlyEtcd}/etcdctl) or on the host's PATH: put etcdctl beside etcd in the target binaries (--target-bin VERSION=DIR) or install it on the host (etcd-client)`,
      );
      // the stream's trailer: checked with sha256sum where openssl is not on the host
      const noOpenssl = await trial(c, 0, v36(), { driver: driver(farm(['openssl'])) });
      expect(noOpenssl, JSON.stringify(noOpenssl)).toMatchObject({ result: 'ok' });
      expect(noOpenssl.data!.copied!.sha256).toBe('verified');
      // an etcdctl that damages the file it saved (16 bytes inside the db overwritten, the trailer as etcd sent it)
      const damaging = mkdtempSync(join(scratch, '..', 'opsctl-data-trial-bin-'));
      made.push({ destroy: () => rmSync(damaging, { recursive: true, force: true }) });
      symlinkSync(join(dirs!.v36, 'etcd'), join(damaging, 'etcd'));
      writeFileSync(
        join(damaging, 'etcdctl'),
        `#!/bin/sh\n'${dirs!.v36}/etcdctl' "$@" || exit $?\n` +
          'case " $* " in *" snapshot save "*) for f; do :; done; printf opsctl-damaged!! | dd of="$f" bs=1 seek=8192 conv=notrunc 2>/dev/null ;; esac\n',
        { mode: 0o755 },
      );
      for (const path of [undefined, farm(['openssl'])]) {
        const damaged = await trial(c, 1, { ...v36(), binDir: damaging }, path ? { driver: driver(path) } : {});
        expect(damaged, JSON.stringify(damaged)).toMatchObject({ result: 'not-checked' });
        expect(damaged.detail).toMatch(
          /^data trial not run: the snapshot's sha256 [0-9a-f]{64} is not its trailer's [0-9a-f]{64}: the stream was damaged on the way/,
        );
      }
      if (root) {
        const small = mkdtempSync(join(scratch, '..', 'opsctl-data-trial-small-'));
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', small]);
        made.push({ destroy: () => (execFileSync('umount', [small]), rmSync(small, { recursive: true, force: true })) });
        const full = await trial(c, 2, v36(), { scratch: small });
        expect(full.detail).toMatch(
          new RegExp(
            `^data trial not run: the copy needs \\d+ MB on ${small} \\(snap dir \\d+ MB, WAL \\d+ MB, 128 MB for the target's own WAL\\), which has 2 MB free`,
          ),
        );
        expect(readdirSync(small)).toEqual([]);
      }
      leftNothing();
    }, 120_000);
  });

  it("3.4 (Debian) members along the ladder: 3.5.35 on each member's copy, then 3.6.16 on the data 3.5 wrote there, both ok", async () => {
    const c = await up({ size: 3 }, dirs!.v34);
    for (let i = 0; i < 20; i++) c.etcdctl('/usr/bin', ['put', `k${i}`, `v${i}`]);
    const hop = (i: number, to: { version: string; binDir: string; release: string }, name: string) => ({
      hop: name,
      member: spec(c, i),
      target: { version: to.version, binDir: to.binDir },
      release: to.release,
    });
    const found = await Promise.all(
      c.members.map((_, i) => runDataTrials([hop(i, v35(), '3.4 → 3.5'), hop(i, v36(), '3.5 → 3.6')], { driver: driver(), timeoutS: 60, scratch })),
    );
    for (const [i, [a, b]] of found.entries()) {
      expect(a, JSON.stringify(a)).toMatchObject({ hop: '3.4 → 3.5', result: 'ok' });
      expect(b, JSON.stringify(b)).toMatchObject({ hop: '3.5 → 3.6', result: 'ok' });
      expect(a!.data!.hash).toBe(a!.data!.liveHash);
      expect(b!.data!.hash).toBe(a!.data!.hash);
      expect(b!.detail).toContain(`a copy of ${c.members[i]!.name}'s data`);
      expect(b!.detail).toContain('after etcd 3.5.35 of 3.4 → 3.5 ran on it');
      expect(a!.data!.phases.stop).toBeGreaterThan(0);
    }
    leftNothing();
  }, 180_000);

  it('a 3.2.32 member → 3.3.27: ok on a read at least at its revision, its hash not compared (3.2 has no HashKV), said so', async () => {
    const c = await up({ size: 1 }, dirs!.v32);
    c.etcdctl(dirs!.v32, ['put', 'old', 'data']);
    const f = await trial(c, 0, { version: '3.3', binDir: dirs!.v33, release: '3.3.27' });
    expect(f, JSON.stringify(f)).toMatchObject({ result: 'ok' });
    expect(f.detail).toMatch(/it served a read at revision \d+ \(etcd1 was at \d+ before the copy\); hashes not compared: etcd1 has no HashKV \(etcd 3\.2\)/);
    // (its status said 3.2.32: the copy was not hashed, there being nothing to compare it with)
    expect(f.detail).toMatch(/\(snapshot \d+ ms, copy \d+ ms, start \d+ ms\)$/);
    leftNothing();
  }, 120_000);

  describe('a 3.5.35 member with client-certificate TLS and auth', () => {
    let c: RealCluster;
    let certs: TestCerts;
    const password = "s3cret 'pw";
    beforeAll(async () => {
      certs = makeTestCerts();
      made.push({ destroy: () => certs.cleanup() });
      c = await up({ size: 1, tls: certs }, dirs!.v35);
      c.etcdctl(dirs!.v35, ['user', 'add', `root:${password}`]);
      c.etcdctl(dirs!.v35, ['auth', 'enable']);
      c.etcdctl(dirs!.v35, ['put', 'secure/k', 'v'], { ETCDCTL_USER: `root:${password}` });
    }, 120_000);

    it("with the member's credentials (never printed): ok over its own certificates; without them: not checked, saying so", async () => {
      const f = await trial(c, 0, v36(), { credentials: { user: 'root', password } });
      expect(f, JSON.stringify(f)).toMatchObject({ result: 'ok' });
      expect(f.data!.hash).toBe(f.data!.liveHash);
      expect(JSON.stringify(f)).not.toContain('s3cret');
      const without = await trial(c, 0, v36());
      expect(without.result).toBe('not-checked');
      expect(without.detail).toMatch(
        /^data trial not run: the member did not answer a read at https:\/\/127\.0\.0\.1:\d+: .+: the member's credentials \(auth\)/,
      );
      leftNothing();
    }, 120_000);
  });
});
