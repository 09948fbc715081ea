import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { prepareEtcdReleases } from './etcd-releases.js';

/**
 * End-to-end tests run the built binary: make sure it exists (npm test builds first). The real etcd
 * 3.2/3.3 releases are extracted to a cache once per run; the workers inherit OPSCTL_ETCD_3x_DIR.
 */
export default function setup(): void {
  const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
  if (!existsSync(cli)) throw new Error('dist/cli.js is missing: run `npm run build` (npm test does it for you)');
  try {
    prepareEtcdReleases(process.env);
  } catch (err) {
    // The tests that need them say so (and fail under OPSCTL_REQUIRE_E2E=1).
    process.stderr.write(`*** could not extract the etcd 3.2/3.3 archives: ${(err as Error).message} ***\n`);
  }
}
