import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { prepareEtcdReleases, prepareLadderReleases } from './etcd-releases.js';
import { isolateHome } from './home-setup.js';
import { prepareSimMember } from './sim-member.js';

/**
 * The integration and e2e tiers' global setup; runs once before the test workers start (they inherit this
 * process's environment):
 * - end-to-end tests run the built binary: make sure it exists (npm test builds first);
 * - HOME and the XDG directories point into a temporary directory for the whole run (home-setup.ts);
 * - the real etcd 3.2/3.3 releases are extracted to a cache once (the workers inherit OPSCTL_ETCD_3x_DIR);
 * - Debian's 3.4 and the 3.5/3.6/3.7 builds of scripts/etcd-build.sh are found (OPSCTL_ETCD_34/35/36/37_DIR);
 * - the simulated member with the tests' conditions is built (sim-member.ts; OPSCTL_KV_MEMBER).
 */
export default async function setup(): Promise<() => void> {
  const cli = fileURLToPath(new URL('../../dist/cli.cjs', import.meta.url));
  if (!existsSync(cli)) throw new Error('dist/cli.cjs is missing: run `npm run build` (npm test does it for you)');
  const cleanup = isolateHome();
  try {
    prepareEtcdReleases(process.env);
  } catch (err) {
    // The tests that need them say so (and fail under OPSCTL_REQUIRE_E2E=1).
    process.stderr.write(`*** could not extract the etcd 3.2/3.3 archives: ${(err as Error).message} ***\n`);
  }
  prepareLadderReleases(process.env); // absent ones: the ladder tests say so (etcdLadderDirs)
  await prepareSimMember(process.env);
  return cleanup;
}
