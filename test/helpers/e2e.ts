import { existsSync } from 'node:fs';

/**
 * E2E tests that need an installed program (Chromium, etcd) run when it is installed and otherwise
 * skip loudly; with OPSCTL_REQUIRE_E2E=1 (CI) a missing program fails instead.
 */
export function requireProgram(name: string, path: string): boolean {
  if (existsSync(path)) return true;
  if (process.env.OPSCTL_REQUIRE_E2E === '1') {
    throw new Error(`${name} is required (OPSCTL_REQUIRE_E2E=1) but ${path} is missing: install it (see .ci/run)`);
  }
  process.stderr.write(`\n*** SKIPPING ${name} end-to-end tests: ${path} is not installed ***\n\n`);
  return false;
}
