import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type RealTestCluster } from '../framework/index.js';
import { etcdLadderDirs, PINNED_ETCD } from '../helpers/etcd-releases.js';

const dirs = etcdLadderDirs();

/**
 * Issue 56 (kv-rehearse), TLS members: client and peer certificates (client-cert-auth on both), on real
 * 3.5.35 → 3.6.16, a command-driver cluster on this machine with a settings template. The clone's members
 * start with their own certificates where they are (the files stay on this host; nothing is copied but the
 * data dirs), and opsctl's run on the clone reaches them with the cluster file's client certificate, as the
 * real run does. The cluster's members are the same processes after the rehearsal.
 */
describe.runIf(Boolean(dirs))(`kv upgrade --rehearse: TLS members with client certificates (real ${PINNED_ETCD['3.5']} → ${PINNED_ETCD['3.6']})`, () => {
  let c: RealTestCluster;
  let file: string;
  const opsctl = (...args: string[]) => c.opsctl(...args);

  beforeAll(async () => {
    c = await startCluster({
      members: 'real',
      size: 3,
      version: '3.5',
      tls: { clientCn: 'root' },
      bins: { '3.5': dirs!.v35, '3.6': dirs!.v36 },
      file: (real) => ({ extra: ['trial: sh -s', `settings: echo --config-file=${real.dir}/{name}/etcd.yaml`] }),
      timeout: 600_000,
    });
    file = c.file;
  }, 120_000);

  afterAll(() => c?.destroy());

  it("the whole plan passes on the clone with the members' own certificates; the cluster untouched", async () => {
    const pids = c.members.map((m) => c.pid(m));
    const r = await opsctl('kv', 'upgrade', '--to', '3.6', '--rehearse', '--no-backup', '--cluster', file);
    const said = `${String(r.stdout)}\n${String(r.stderr)}`;
    expect(r.exitCode, said).toBe(0);
    expect(said).toMatch(/rehearsal: passed on a clone of the cluster in [\d.]+ s \(copy [\d.]+ s\): 3\.5 → 3\.6, (\d+) writes acknowledged, 0 lost/);
    expect(Number(/(\d+) writes acknowledged, 0 lost/.exec(said)![1])).toBeGreaterThan(0);
    expect(c.members.map((m) => c.pid(m))).toEqual(pids);
    const v = JSON.parse(String((await opsctl('kv', 'version', '--cluster', file, '--json')).stdout)) as Array<{ server: string }>;
    expect(v.map((m) => m.server)).toEqual([PINNED_ETCD['3.5'], PINNED_ETCD['3.5'], PINNED_ETCD['3.5']]);
  }, 600_000);
});
