import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The order files start in (vitest.config.ts's `sequence.sequencer`). Vitest's own order runs a file that failed
 * last time first, then the longest last time, from its results cache in node_modules/.vite; a fresh clone (CI)
 * has none, so it falls back to the largest file first, which says little about how long a file takes: the
 * ladder and crash sweeps on real etcd (150 lines) started after 60 other e2e files and ran alone at the end.
 * So the files that took longest (wall seconds, measured one CI run: `.ci/run` prints them) start first, the
 * longest first, and every other file follows in vitest's own order. A file missing from the list costs
 * nothing but its place; a file in it that no longer exists is ignored.
 */
export const LONGEST_FIRST: readonly string[] = [
  // (the CI of 2026-11-27's slowest files, wall seconds two at a time, less what was taken off them since: the rollback
  // sweep's 3 s waits, a package and the paced loops; mostly waiting and CPU-heavy files alternate where the
  // times are close, so the first three workers do not all wait at once)
  'test/e2e/kv-containers-podman.test.ts', // 450-580 here at load 10 (not measured in CI yet: new there on 2026-11-28)
  'test/e2e/kv-s3-offsite.test.ts', // 138
  'test/e2e/kv-back-etcd.test.ts', // 137
  'test/e2e/kv-s3-stores.test.ts', // 115
  'test/integration/kv-ladder-sim.test.ts', // 102
  'test/e2e/kv-etcdctl-verbs.test.ts', // 104
  'test/e2e/kv-ssh-hosts.test.ts', // 99
  'test/integration/kv-gate-rounds.test.ts', // 95
  'test/e2e/kv-rehearse-etcd.test.ts', // 94
  'test/e2e/kv-orphan-start.test.ts', // 93
  'test/integration/kv-back-sim.test.ts', // 91
  'test/e2e/kv-crash-back-sim.test.ts', // 108, less the rollback sweep's waits
  'test/e2e/kv-paths-etcd.test.ts', // 90
  'test/e2e/kv-etcdctl-get.test.ts', // 85
  'test/integration/readme-examples.test.ts', // 84
  'test/e2e/kv-v2store-etcd.test.ts', // 84
  'test/integration/kv-upgrade.test.ts', // 78
  'test/e2e/kv-hop37-etcd.test.ts', // 75
  'test/e2e/kv-v3-membership-etcd.test.ts', // 70
  'test/e2e/package.test.ts', // 78, less one package
  'test/e2e/kv-wal-dir-etcd.test.ts', // 68
  'test/e2e/kv-report-chromium.test.ts', // 64
  'test/e2e/kv-crash-restore-sim.test.ts', // 61
  'test/e2e/kv-crash-etcd.test.ts', // 61
  'test/e2e/kv-snapshot-verify.test.ts', // 61
];

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = new Map(LONGEST_FIRST.map((f, i) => [f, i]));
    const at = (s: TestSpecification) => rank.get(relative(this.ctx.config.root, s.moduleId)) ?? Infinity;
    // (a stable sort: the files not in the list keep vitest's order, after the listed ones)
    return sorted
      .map((s, i) => [s, i] as const)
      .sort(([a, i], [b, j]) => at(a) - at(b) || i - j)
      .map(([s]) => s);
  }
}
