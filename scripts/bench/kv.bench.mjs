// kv upgrade of a 3-member simulated sandbox: orchestration overhead (everything opsctl does itself:
// pre-flight, snapshots + verification, journal writes, final checks) against the waits the cluster
// imposes (a member stopping, starting until healthy and caught up, settling, the cluster version
// moving). Uses the executor's own per-step report. Budget: overhead <= 20% of the imposed waits.
import { rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

export default async function kvBench(report, { BIN, tempDir }) {
  const rounds = Number(process.env.BENCH_KV_ROUNDS ?? 7);
  const ratios = [];
  let last;
  for (let r = 0; r < rounds; r++) {
    const dir = tempDir('opsctl-bench-kv-');
    const env = { ...process.env, NO_COLOR: '1', OPSCTL_CONFIG_DIR: dir };
    const run = (...args) => spawnSync(process.execPath, [BIN, ...args], { env, encoding: 'utf8', timeout: 90_000 });
    try {
      const up = run('kv', 'sandbox', 'up', '--members', '3', '--kv-version', '3.2');
      if (up.status !== 0) throw new Error(`sandbox up failed: ${up.stderr}`);
      const res = run('kv', 'upgrade', '--to', '3.3', '--settle', 'auto', '--poll-interval', '25ms', '--json');
      if (res.status !== 0) throw new Error(`kv upgrade exited ${res.status}: ${res.stderr}`);
      last = JSON.parse(res.stdout).totals;
      ratios.push(last.overheadMs / last.imposedMs);
    } finally {
      run('kv', 'sandbox', 'down');
      rmSync(dir, { recursive: true, force: true });
    }
  }
  ratios.sort((a, b) => a - b);
  const median = ratios[Math.floor(ratios.length / 2)];
  console.log(`   last run: total ${last.ms} ms, imposed waits ${last.imposedMs} ms, overhead ${last.overheadMs} ms`);
  console.log(`   overhead ratios: ${ratios.map((r) => `${(r * 100).toFixed(0)}%`).join(' ')} (wall-clock: a busy machine inflates them)`);
  report.row('kv upgrade 3.2→3.3, 3-member sandbox: overhead over imposed waits', `${(median * 100).toFixed(0)}% (median of ${rounds})`, '<= 20%', median <= 0.2);
}
