import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as { version: string };

export default defineConfig({
  define: { __OPSCTL_VERSION__: JSON.stringify(pkg.version) },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Vitest's default is one file at a time on a 2-core machine (cores - 1), but most files spend their
    // time waiting on child processes (etcd, chromium, the built binary): two at a time took the whole
    // suite from 814 s to 497 s there. Every test takes its own free ports, directories and namespaces.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    reporters: ['default'],
    globalSetup: ['test/helpers/global-setup.ts'],
  },
});
