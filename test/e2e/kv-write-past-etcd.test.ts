import { execa } from 'execa';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { realCluster, watchDown, writeCommandClusterFile, type RealCluster } from '../helpers/etcd-cluster.js';
import { etcdLadderDirs, PINNED_ETCD } from '../helpers/etcd-releases.js';
import { until } from '../helpers/kv.js';
import { startLoad } from '../helpers/kv-load.js';

const dirs = etcdLadderDirs();

/**
 * The upgrade most clusters need, 3.5 → 3.7, in one command on a command-driver cluster (members opsctl does not
 * start itself: a control script, as systemd units over ssh are), with the cluster's own monitoring (a /health
 * probe of every member every 200 ms) and a writer running. Every 3.5 start leaves a v2 request in the member's
 * WAL that 3.7 cannot replay until a snapshot on 3.6 covers it; opsctl cannot restart these members with
 * snapshot-count 1, so it writes past (raft entries without a key until each member saves a snapshot): no stop.
 * Before this, the ladder said nothing blocks it and the first 3.7 start panicked ("unmarshal should never fail").
 */
describe.runIf(Boolean(dirs))(`3.5 → 3.7 in one command on a command-driver cluster (real ${PINNED_ETCD['3.5']} → ${PINNED_ETCD['3.7']})`, () => {
  const cfg = tempConfigDir('opsctl-write-past-e2e-');
  let c: RealCluster;
  let file: string;
  const opsctl = (...args: string[]) =>
    execa(process.execPath, [BIN, ...args], { reject: false, env: { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1' }, extendEnv: true, timeout: 600_000 });
  let past = '';
  const healthy = async () => (await opsctl('kv', 'health', '--cluster', file)).exitCode === 0;

  beforeAll(async () => {
    c = await realCluster({ size: 3, bins: { '3.5': dirs!.v35, '3.6': dirs!.v36, '3.7': dirs!.v37 } });
    for (const m of c.members) c.start(m, '3.5');
    await until(() => c.members.every((m) => c.alive(m)), 30_000, `three ${PINNED_ETCD['3.5']} members`);
    file = writeCommandClusterFile(join(cfg.dir, 'cluster.yaml'), c, { extra: ['trial: sh -s'] });
    await until(healthy, 60_000, 'the cluster healthy');
  }, 120_000);

  afterAll(() => {
    c?.destroy();
    cfg.cleanup();
  });

  it('the plan says each member is written past before the first 3.7 start; the run gets there with monitoring and a writer, never two members down, 0 lost', async () => {
    // the monitoring: every member's /health every 200 ms, from the start to the end
    let probes = 0;
    const probe = setInterval(() => {
      for (const e of c.endpoints)
        void fetch(`${e}/health`).then(
          (r) => (r.ok ? probes++ : undefined),
          () => undefined,
        );
    }, 200);
    const load = startLoad({ endpoints: c.endpoints });
    try {
      await until(() => load.acknowledgedIn('before') >= 20 && probes >= 6, 60_000, '20 acknowledged writes and some /health answers');
      const dry = await opsctl('kv', 'upgrade', '--to', '3.7', '--dry-run', '--no-backup', '--cluster', file);
      expect(dry.exitCode, String(dry.stderr)).toBe(0);
      const plan = String(dry.stdout).replace(/\s+/g, ' ');
      expect(plan).toMatch(/before the first 3\.7 start: every member written past, no stop/);
      expect(plan).not.toMatch(/not possible from here/);

      const { maxDown, result: up } = await watchDown(c, () => opsctl('kv', 'upgrade', '--to', '3.7', '--yes', '--no-backup', '--cluster', file));
      load.phase('3.7');
      await until(() => load.acknowledgedIn('3.7') >= 10, 60_000, '10 acknowledged writes on 3.7');
      expect(up.exitCode, `${String(up.stdout)}\n${String(up.stderr)}`).toBe(0);
      const said = `${String(up.stdout)}\n${String(up.stderr)}`;
      past = /written past on 3\.6: [\d,]+ raft entries in \d+ ms; a new snapshot on etcd1, etcd2, etcd3/.exec(said)?.[0] ?? '';
      expect(past, said).not.toBe('');
      expect(maxDown).toBeLessThanOrEqual(1);
      const v = JSON.parse(String((await opsctl('kv', 'version', '--cluster', file, '--json')).stdout)) as Array<{ server: string; cluster: string }>;
      for (const m of v) expect(m).toMatchObject({ server: PINNED_ETCD['3.7'], cluster: '3.7.0' });
    } finally {
      clearInterval(probe);
    }
    const r = await load.stop();
    process.stderr.write(`[kv write-past e2e] ${past}; writes acknowledged ${r.acknowledged}, lost ${r.lost}; /health answers ${probes}\n`);
    expect(r.lost, r.lostKeys.join(', ')).toBe(0);
    expect(r.badReads).toBe(0);
  }, 600_000);
});
