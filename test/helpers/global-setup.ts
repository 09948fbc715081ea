import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepareEtcdReleases, prepareLadderReleases } from './etcd-releases.js';

/**
 * Runs once before the test workers start (they inherit this process's environment):
 * - end-to-end tests run the built binary: make sure it exists (npm test builds first);
 * - no test writes into the real home directory: HOME and the XDG directories point into a temporary
 *   directory for the whole run (opsctl's own files, Chromium's profile, dconf, caches), removed at the end;
 * - the real etcd 3.2/3.3 releases are extracted to a cache once (the workers inherit OPSCTL_ETCD_3x_DIR);
 * - Debian's 3.4 and the 3.5/3.6 builds of scripts/etcd-build.sh are found (OPSCTL_ETCD_34/35/36_DIR).
 */
export default function setup(): () => void {
  const cli = fileURLToPath(new URL('../../dist/cli.cjs', import.meta.url));
  if (!existsSync(cli)) throw new Error('dist/cli.cjs is missing: run `npm run build` (npm test does it for you)');

  const home = mkdtempSync(join(tmpdir(), 'opsctl-test-home-'));
  const dirs = {
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_RUNTIME_DIR: join(home, 'run'),
  };
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true, mode: 0o700 });
  process.env.OPSCTL_TEST_REAL_HOME = process.env.HOME ?? '';
  Object.assign(process.env, dirs);
  // dconf and other session services reach the real profile through the user's session bus.
  delete process.env.DBUS_SESSION_BUS_ADDRESS;
  try {
    prepareEtcdReleases(process.env);
  } catch (err) {
    // The tests that need them say so (and fail under OPSCTL_REQUIRE_E2E=1).
    process.stderr.write(`*** could not extract the etcd 3.2/3.3 archives: ${(err as Error).message} ***\n`);
  }
  prepareLadderReleases(process.env); // absent ones: the ladder tests say so (etcdLadderDirs)
  return () => rmSync(home, { recursive: true, force: true });
}
