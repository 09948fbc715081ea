import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import type { TestCerts } from '../helpers/etcd-certs.js';
import { startCluster, watchDown, type RealCluster, type RealTestCluster } from '../framework/index.js';
import { requireProgram } from '../helpers/e2e.js';
import { etcdReleaseDirs } from '../helpers/etcd-releases.js';
import { readJournal, until, untilWhile } from '../helpers/kv.js';
import { canNetns, hubRunner, type NetnsHosts, netnsHosts } from '../helpers/netns.js';

const releases = etcdReleaseDirs();
const ok = Boolean(releases) && canNetns() && requireProgram('curl', '/usr/bin/curl');

/**
 * Members on separate hosts: each real etcd member in its own network namespace with its own
 * address (10.213.N.1-3, a private range, only inside namespaces this test makes), joined by a
 * bridge in a hub namespace where opsctl itself runs (test/helpers/netns.ts). The command driver
 * reaches each member with `ip netns exec` (kv-ssh-hosts.test.ts: over real ssh). Everything is torn down in afterAll, also after a failure.
 */
describe.runIf(ok)('kv upgrade across network namespaces (real etcd 3.2.32 → 3.3.27, TLS, the built binary)', () => {
  let hosts: NetnsHosts;
  const cfg = tempConfigDir('opsctl-kv-netns-');
  let certs: TestCerts;
  let t: RealTestCluster | undefined;
  let c: RealCluster;
  let clusterFile: string;
  const inHub = hubRunner(
    () => hosts.hub,
    () => cfg.dir,
  );
  const opsctl = (...args: string[]) => inHub(process.execPath, [BIN, ...args]);
  const versions = () =>
    Promise.all(
      c.members.map((m) =>
        inHub(
          'curl',
          ['-sS', '--max-time', '2', '--cacert', certs.ca, '--cert', certs.clientCert, '--key', certs.clientKey, `${m.clientUrl}/version`],
          10_000,
        ).then((r) => {
          try {
            return JSON.parse(String(r.stdout));
          } catch {
            return undefined;
          }
        }),
      ),
    );
  const journal = () => readJournal(cfg.dir);

  beforeAll(async () => {
    hosts = netnsHosts(3, 'okv');
    const nsOf = hosts.ns(0).replace(/etcd1$/, ''); // the namespaces are named PREFIX-etcdN after the members
    const onHost = `ip netns exec ${nsOf}{name}`;
    // each member in its host's namespace, TLS (CN root) for the hosts' addresses; ready: every member at cluster
    // version 3.2.0 (asked from the hub); its command-driver file (cluster.yaml in the config dir) runs each template there
    t = await startCluster({
      members: 'real',
      size: 3,
      netns: hosts,
      tls: { ips: hosts.addrs, clientCn: 'root' },
      ports: { client: 2379, peer: 2380 },
      bins: { '3.2': releases!.v32, '3.3': releases!.v33 },
      version: '3.2',
      ready: 'version',
      configDir: cfg.dir,
      file: (real) => ({
        host: true,
        prefix: onHost,
        extra: [
          `config: ${onHost} cat ${real.dir}/{name}/etcd.yaml`,
          `backup: ${onHost} cp -a ${real.dir}/{name}/data ${real.dir}/{name}/data.bak-{run}`,
          `dataDir: ${real.dir}/{name}/data`,
          `onHost: ${onHost}`,
          // the proof before each stop runs where the member does (its namespace), as `ssh {host} sudo sh -s` would
          `trial: ${onHost} sh -s`,
        ],
      }),
    });
    c = t.real;
    certs = t.certs!;
    clusterFile = t.file;
    for (let i = 0; i < 20; i++) {
      const r = await inHub(join(releases!.v33, 'etcdctl'), [
        '--endpoints',
        c.endpoints.join(','),
        '--cacert',
        certs.ca,
        '--cert',
        certs.clientCert,
        '--key',
        certs.clientKey,
        'put',
        `netns/${i}`,
        `v${i}`,
      ]);
      expect(r.exitCode, String(r.stderr)).toBe(0);
    }
  }, 300_000);

  afterAll(async () => {
    await t?.destroy();
    hosts?.destroy();
    cfg.cleanup();
  });

  it("cutting a member's link mid-upgrade halts with exit 3, never two members down; restored, a re-run finishes", async () => {
    const { maxDown, checks } = await watchDown(c, async (seen) => {
      const up = opsctl(
        'kv',
        'upgrade',
        '--to',
        '3.3',
        '--yes',
        '--cluster',
        clusterFile,
        '--settle',
        '3s',
        '--poll-interval',
        '100ms',
        '--healthy-timeout',
        '20s',
        '--json',
      );
      // During the first member's settle: cut the link of a member not yet upgraded.
      await untilWhile(up, () => journal()?.steps?.some((s: any) => s.kind === 'settle' && s.status === 'running'), 120_000, 'the first member settling');
      const first = journal().steps.find((s: any) => s.kind === 'settle' && s.status === 'running').member;
      const cut = c.members.findIndex((m) => m.name !== first);
      hosts.cut(cut);
      const r = await up;
      expect(r.exitCode, String(r.stderr)).toBe(3);
      expect(String(r.stderr)).toMatch(/upgrade halted at/);
      expect(String(r.stderr)).toContain(c.members[cut]!.name);
      expect(seen.maxDown).toBeLessThanOrEqual(1);
      // Only the first member moved.
      hosts.restore(cut);
      // As an operator would: wait until the cluster is whole again (every member healthy, one leader).
      await until(
        async () => {
          const st = await opsctl('kv', 'status', '--cluster', clusterFile, '--json');
          if (st.exitCode !== 0) return false;
          const rows = JSON.parse(String(st.stdout));
          return rows.every((x: any) => x.healthy) && rows.filter((x: any) => x.leader).length === 1;
        },
        60_000,
        'the cluster whole again',
      );
      expect((await versions()).filter((v) => v.etcdserver === '3.3.27')).toHaveLength(1);

      const again = await opsctl('kv', 'upgrade', '--to', '3.3', '--yes', '--cluster', clusterFile, '--settle', '0s', '--poll-interval', '100ms', '--json');
      expect(again.exitCode, String(again.stderr)).toBe(0);
      expect(JSON.parse(String(again.stdout)).status).toBe('done');
      const v = await versions();
      expect(v.map((x) => x.etcdserver)).toEqual(['3.3.27', '3.3.27', '3.3.27']);
      expect(v.every((x) => x.etcdcluster === '3.3.0')).toBe(true);
      const keys = await inHub(join(releases!.v33, 'etcdctl'), [
        '--endpoints',
        c.endpoints.join(','),
        '--cacert',
        certs.ca,
        '--cert',
        certs.clientCert,
        '--key',
        certs.clientKey,
        'get',
        'netns/',
        '--prefix',
        '--keys-only',
      ]);
      expect(String(keys.stdout).split('\n').filter(Boolean)).toHaveLength(20);
    });
    process.stderr.write(`[kv netns e2e] process checks ${checks}, most members down at once ${maxDown}\n`);
    expect(maxDown).toBeLessThanOrEqual(1);
  }, 300_000);
});
