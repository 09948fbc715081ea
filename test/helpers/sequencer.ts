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
  // (mostly waiting and CPU-heavy files alternate, so the first three workers do not all wait at once)
  'test/e2e/kv-back-etcd.test.ts',
  'test/e2e/kv-crash-etcd.test.ts',
  'test/e2e/kv-s3-offsite.test.ts',
  'test/e2e/kv-crash-back-sim.test.ts',
  'test/e2e/kv-etcdctl-get.test.ts',
  'test/integration/kv-ladder-sim.test.ts',
  'test/e2e/kv-ssh-hosts.test.ts',
  'test/e2e/package.test.ts',
  'test/e2e/kv-snapshot-verify.test.ts',
  'test/e2e/kv-s3-stores.test.ts',
  'test/e2e/kv-etcdctl-verbs.test.ts',
  'test/e2e/kv-load-ladder.test.ts',
  'test/e2e/api-gh.e2e.test.ts',
  'test/e2e/kv-report-chromium.test.ts',
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
