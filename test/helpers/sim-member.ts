import { build } from 'esbuild';
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The simulated member with the tests' conditions (packages/etcd-sim/testing/member-with-conditions.ts:
 * a CONDITIONS.json in a member's data dir makes it sick, corrupt, alarmed, …), built once per run
 * beside the etcd releases' cache and handed to every sandbox of the run through OPSCTL_KV_MEMBER, as a
 * user would point opsctl at another member program. The product builds the member without it.
 */
export async function prepareSimMember(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const dir = join(REPO, 'node_modules', '.cache', 'opsctl-test');
  mkdirSync(dir, { recursive: true });
  const out = join(dir, 'kv-member-with-conditions.cjs');
  // Built beside it and renamed into place: another run's members (a run of the suite inside a test of the
  // suite, test/integration/suite-collect.test.ts) may be starting from the file at that moment.
  const part = `${out}.part-${process.pid}`;
  await build({
    entryPoints: [join(REPO, 'packages', 'etcd-sim', 'testing', 'member-with-conditions.ts')],
    outfile: part,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    tsconfig: join(REPO, 'tsconfig.json'),
    logLevel: 'error',
  });
  if (!existsSync(part)) throw new Error(`the simulated member with conditions was not built (${part})`);
  renameSync(part, out);
  env.OPSCTL_KV_MEMBER = out;
  return out;
}
