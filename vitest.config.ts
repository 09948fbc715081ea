import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import { deadlineScale } from './test/helpers/deadline.js';
import LongestFirst from './test/helpers/sequencer.js';

const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as { version: string };

/** Per-test budgets on an idle machine, stretched by the load when the run starts (test/helpers/deadline.ts). */
const scale = deadlineScale();
const budget = (ms: number) => Math.round(ms * scale);

/**
 * Three tiers, each a vitest project (`npm run test:unit`, `test:integration`, `test:e2e`; `npm test` runs all):
 * - unit: pure functions and each verb's run against a fake HTTP client; no child process, no socket
 *   beyond loopback fakes; the whole tier runs in seconds;
 * - integration: a live mock on port 0, opsctl's main() in process, simulated kv members, sh/ssh stand-ins;
 * - e2e: the built binary, real Chromium, real etcd, sshd in network namespaces, the OS keyring.
 */
/** The workspace packages resolve to their sources, as tsconfig.json's `paths` and esbuild (which reads them) do. */
const packages = fileURLToPath(new URL('./packages/', import.meta.url));

export default defineConfig({
  define: { __OPSCTL_VERSION__: JSON.stringify(pkg.version) },
  resolve: {
    alias: [
      { find: /^@opsctl\/mock$/, replacement: `${packages}mock/src/index.ts` },
      { find: /^@opsctl\/mock\/console$/, replacement: `${packages}mock/src/console.ts` },
      { find: /^@opsctl\/mock\/(.*)$/, replacement: `${packages}mock/src/$1` },
      { find: /^@opsctl\/shared\/(.*)$/, replacement: `${packages}shared/src/$1` },
      { find: /^@opsctl\/etcd-sim\/(.*)$/, replacement: `${packages}etcd-sim/src/$1` },
    ],
  },
  test: {
    pool: 'forks',
    // Vitest's default is one file at a time on a 2-core machine (cores - 1), but most files spend their
    // time waiting on child processes (etcd, chromium, the built binary): two at a time took the whole
    // suite from 814 s to 497 s there; and at two, a quarter of the files' time was still waiting, not CPU
    // (the CI of 2026-11-27: 3,779 s of files, 2,899 CPU s), so a third file runs in that time. A fourth did not
    // pay (2026-11-29, a whole run here: vitest 1,790 s at three, 1,830 s at four, 2,922 and 3,081 CPU s: the run is
    // CPU-bound, and two waiting-heavy files timed out at load 13). Every test takes its own free ports, directories
    // and namespaces, and waits for states with deadlines scaled by the load. OPSCTL_TEST_WORKERS=N sets another number.
    maxWorkers: Number(process.env.OPSCTL_TEST_WORKERS) || availableParallelism() + 1,
    // (isolate: false in the unit tier only: with it in every tier, 20 integration files took 54.5 → 38.1 s of CPU,
    // but a whole integration run failed 4 sign-in files that pass alone, with the embedded mock's in-process origin
    // new that day; not taken until a whole run on a quiet machine clears it)
    // The files that take longest start first (test/helpers/sequencer.ts): a fresh clone has no results cache, and
    // vitest's fallback (the largest file first) started the ladder and crash sweeps late, to run alone at the end.
    sequence: { sequencer: LongestFirst },
    reporters: ['default'],
    // OPSCTL_TEST_CPU=FILE: one JSON line per test file with its CPU, its children's included (test/helpers/cpu-usage.ts).
    setupFiles: process.env.OPSCTL_TEST_CPU ? ['test/helpers/cpu-usage.ts'] : [],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          // One module graph per worker instead of one per file: the tier's files import the same verbs, and
          // re-importing them per file was half its time (102–127 s → 55–59 s at load 10 on 2 cores, 75 files).
          // A unit test keeps no module-level state (process-state.test.ts guards src/; tests set env per call).
          isolate: false,
          testTimeout: budget(10_000),
          hookTimeout: budget(20_000),
          globalSetup: ['test/helpers/home-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          testTimeout: budget(90_000),
          hookTimeout: budget(120_000),
          globalSetup: ['test/helpers/global-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          // Three paths run with the path matrix (`npm run test:paths`, OPSCTL_PATHS=all), not in CI, each proven on the
          // same real binaries by a file CI runs: the sandbox's whole ladder 3.2 → 3.7 (each hop, fix and the rehearsal:
          // see the file), and 3.2 → 3.3 under the load client (kv-load-ladder's first hop, under the same client and two more);
          // and the matrix's ssh and systemd cell, 3.5 → 3.7 over real sshd in network namespaces (kv-ssh-hosts runs that driver in CI).
          exclude: [
            ...configDefaults.exclude,
            ...(process.env.OPSCTL_PATHS === 'all'
              ? []
              : ['test/e2e/kv-ladder-etcd.test.ts', 'test/e2e/kv-load-upgrade.test.ts', 'test/e2e/kv-paths-ssh-etcd.test.ts']),
            // the container driver on real podman: kv-containers-podman always (the acceptance: the ladder with a
            // writer, kills, the refusal, prune, downgrade, rollback); the rest of the suite, docker through podman's
            // Docker API among it, by `npm run test:containers` (every test/e2e/kv-containers-*.test.ts): past CI's budget
            ...(process.env.OPSCTL_CONTAINERS === '1' ? [] : ['test/e2e/kv-containers-!(podman).test.ts']),
          ],
          testTimeout: budget(240_000),
          hookTimeout: budget(240_000),
          globalSetup: ['test/helpers/global-setup.ts'],
        },
      },
    ],
  },
});
