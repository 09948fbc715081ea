import { afterEach, describe, expect, it } from 'vitest';
import { KvClient } from '../../src/kv/cluster/client.js';
import { KvSession } from '../../src/kv/cluster/session.js';
import { runBin } from '../helpers/bin.js';
import { startCluster, type RealTestCluster } from '../framework/index.js';
import { etcdLadderDirs } from '../helpers/etcd-releases.js';
import { until } from '../helpers/kv.js';

/**
 * The v3 store's membership on real etcd 3.4.23 → 3.5.35 → 3.6.16 (src/kv/ladder/v3-membership.ts). A 3.4
 * cluster that never had a v3 write keeps no consistent index; its first start on 3.5.26+ applies the
 * WAL's bootstrap membership changes to the v3 store again and marks every member but the first removed
 * there ("Removing zombie member from v3store"); 3.5 runs on, 3.6 reads the mark, refuses their raft
 * streams, and each of them stops itself ("the member has been permanently removed from the cluster").
 * Both states are refused before any stop, naming the cause and the fix; the fix named for the first
 * (one v3 write on 3.4) lets the same command go to 3.6.
 */
const dirs = etcdLadderDirs();
const FAST = ['--poll-interval', '50ms', '--settle', '0s'];

describe.runIf(Boolean(dirs))('the v3 store membership before 3.5.26+ and 3.6, on real etcd', () => {
  const session = new KvSession();
  let c: RealTestCluster | undefined;
  afterEach(() => c?.destroy());

  /** Three members on 3.4 that never had a v3 write, a command-driver cluster file for them. */
  async function fresh34() {
    c = await startCluster({
      members: 'real',
      size: 3,
      version: '3.4',
      bins: { '3.4': dirs!.v34, '3.5': dirs!.v35, '3.6': dirs!.v36 },
      env: {},
      file: (real) => ({ extra: [`backup: cp -a ${real.dir}/{name}/data ${real.dir}/{name}/data.bak-{run}`] }),
    });
    return { file: c.file, env: { OPSCTL_CONFIG_DIR: c.configDir }, cluster: c };
  }
  const servers = (k: RealTestCluster) =>
    Promise.all(k.members.map(async (m) => (await new KvClient(m.clientUrl, { session, timeoutMs: 5000 }).version()).server));
  const pids = (k: RealTestCluster) => k.members.map((m) => k.pid(m));
  const args = (file: string) => [
    'kv',
    'upgrade',
    '--to',
    '3.6',
    '--yes',
    '--cluster',
    file,
    '--target-bin',
    `3.5=${dirs!.v35}`,
    '--target-bin',
    `3.6=${dirs!.v36}`,
    ...FAST,
  ];

  it('regression: a 3.4 cluster with no v3 write is refused before any stop ([v3-consistent-index]); after the v3 write it names, the same command reaches 3.6', async () => {
    const { file, env, cluster } = await fresh34();
    const before = pids(cluster);
    const r = await runBin(args(file), { env, timeout: 600_000 });
    expect(r.exitCode, String(r.stderr)).toBe(1);
    expect(String(r.stderr)).toMatch(/refused before any change/);
    expect(String(r.stderr)).toMatch(
      /3\.4 → 3\.5 \[v3-consistent-index\]: etcd\d's v3 store holds no consistent index .*3\.5\.35 would .*mark the other members removed/,
    );
    expect(String(r.stderr)).toMatch(/fix: while the cluster is on 3\.4, make one v3 write/);
    expect(pids(cluster)).toEqual(before);
    for (const v of await servers(cluster)) expect(v).toMatch(/^3\.4\./);
    // the fix it names: one v3 write (put, then deleted), then the same command
    const kv = new KvClient(cluster.members[0]!.clientUrl, { session, timeoutMs: 5000 });
    await kv.put('opsctl-fix', 'x');
    await kv.gateway('/kv/deleterange', { key: Buffer.from('opsctl-fix').toString('base64') });
    const again = await runBin([...args(file), '--debug'], { env, timeout: 900_000 });
    expect(again.exitCode, String(again.stderr)).toBe(0);
    const said = String(again.stderr);
    expect(said).toMatch(/\[v3-consistent-index\] ok: consistent index \d+ in etcd\d's v3 store \(a snapshot via etcdctl\)/);
    // the 3.5 → 3.6 hop's reads begun as 3.4 → 3.5 waited for its cluster version (every member on 3.5 by then), and used:
    // one snapshot of the leader per hop (the plan's for 3.4 → 3.5, the one read ahead for 3.5 → 3.6), none made again
    const ahead = said.indexOf('[kv] 3.5 → 3.6: its settings, trials and data reads begun while the hop before waits for its cluster version');
    expect(ahead).toBeGreaterThan(0);
    expect(ahead).toBeLessThan(said.indexOf('wait for the cluster version to reach 3.5: cluster version 3.5'));
    expect([...said.matchAll(/\[kv\] v3 membership: a snapshot of etcd\d /g)].map((m) => m.index > ahead)).toEqual([false, true]);
    for (const v of await servers(cluster)) expect(v).toMatch(/^3\.6\./);
  }, 1_200_000);

  it('regression: members 3.5.35 marked removed in the v3 store are refused by name before any stop ([v3-removed-members])', async () => {
    const { file, env, cluster } = await fresh34();
    // a plain rolling restart onto 3.5.35, by hand: the state an operator's cluster is in after one
    for (const m of cluster.members) {
      cluster.real.stop(m);
      await until(() => !cluster.alive(m), 60_000, `${m.name} stopped`);
      cluster.real.start(m, '3.5');
      await until(async () => (await runBin(['kv', 'health', '--cluster', file], { env })).exitCode === 0, 60_000, `${m.name} healthy on 3.5`);
    }
    // the leader moves the cluster version to 3.5 a few seconds after the last member joins on 3.5 (etcd's
    // version monitor): the state an operator's finished rolling restart is in
    await until(
      async () =>
        (await Promise.all(cluster.members.map(async (m) => (await new KvClient(m.clientUrl, { session, timeoutMs: 5000 }).version()).cluster))).every((c) =>
          /^3\.5\./.test(c),
        ),
      120_000,
      'the cluster version on 3.5',
    );
    const before = pids(cluster);
    const r = await runBin(['kv', 'upgrade', '--to', '3.6', '--yes', '--cluster', file, '--target-bin', `3.6=${dirs!.v36}`, ...FAST], {
      env,
      timeout: 600_000,
    });
    expect(r.exitCode, String(r.stderr)).toBe(1);
    const named = [
      ...String(r.stderr).matchAll(
        /3\.5 → 3\.6 \[v3-removed-members\] member (etcd\d): \1 \([0-9a-f]+\) is a member, and marked removed in etcd\d's v3 store/g,
      ),
    ].map((x) => x[1]);
    // every member but the one the first bootstrap entry adds
    expect(new Set(named).size, String(r.stderr)).toBe(2);
    expect(String(r.stderr)).toMatch(/fix: on 3\.5, replace each named member/);
    expect(pids(cluster)).toEqual(before);
    for (const v of await servers(cluster)) expect(v).toMatch(/^3\.5\./);
  }, 900_000);
});
