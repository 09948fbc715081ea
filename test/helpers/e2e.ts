import { existsSync } from 'node:fs';

/**
 * Whether the program at `path` is installed. OPSCTL_TEST_ABSENT=1 makes every program asked about here count
 * as not installed: the suite's own test (test/integration/suite-collect.test.ts) collects every file as on a
 * machine with none of the e2e prerequisites, and no test runs under it.
 */
export function installed(path: string): boolean {
  return process.env.OPSCTL_TEST_ABSENT !== '1' && existsSync(path);
}

/**
 * E2E tests that need an installed program (Chromium, etcd) run when it is installed and otherwise
 * skip loudly; with OPSCTL_REQUIRE_E2E=1 (CI) a missing program fails instead.
 */
export function requireProgram(name: string, path: string): boolean {
  if (installed(path)) return true;
  if (process.env.OPSCTL_REQUIRE_E2E === '1') {
    throw new Error(`${name} is required (OPSCTL_REQUIRE_E2E=1) but ${path} is missing: install it (scripts/test-prereqs.sh)`);
  }
  process.stderr.write(`\n*** SKIPPING ${name} end-to-end tests: ${path} is not installed ***\n\n`);
  return false;
}
