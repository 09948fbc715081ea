// The rehearsal's cost (issue kv-rehearse), on real binaries: a fresh 3-member 3.5.35 sandbox with 0 and with
// 100 MB of v3 data (1 MiB values), 3.5 → 3.6. `kv upgrade --rehearse` (the whole plan on a clone: the copy, the
// clone's members, the hop, its writer and /health probe) against the real run that follows it (the kept verdict
// reused: the real run's own steps, with its snapshots, backups and settle waits). Budget: the rehearsal at most the
// real run's own time. The real run against the guides' hand procedure is kv-etcd.bench.mjs's row (<= 1.2x).
// Skipped (not failed) without the releases.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { helpers } from './kv-etcd.bench.mjs';

const MB = 1024 * 1024;

export default async function kvRehearseBench(report, { BIN, ROOT }) {
  const h = await helpers(ROOT);
  h.prepareEtcdReleases(process.env);
  h.prepareLadderReleases(process.env);
  const dirs = h.etcdLadderDirs(process.env);
  if (!dirs) {
    report.row('kv upgrade --rehearse 3.5 → 3.6 vs the real run', 'skipped (no 3.5/3.6 releases)', '<= 1.0x', process.env.OPSCTL_REQUIRE_E2E !== '1');
    return;
  }
  for (const size of [0, 100 * MB]) {
    const cfg = mkdtempSync(join(tmpdir(), 'opsctl-bench-rehearse-'));
    const env = { ...process.env, OPSCTL_CONFIG_DIR: cfg, NO_COLOR: '1', CI: '1' };
    const opsctl = (...args) =>
      execFileSync(process.execPath, [BIN, ...args], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * MB });
    const timed = (...args) => {
      const t0 = performance.now();
      opsctl(...args);
      return performance.now() - t0;
    };
    try {
      const up = JSON.parse(opsctl('kv', 'sandbox', 'up', '--members', '3', '--etcd-bin', dirs.v35, '--json'));
      const endpoint = up.members[0].endpoint;
      // the data: 1 MiB values through the gateway (etcd's request limit is 1.5 MiB)
      const value = Buffer.alloc(MB, 0x61).toString('base64');
      for (let i = 0; i < size / MB; i++) {
        const res = await fetch(`${endpoint}/v3/kv/put`, {
          method: 'POST',
          body: JSON.stringify({ key: Buffer.from(`bench/${i}`).toString('base64'), value }),
        });
        if (!res.ok) throw new Error(`put ${i}: ${res.status}`);
      }
      const to36 = ['kv', 'upgrade', '--to', '3.6', '--target-bin', `3.6=${dirs.v36}`];
      const rehearsal = timed(...to36, '--rehearse');
      const real = timed(...to36, '--yes');
      const label = `${size / MB} MB`;
      console.log(`   ${label}: --rehearse ${(rehearsal / 1000).toFixed(1)} s; the real run (the verdict reused) ${(real / 1000).toFixed(1)} s`);
      report.row(
        `kv upgrade 3.5.35 → 3.6.16, 3 members, ${label}: --rehearse vs the real run`,
        `${(rehearsal / real).toFixed(2)}x (${(rehearsal / 1000).toFixed(1)} s vs ${(real / 1000).toFixed(1)} s)`,
        '<= 1.0x',
        rehearsal <= real,
      );
    } finally {
      try {
        opsctl('kv', 'sandbox', 'down');
      } catch {
        // (already down)
      }
      rmSync(cfg, { recursive: true, force: true });
    }
  }
}
