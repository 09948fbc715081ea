// The rehearsal's cost (issue kv-rehearse), on real binaries: a fresh 3-member 3.5.35 cluster (the command
// driver, its start per version printed by a settings template: the production shape of a rehearsed run) with
// 0 and with 100 MB of v3 data (1 MiB values), 3.5 → 3.6. Three times, side by side:
// - the rehearsal, run by `kv upgrade --rehearse --json`: the whole plan on a clone (the copy, the clone's members,
//   its looks and checks, the hop, its writer and /health probe), timed by opsctl from its start (once the cluster
//   was looked at, beside the plan's checks) to its verdict (the report's `rehearsed.ms`); the whole command, its
//   own looks, checks and trials included, timed beside it;
// - the real run that follows it on the same cluster (the kept verdict reused: the real run's own steps, with its
//   snapshots and settle waits; --no-backup, as a command driver without a backup template runs, and as the hand
//   procedure does: a snapshot, no data-dir copy);
// - the etcd guide's hand procedure on a second fresh cluster with the same data: per member a snapshot from a
//   live member (etcdctl), stop and wait for the process to exit, start the new binary, poll /health; then the
//   cluster version polled until 3.6.0.
// Budgets: the rehearsal at most the real run's own time (the whole real command); the real run within 1.2x of the
// hand procedure.
// Each is timed in BENCH_REHEARSE_ROUNDS rounds (default 3) and the medians compared: each run ends with etcd's
// leader raising the cluster version on its own monitor's tick (every 4 s on 3.5 and 3.6), so one run's wait for it
// is anywhere from 0 to 4 s (measured 2.1-2.8 s in runs of the same command); one round's ratio is mostly that draw.
// Skipped (not failed) without the releases.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { until as waitUntil } from './harness.mjs';
import { helpers } from './kv-etcd.bench.mjs';

const MB = 1024 * 1024;
const POLL_MS = 100;

export default async function kvRehearseBench(report, { BIN, ROOT }) {
  const h = await helpers(ROOT);
  h.prepareEtcdReleases(process.env);
  h.prepareLadderReleases(process.env);
  const dirs = h.etcdLadderDirs(process.env);
  if (!dirs) {
    report.row('kv upgrade --rehearse 3.5 → 3.6 vs the real run', 'skipped (no 3.5/3.6 releases)', '<= 1.0x', process.env.OPSCTL_REQUIRE_E2E !== '1');
    return;
  }
  const until = (check, what, timeoutMs = 180_000) => waitUntil(check, what, { timeoutMs, pollMs: POLL_MS });
  const json = async (url) => {
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
      return r.ok ? await r.json() : undefined;
    } catch {
      return undefined;
    }
  };
  const healthy = async (m) => (await json(`${m.clientUrl}/health`))?.health === 'true';
  const clusterVersion = async (c, want) => (await Promise.all(c.members.map((m) => json(`${m.clientUrl}/version`)))).every((v) => v?.etcdcluster === want);

  /** A fresh 3.5.35 cluster holding `size` bytes of v3 data. */
  async function fresh(size) {
    const c = await h.realCluster({ size: 3, bins: { 3.5: dirs.v35, 3.6: dirs.v36 } });
    try {
      for (const m of c.members) c.start(m, '3.5');
      await until(() => clusterVersion(c, '3.5.0'), 'the 3.5 cluster');
      const value = Buffer.alloc(MB, 0x61).toString('base64');
      for (let i = 0; i < size / MB; i++) {
        const res = await fetch(`${c.members[i % 3].clientUrl}/v3/kv/put`, {
          method: 'POST',
          body: JSON.stringify({ key: Buffer.from(`bench/${i}`).toString('base64'), value }),
        });
        if (!res.ok) throw new Error(`put ${i}: ${res.status}`);
      }
      return c;
    } catch (err) {
      c.destroy(); // only the PIDs this cluster started
      throw err;
    }
  }

  const timed = (f) => {
    const t0 = performance.now();
    f();
    return performance.now() - t0;
  };

  async function byHand(c) {
    // The guide's order: one member at a time; the leader is not treated specially.
    const t0 = performance.now();
    for (const m of c.members) {
      const live = c.members.find((x) => x !== m);
      execFileSync(join(dirs.v35, 'etcdctl'), ['--endpoints', live.clientUrl, 'snapshot', 'save', join(c.dir, `${m.name}.db`)], {
        env: { PATH: '/usr/bin:/bin' },
        stdio: 'pipe',
      });
      c.stop(m);
      await until(() => !c.alive(m), `${m.name} to exit`);
      c.start(m, '3.6');
      await until(() => healthy(m), `${m.name} healthy`);
    }
    await until(() => clusterVersion(c, '3.6.0'), 'cluster version 3.6.0');
    return performance.now() - t0;
  }

  const rounds = Number(process.env.BENCH_REHEARSE_ROUNDS ?? 3);
  const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  for (const size of [0, 100 * MB]) {
    const label = `${size / MB} MB`;
    const times = { rehearsal: [], command: [], real: [], hand: [] };
    for (let round = 0; round < rounds; round++) {
      const t = await oneRound(size, label);
      for (const k of Object.keys(times)) times[k].push(t[k]);
    }
    const [rehearsal, command, real, hand] = [median(times.rehearsal), median(times.command), median(times.real), median(times.hand)];
    const s = (ms) => `${(ms / 1000).toFixed(1)} s`;
    const each = (k) => times[k].map(s).join(', ');
    console.log(
      `   ${label}, ${rounds} rounds: the rehearsal ${each('rehearsal')} (the whole --rehearse command ${each('command')}); the real run (the verdict reused) ${each('real')}; the hand procedure ${each('hand')}`,
    );
    console.log(
      `   ${label}: the whole --rehearse command vs the real run ${(command / real).toFixed(2)}x (medians; its looks, checks and trials are a run's own too)`,
    );
    report.row(
      `kv upgrade 3.5.35 → 3.6.16, 3 members, command driver, ${label}: the rehearsal (its start to its verdict) vs the real run (medians of ${rounds})`,
      `${(rehearsal / real).toFixed(2)}x (${s(rehearsal)} vs ${s(real)}; the hand procedure ${s(hand)})`,
      '<= 1.0x',
      rehearsal <= real,
    );
    report.row(
      `kv upgrade 3.5.35 → 3.6.16, 3 members, command driver, ${label}: the real run vs the hand procedure (medians of ${rounds})`,
      `${(real / hand).toFixed(2)}x (${s(real)} vs ${s(hand)})`,
      '<= 1.2x',
      real <= 1.2 * hand,
    );
  }

  /** One round at `size`: --rehearse then the real run on a fresh cluster, the hand procedure on another. */
  async function oneRound(size, label) {
    let rehearsal, command, real, hand;
    const a = await fresh(size);
    try {
      const cfg = join(a.dir, 'opsctl');
      const file = h.writeCommandClusterFile(join(a.dir, 'cluster.yaml'), a, {
        extra: ['trial: sh -s', `settings: echo --config-file=${a.dir}/{name}/etcd.yaml`],
      });
      const opsctl = (...args) =>
        execFileSync(process.execPath, [BIN, 'kv', 'upgrade', '--to', '3.6', '--cluster', file, '--poll-interval', `${POLL_MS}ms`, '--no-backup', ...args], {
          env: { ...process.env, OPSCTL_CONFIG_DIR: cfg, NO_COLOR: '1', CI: '1' },
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'pipe'],
          maxBuffer: 64 * MB,
          timeout: 900_000,
        });
      // (the rehearsal's own time, from its start beside the checks to its verdict, is its report's `rehearsed.ms`;
      // the whole --rehearse command, its looks, checks and trials included, is timed beside it)
      let out;
      command = timed(() => (out = opsctl('--rehearse', '--json')));
      rehearsal = JSON.parse(out).rehearsed?.ms;
      if (typeof rehearsal !== 'number') throw new Error(`${label}: --rehearse --json reported no rehearsal: ${out.slice(0, 400)}`);
      real = timed(() => opsctl('--yes'));
      await until(() => clusterVersion(a, '3.6.0'), `${label}: cluster version 3.6.0 after the real run`, 60_000);
    } finally {
      a.destroy();
    }
    const b = await fresh(size);
    try {
      hand = await byHand(b);
    } finally {
      b.destroy();
    }
    return { rehearsal, command, real, hand };
  }
}
