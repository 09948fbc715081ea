import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
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

/**
 * The versions of the ladder pinned in one place, scripts/etcd-versions.json (scripts/etcd-build.sh builds
 * them when called with no arguments; scripts/test-prereqs.sh does so).
 */
export const PINNED_ETCD: { '3.5': string; '3.6': string; '3.7': string } = JSON.parse(readFileSync(join(REPO, 'scripts', 'etcd-versions.json'), 'utf8')) as {
  '3.5': string;
  '3.6': string;
  '3.7': string;
};

/** The build cache of scripts/etcd-build.sh: OPSCTL_ETCD_BUILDS, else /var/tmp/opsctl-etcd-builds. */
export function buildsDir(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.OPSCTL_ETCD_BUILDS || '/var/tmp/opsctl-etcd-builds');
}

/**
 * The rest of the ladder: 3.4 is Debian's etcd-server/etcd-client (/usr/bin, any 3.4.x), 3.5, 3.6 and 3.7 the
 * pinned builds of scripts/etcd-build.sh (etcd, etcdctl and etcdutl). `version` is what `etcd --version`
 * must name: a prefix ending in "." matches any patch.
 */
export const LADDER_RELEASES = [
  { env: 'OPSCTL_ETCD_34_DIR', minor: '3.4', version: '3.4.', tools: ['etcd', 'etcdctl'], dir: () => '/usr/bin' },
  { env: 'OPSCTL_ETCD_35_DIR', minor: '3.5', version: PINNED_ETCD['3.5'], tools: ['etcd', 'etcdctl', 'etcdutl'], dir: buildsDir },
  { env: 'OPSCTL_ETCD_36_DIR', minor: '3.6', version: PINNED_ETCD['3.6'], tools: ['etcd', 'etcdctl', 'etcdutl'], dir: buildsDir },
  { env: 'OPSCTL_ETCD_37_DIR', minor: '3.7', version: PINNED_ETCD['3.7'], tools: ['etcd', 'etcdctl', 'etcdutl'], dir: buildsDir },
] as const;

const seenVersions = new Map<string, string | undefined>();

/** The version `DIR/etcd --version` names (its first line), or undefined when it does not run. */
export function etcdVersionOf(dir: string): string | undefined {
  if (seenVersions.has(dir)) return seenVersions.get(dir);
  let v: string | undefined;
  try {
    v = /^etcd Version: (\S+)$/m.exec(execFileSync(join(dir, 'etcd'), ['--version'], { stdio: 'pipe', timeout: 60_000 }).toString())?.[1];
  } catch {
    v = undefined;
  }
  seenVersions.set(dir, v);
  return v;
}

function versionMatches(found: string | undefined, wanted: string): boolean {
  return found !== undefined && (wanted.endsWith('.') ? found.startsWith(wanted) : found === wanted);
}

function ladderDefault(r: (typeof LADDER_RELEASES)[number], env: NodeJS.ProcessEnv): string {
  return r.minor === '3.4' ? r.dir() : join(buildsDir(env), `etcd-v${r.version}-linux-amd64`);
}

/**
 * Sets OPSCTL_ETCD_34_DIR / _35_ / _36_ / _37_ (those not set yet) to the release directories that are present
 * and whose etcd names the right version. Returns one line per release.
 */
export function prepareLadderReleases(env: NodeJS.ProcessEnv = process.env): string[] {
  const out: string[] = [];
  for (const r of LADDER_RELEASES) {
    if (env[r.env]) {
      out.push(`${r.env}=${env[r.env]} (given)`);
      continue;
    }
    const dir = ladderDefault(r, env);
    const found = existsSync(join(dir, 'etcd')) ? etcdVersionOf(dir) : undefined;
    if (versionMatches(found, r.version) && r.tools.every((t) => existsSync(join(dir, t)))) {
      env[r.env] = dir;
      out.push(`${r.env}=${dir} (etcd ${found})`);
    } else out.push(`${r.env}: ${dir} ${found ? `has etcd ${found}, not ${r.version}` : 'has no etcd'}`);
  }
  return out;
}

export interface LadderDirs {
  v32: string;
  v33: string;
  v34: string;
  v35: string;
  v36: string;
  v37: string;
}

/**
 * The directories of every release of the ladder (3.2.32, 3.3.27, Debian's 3.4, the pinned 3.5, 3.6 and 3.7), each
 * checked to hold its tools and to name its version; or undefined after a loud skip notice. Under
 * OPSCTL_REQUIRE_E2E=1 anything missing throws.
 */
export function etcdLadderDirs(env: NodeJS.ProcessEnv = process.env): LadderDirs | undefined {
  const problems: string[] = [];
  const check = (name: string, version: string, tools: readonly string[]): string | undefined => {
    const dir = env[name];
    if (!dir) return void problems.push(`${name} (etcd ${version}) is not set`);
    const lacking = tools.filter((t) => !existsSync(join(dir, t)));
    if (lacking.length) return void problems.push(`${name}=${dir} has no ${lacking.join(', ')}`);
    const found = etcdVersionOf(dir);
    if (!versionMatches(found, version)) return void problems.push(`${name}=${dir}: its etcd says ${found ?? 'nothing (does not run)'}, not ${version}`);
    return dir;
  };
  const dirs = {
    v32: check('OPSCTL_ETCD_32_DIR', '3.2.32', ['etcd', 'etcdctl']),
    v33: check('OPSCTL_ETCD_33_DIR', '3.3.27', ['etcd', 'etcdctl']),
    v34: check(LADDER_RELEASES[0].env, LADDER_RELEASES[0].version, LADDER_RELEASES[0].tools),
    v35: check(LADDER_RELEASES[1].env, LADDER_RELEASES[1].version, LADDER_RELEASES[1].tools),
    v36: check(LADDER_RELEASES[2].env, LADDER_RELEASES[2].version, LADDER_RELEASES[2].tools),
    v37: check(LADDER_RELEASES[3].env, LADDER_RELEASES[3].version, LADDER_RELEASES[3].tools),
  };
  if (!problems.length && dirs.v32 && dirs.v33 && dirs.v34 && dirs.v35 && dirs.v36 && dirs.v37) {
    return { v32: dirs.v32, v33: dirs.v33, v34: dirs.v34, v35: dirs.v35, v36: dirs.v36, v37: dirs.v37 };
  }
  const fix =
    `3.2/3.3: put the archives in ${archivesDir(env)}; 3.4: apt-get install etcd-server etcd-client; ` +
    `3.5/3.6/3.7: scripts/etcd-build.sh (Go + the module proxy; cache ${buildsDir(env)}), or set the variables to release dirs; ` +
    `scripts/test-prereqs.sh (as root) installs and builds all but the archives`;
  const why = problems.join('; ');
  if (env.OPSCTL_REQUIRE_E2E === '1') throw new Error(`real etcd 3.2 … 3.7 are required (OPSCTL_REQUIRE_E2E=1): ${why}: ${fix}`);
  process.stderr.write(`\n*** SKIPPING real etcd ladder (3.2 … 3.7) tests: ${why}: ${fix} ***\n\n`);
  return undefined;
}

/** The six minors of the ladder with their release directories, oldest first; none when `dirs` is not there. */
export function ladderVersions(dirs: LadderDirs | undefined): ReadonlyArray<readonly [string, string]> {
  return dirs
    ? [
        ['3.2', dirs.v32],
        ['3.3', dirs.v33],
        ['3.4', dirs.v34],
        ['3.5', dirs.v35],
        ['3.6', dirs.v36],
        ['3.7', dirs.v37],
      ]
    : [];
}

/** Whether minor `a` ("3.4") is `b` or later. */
export const minorAtLeast = (a: string, b: string) => Number(a.split('.')[1]) >= Number(b.split('.')[1]);
