import { execa } from 'execa';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import type { TestCerts } from '../helpers/etcd-certs.js';
import { startCluster, type RealCluster, type RealTestCluster } from '../framework/index.js';
import { requireProgram } from '../helpers/e2e.js';
import { etcdReleaseDirs } from '../helpers/etcd-releases.js';
import { readJournal, untilWhile } from '../helpers/kv.js';

const run = promisify(execFile);
const releases = etcdReleaseDirs();
const ready = Boolean(releases) && requireProgram('curl', '/usr/bin/curl');
const PASSWORD = 'opsctl-e2e-root-pw';

/**
 * The seed's upgrade on real etcd: a 3-member 3.2.32 cluster with client-certificate TLS and auth
 * enabled, upgraded to 3.3.27 by the built binary through the command driver (a control script that
 * starts, stops and checks each member, as a host's service manager does).
 */
describe.runIf(ready)('kv upgrade: real etcd 3.2.32 → 3.3.27 with client-certificate TLS and auth (the built binary)', () => {
  const cfg = tempConfigDir('opsctl-kv-e2e-');
  let certs: TestCerts;
  let t: RealTestCluster | undefined;
  let c: RealCluster;
  let clusterFile: string;
  const env = () => ({ OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_KV_PASSWORD_FILE: join(cfg.dir, 'root.pw'), NO_COLOR: '1', CI: '1' });
  const opsctl = (...args: string[]) => execa(process.execPath, [BIN, ...args], { reject: false, env: env(), extendEnv: true, timeout: 180_000 });
  const etcdctl33 = (...args: string[]) => c.etcdctl(releases!.v33, ['--user', `root:${PASSWORD}`, ...args]);
  const versions = () =>
    Promise.all(
      c.endpoints.map((e) =>
        run('curl', ['-sS', '--max-time', '2', '--cacert', certs.ca, '--cert', certs.clientCert, '--key', certs.clientKey, `${e}/version`]).then(
          (r) => JSON.parse(r.stdout),
          () => undefined,
        ),
      ),
    );
  const journal = () => readJournal(cfg.dir);

  /** Counts members whose process is down, every 20 ms, while `during` runs: the worst seen. */
  async function watchDown<T>(during: Promise<T>): Promise<{ result: T; maxDown: number; checks: number }> {
    let maxDown = 0;
    let checks = 0;
    let done = false;
    const watcher = (async () => {
      while (!done) {
        maxDown = Math.max(maxDown, c.members.filter((m) => !c.alive(m)).length);
        checks++;
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const result = await during.finally(() => (done = true));
    await watcher;
    return { result, maxDown, checks };
  }

  /**
   * A writer starting a write every 50 ms through etcdctl (auth by the client certificate, TLS; up to
   * 8 in flight, as a process start costs more than 50 ms on a loaded machine), each write either
   * acknowledged (exit 0) or not.
   */
  function writer(prefix: string) {
    const acked: string[] = [];
    let failed = 0;
    let stop = false;
    const inflight = new Set<Promise<void>>();
    const done = (async () => {
      for (let i = 0; !stop; i++) {
        if (inflight.size < 8) {
          const key = `${prefix}/${String(i).padStart(5, '0')}`;
          const p = run(
            join(releases!.v33, 'etcdctl'),
            [
              '--endpoints',
              c.endpoints.join(','),
              '--cacert',
              certs.ca,
              '--cert',
              certs.clientCert,
              '--key',
              certs.clientKey,
              '--command-timeout',
              '3s',
              'put',
              key,
              `w${i}`,
            ],
            { env: { ETCDCTL_API: '3' } },
          ).then(
            () => void acked.push(key),
            () => void failed++,
          );
          inflight.add(p);
          void p.finally(() => inflight.delete(p));
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      await Promise.all(inflight);
    })();
    return {
      acked,
      failed: () => failed,
      stop: async () => {
        stop = true;
        await done;
      },
    };
  }

  beforeAll(async () => {
    // CN root: etcdctl (gRPC) is root by its certificate, as with kubeadm-style client certificates;
    // opsctl's gateway requests are not (etcd ignores the CN there) and need --user's token.
    // The command driver's file (cluster.yaml in the config dir) with its config, backup and dataDir templates and auth.
    t = await startCluster({
      members: 'real',
      size: 3,
      tls: { clientCn: 'root' },
      bins: { '3.2': releases!.v32, '3.3': releases!.v33 },
      version: '3.2',
      ready: 'version',
      configDir: cfg.dir,
      file: (real) => ({
        extra: [
          `config: cat ${real.dir}/{name}/etcd.yaml`,
          `backup: cp -a ${real.dir}/{name}/data ${real.dir}/{name}/data.bak-{run}`,
          `dataDir: ${real.dir}/{name}/data`,
        ],
        top: ['auth: { user: root }'],
      }),
    });
    c = t.real;
    certs = t.certs!;
    clusterFile = t.file;
    // Auth on, as production clusters have it: root with a password.
    c.etcdctl(releases!.v32, ['user', 'add', `root:${PASSWORD}`, '--interactive=false']);
    c.etcdctl(releases!.v32, ['role', 'add', 'root']);
    c.etcdctl(releases!.v32, ['user', 'grant-role', 'root', 'root']);
    c.etcdctl(releases!.v32, ['auth', 'enable']);
    for (let i = 0; i < 50; i++) etcdctl33('put', `before/${String(i).padStart(2, '0')}`, `value-${i}`);
    writeFileSync(join(cfg.dir, 'root.pw'), `${PASSWORD}\n`, { mode: 0o600 });
  }, 300_000);

  afterAll(async () => {
    await t?.destroy();
    cfg.cleanup();
  });

  it('without --user a read through the gateway is refused, and the error says to pass --user', async () => {
    const noAuth = clusterFile.replace(/\.yaml$/, '-noauth.yaml');
    writeFileSync(noAuth, readFileSync(clusterFile, 'utf8').replace('auth: { user: root }\n', ''));
    const r = await opsctl('kv', 'get', 'before/00', '--cluster', noAuth);
    expect(r.exitCode).toBe(4);
    expect(r.stderr).toMatch(/etcd refused the request: .*(user name is empty|permission denied)[\s\S]*--user NAME/);
  });

  it('a member whose config has a numeric auto-compaction-retention is caught before any member is stopped (exit 1)', async () => {
    const m = c.members[1]!;
    const original = readFileSync(m.configFile, 'utf8');
    const pids = c.members.map((x) => c.pid(x));
    writeFileSync(m.configFile, `${original}auto-compaction-retention: 1\n`);
    try {
      const line = original.split('\n').length;
      const r = await opsctl('kv', 'upgrade', '--to', '3.3', '--yes', '--cluster', clusterFile, '--settle', '0s');
      expect(r.exitCode, r.stderr).toBe(1);
      expect(r.stderr).toContain(`member ${m.name}: ${m.configFile}:${line} on 127.0.0.1: auto-compaction-retention is the number 1: 3.3 reads a string`);
      // the target itself says so too: the trial start of 3.3 with this config
      expect(r.stderr).toMatch(new RegExp(`\\[trial-start\\] member ${m.name}: etcd 3\\.3\\.27 exited`));
      expect(r.stderr).toMatch(/fix: give the 3\.3 member auto-compaction-retention: "1"/);
      expect(r.stderr).toMatch(/nothing was stopped/);
      // Nothing stopped: the same processes, all on 3.2.32.
      expect(c.members.map((x) => c.pid(x))).toEqual(pids);
      expect(c.members.every((x) => c.alive(x))).toBe(true);
      expect((await versions()).map((v) => v?.etcdserver)).toEqual(['3.2.32', '3.2.32', '3.2.32']);
    } finally {
      writeFileSync(m.configFile, original);
    }
  }, 300_000);

  it('SIGKILLed mid-upgrade leaves one member on 3.3; kv rollback brings the cluster back to 3.2.32', async () => {
    const up = opsctl('kv', 'upgrade', '--to', '3.3', '--yes', '--cluster', clusterFile, '--settle', '0s', '--poll-interval', '100ms', '--json');
    const { maxDown } = await watchDown(
      (async () => {
        await untilWhile(
          up,
          () => journal()?.steps?.some((s: any) => s.kind === 'wait-healthy' && s.status === 'done'),
          120_000,
          'the first member back on 3.3',
        );
        up.kill('SIGKILL');
        await up;
      })(),
    );
    expect(maxDown).toBeLessThanOrEqual(1);
    const mixed = (await versions()).map((v) => v?.etcdserver);
    expect(mixed.filter((v) => v === '3.3.27')).toHaveLength(1);
    const rb = await opsctl('kv', 'rollback', '--cluster', clusterFile, '--poll-interval', '100ms', '--json');
    expect(rb.exitCode, rb.stderr).toBe(0);
    expect((await versions()).map((v) => v?.etcdserver)).toEqual(['3.2.32', '3.2.32', '3.2.32']);
    expect((await versions()).every((v) => v.etcdcluster === '3.2.0')).toBe(true);
    expect(etcdctl33('get', 'before/', '--prefix', '--keys-only').split('\n').filter(Boolean)).toHaveLength(50);
  }, 200_000);

  it('upgrades to 3.3.27 with a writer every 50 ms: SIGKILLed mid-way, re-run resumes; every key intact, cluster version 3.3.0, no acknowledged write lost', async () => {
    const w = writer('writer');
    const first = opsctl('kv', 'upgrade', '--to', '3.3', '--yes', '--cluster', clusterFile, '--settle', '0s', '--poll-interval', '100ms', '--json');
    const killed = await watchDown(
      (async () => {
        // Killed right after the second member was stopped (a member down: the re-run must bring it back).
        await untilWhile(
          first,
          () => journal()?.status === 'running' && journal()?.steps?.filter((s: any) => s.kind === 'stop' && s.status === 'done').length === 2,
          150_000,
          'the second member stopped',
        );
        first.kill('SIGKILL');
        return first;
      })(),
    );
    expect(killed.result.signal).toBe('SIGKILL');
    const again = opsctl('kv', 'upgrade', '--to', '3.3', '--yes', '--cluster', clusterFile, '--settle', '0s', '--poll-interval', '100ms', '--json');
    const resumed = await watchDown(again);
    await w.stop();
    const r = resumed.result;
    expect(r.exitCode, r.stderr).toBe(0);
    const report = JSON.parse(String(r.stdout));
    expect(report.status).toBe('done');
    expect(report.resumed).toBe(true);
    // etcdctl took the snapshots over TLS (the same CA, certificate and key).
    expect(report.steps.filter((st: any) => st.kind === 'snapshot' && /via etcdctl, SHA-256 ok/.test(st.detail ?? '')).length).toBeGreaterThan(0);
    expect(Math.max(killed.maxDown, resumed.maxDown)).toBeLessThanOrEqual(1);

    const v = await versions();
    expect(v.map((x) => x?.etcdserver)).toEqual(['3.3.27', '3.3.27', '3.3.27']);
    expect(v.every((x) => x.etcdcluster === '3.3.0')).toBe(true);
    const before = etcdctl33('get', 'before/', '--prefix').split('\n').filter(Boolean);
    expect(before).toHaveLength(100);
    expect(before[1]).toBe('value-0');
    const written = new Set(etcdctl33('get', 'writer/', '--prefix', '--keys-only').split('\n').filter(Boolean));
    expect(w.acked.length).toBeGreaterThan(20);
    const lost = w.acked.filter((k) => !written.has(k));
    process.stderr.write(
      `[kv e2e] writes acknowledged ${w.acked.length}, failed attempts ${w.failed()}, lost ${lost.length}; process checks ${killed.checks + resumed.checks}, most members down at once ${Math.max(killed.maxDown, resumed.maxDown)}\n`,
    );
    expect(lost).toEqual([]);
    // The gateway with the token on 3.3: opsctl's own reads work with auth.
    const g = await opsctl('kv', 'get', 'before/07', '--cluster', clusterFile);
    expect(g.exitCode, g.stderr).toBe(0);
    expect(String(g.stdout).trim()).toBe('value-7');
  }, 240_000);
});
