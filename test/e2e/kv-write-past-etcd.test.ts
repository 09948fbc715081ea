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
 * Command-driver clusters (members opsctl does not start itself: a control script, as systemd units over ssh
 * are) with the cluster's own monitoring (a /health probe of every member every 200 ms) and a writer running:
 * - 3.5 → 3.7, the upgrade most clusters need: every 3.5 start leaves a v2 request in the member's WAL that 3.7
 *   cannot replay until a snapshot on 3.6 covers it. Before: refused by the chained 3.7 data trial.
 * - 3.4 → 3.6: 3.4 answers every /health with a v2 QGET through raft, which 3.6 refuses to replay ("detected
 *   disallowed v2 WAL"). Before: "Nothing blocks it", hop 1, then refused with the members on 3.5.
 * opsctl cannot restart these members with snapshot-count 1, so it writes past (raft entries without a key until
 * each member saves a snapshot, the helper's snapshot-count 10,000): no stop.
 */
const CASES = [
  { from: '3.5', to: '3.7', bins: () => ({ '3.5': dirs!.v35, '3.6': dirs!.v36, '3.7': dirs!.v37 }), pastOn: '3.6' },
  { from: '3.4', to: '3.6', bins: () => ({ '3.4': dirs!.v34, '3.5': dirs!.v35, '3.6': dirs!.v36 }), pastOn: '3.5' },
] as const;

describe.runIf(Boolean(dirs)).each(CASES)('$from → $to in one command on a command-driver cluster (real etcd)', ({ from, to, bins, pastOn }) => {
  const cfg = tempConfigDir('opsctl-write-past-e2e-');
  let c: RealCluster;
  let file: string;
  const opsctl = (...args: string[]) =>
    execa(process.execPath, [BIN, ...args], { reject: false, env: { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1' }, extendEnv: true, timeout: 600_000 });
  let past = '';
  const healthy = async () => (await opsctl('kv', 'health', '--cluster', file)).exitCode === 0;

  beforeAll(async () => {
    c = await realCluster({ size: 3, bins: bins() });
    for (const m of c.members) c.start(m, from);
    await until(() => c.members.every((m) => c.alive(m)), 30_000, `three ${from} members`);
    file = writeCommandClusterFile(join(cfg.dir, 'cluster.yaml'), c, { extra: ['trial: sh -s'] });
    await until(healthy, 60_000, 'the cluster healthy');
  }, 120_000);

  afterAll(() => {
    c?.destroy();
    cfg.cleanup();
  });

  it(`written past on ${pastOn} before the first ${to} start, no stop; the run gets there with monitoring and a writer, never two members down, 0 lost`, async () => {
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
      const dry = await opsctl('kv', 'upgrade', '--to', to, '--dry-run', '--no-backup', '--cluster', file);
      expect(dry.exitCode, String(dry.stderr)).toBe(0);
      const plan = String(dry.stdout).replace(/\s+/g, ' ');
      expect(plan).toMatch(/Nothing blocks it/);
      // 3.7: every member, its WAL not read from here; 3.6: what the chained data trial found after the 3.5 start
      expect(plan).toMatch(to === '3.7' ? /before the first 3\.7 start: every member written past, no stop/ : /before the hop: written past, no stop/);
      expect(plan).not.toMatch(/not possible from here/);

      const { maxDown, result: up } = await watchDown(c, () => opsctl('kv', 'upgrade', '--to', to, '--yes', '--no-backup', '--cluster', file));
      load.phase(to);
      await until(() => load.acknowledgedIn(to) >= 10, 60_000, `10 acknowledged writes on ${to}`);
      expect(up.exitCode, `${String(up.stdout)}\n${String(up.stderr)}`).toBe(0);
      const said = `${String(up.stdout)}\n${String(up.stderr)}`;
      past =
        new RegExp(`written past on ${pastOn.replace('.', '\\.')}: [\\d,]+ raft entries in \\d+ ms; a new snapshot on etcd1, etcd2, etcd3`).exec(said)?.[0] ??
        '';
      expect(past, said).not.toBe('');
      expect(maxDown).toBeLessThanOrEqual(1);
      const v = JSON.parse(String((await opsctl('kv', 'version', '--cluster', file, '--json')).stdout)) as Array<{ server: string; cluster: string }>;
      for (const m of v) expect(m).toMatchObject({ server: PINNED_ETCD[to], cluster: `${to}.0` });
    } finally {
      clearInterval(probe);
    }
    const r = await load.stop();
    process.stderr.write(`[kv write-past e2e] ${past}; writes acknowledged ${r.acknowledged}, lost ${r.lost}; /health answers ${probes}\n`);
    expect(r.lost, r.lostKeys.join(', ')).toBe(0);
    expect(r.badReads).toBe(0);
  }, 600_000);
});
