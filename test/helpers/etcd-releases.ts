import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The real etcd 3.2.32 and 3.3.27 releases of the seed's upgrade (../shared/etcd beside the
 * checkout, or OPSCTL_ETCD_ARCHIVES), extracted once into a cache outside the work tree. Tests find
 * them through OPSCTL_ETCD_32_DIR / OPSCTL_ETCD_33_DIR (set by the caller, else by the vitest global
 * setup); a checkout without the archives skips those cases loudly (fails under OPSCTL_REQUIRE_E2E=1).
 */
export const ETCD_RELEASES = [
  { env: 'OPSCTL_ETCD_32_DIR', version: '3.2.32' },
  { env: 'OPSCTL_ETCD_33_DIR', version: '3.3.27' },
] as const;

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** OPSCTL_ETCD_ARCHIVES, else the nearest shared/etcd beside the checkout or one of its parents. */
export function archivesDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.OPSCTL_ETCD_ARCHIVES) return resolve(env.OPSCTL_ETCD_ARCHIVES);
  for (let dir = resolve(REPO, '..'); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'shared', 'etcd'))) return join(dir, 'shared', 'etcd');
    if (dirname(dir) === dir) return resolve(REPO, '..', 'shared', 'etcd');
  }
}

/** The cache: node_modules/.cache/opsctl-etcd when node_modules exists, else the temp dir. */
export function cacheDir(): string {
  const nm = join(REPO, 'node_modules');
  return existsSync(nm) ? join(nm, '.cache', 'opsctl-etcd') : join(tmpdir(), 'opsctl-etcd-cache');
}

/**
 * Extracts each archive that is present and not yet extracted (into a temp dir renamed into place,
 * so a crash mid-way never leaves half a release) and sets the env vars that are not set yet.
 * Returns what it did, one line per release.
 */
export function prepareEtcdReleases(env: NodeJS.ProcessEnv = process.env): string[] {
  const out: string[] = [];
  const src = archivesDir(env);
  for (const r of ETCD_RELEASES) {
    if (env[r.env]) {
      out.push(`${r.env}=${env[r.env]} (given)`);
      continue;
    }
    const name = `etcd-v${r.version}-linux-amd64`;
    const archive = join(src, `${name}.tar.xz`);
    const dest = join(cacheDir(), name);
    if (!existsSync(join(dest, 'etcd'))) {
      if (!existsSync(archive)) {
        out.push(`${r.env}: ${archive} is missing`);
        continue;
      }
      const part = `${dest}.part-${process.pid}`;
      rmSync(part, { recursive: true, force: true });
      mkdirSync(part, { recursive: true });
      execFileSync('tar', ['-xJf', archive, '-C', part], { stdio: 'pipe' });
      rmSync(dest, { recursive: true, force: true });
      renameSync(join(part, name), dest);
      rmSync(part, { recursive: true, force: true });
    }
    env[r.env] = dest;
    out.push(`${r.env}=${dest}`);
  }
  return out;
}

/**
 * The directories of the real 3.2 and 3.3 releases, or undefined (after a loud skip notice); under
 * OPSCTL_REQUIRE_E2E=1 a missing release throws.
 */
export function etcdReleaseDirs(env: NodeJS.ProcessEnv = process.env): { v32: string; v33: string } | undefined {
  const missing = ETCD_RELEASES.filter((r) => !env[r.env] || !existsSync(join(env[r.env]!, 'etcd')) || !existsSync(join(env[r.env]!, 'etcdctl')));
  if (!missing.length) return { v32: env.OPSCTL_ETCD_32_DIR!, v33: env.OPSCTL_ETCD_33_DIR! };
  const why = missing.map((r) => `${r.env} (etcd ${r.version}) ${env[r.env] ? `= ${env[r.env]} has no etcd/etcdctl` : 'is not set'}`).join('; ');
  const fix = `put etcd-v3.2.32/3.3.27-linux-amd64.tar.xz in ${archivesDir(env)} (or OPSCTL_ETCD_ARCHIVES), or set the variables to extracted release dirs`;
  if (env.OPSCTL_REQUIRE_E2E === '1') throw new Error(`real etcd 3.2/3.3 are required (OPSCTL_REQUIRE_E2E=1): ${why}: ${fix}`);
  process.stderr.write(`\n*** SKIPPING real etcd 3.2 → 3.3 tests: ${why}: ${fix} ***\n\n`);
  return undefined;
}
