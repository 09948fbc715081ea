import { execa } from 'execa';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The suite itself on a fresh machine without any of the e2e prerequisites (issue 58): every test file of the
 * three tiers is collected, as `npm test` collects it, by test/helpers/collect-suite.mjs in a child process
 * where nothing is there:
 * - OPSCTL_TEST_ABSENT=1: every program the helpers look for (etcd, Chromium, sshd, ip, the keyring, zsh, fish,
 *   script, systemd-analyze, time, xdg-open, curl, openssl, man …) counts as not installed (test/helpers/e2e.ts);
 * - the etcd builds (OPSCTL_ETCD_BUILDS), the S3 servers (OPSCTL_S3_BUILD) and the 3.2/3.3 archives
 *   (OPSCTL_ETCD_ARCHIVES) are empty directories, and so is every OPSCTL_ETCD_3x_DIR (the extracted 3.2/3.3
 *   of an earlier run, Debian's 3.4 in /usr/bin);
 * - PATH holds only node's directory; OPSCTL_REQUIRE_E2E is unset; TMPDIR is a directory of this test's (a
 *   skipped block's body runs at collection too, and some make a temporary directory there).
 * Collection runs every file's top level and every describe block's body, skipped ones included, but no test
 * and no hook: a file that throws there (kv-crash-etcd.test.ts did: `describe.runIf` still runs its callback)
 * fails `npm test` on such a machine. Every file must load, and each missing prerequisite must say so.
 */
const REPO = fileURLToPath(new URL('../..', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'opsctl-suite-collect-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Every *.test.ts under `dir`, as vitest.config.ts's projects include them. */
function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((d) => d.isFile() && d.name.endsWith('.test.ts'))
    .map((d) => join(d.parentPath, d.name));
}

interface Collected {
  files: Array<{ file: string; project: string; errors: string[]; tests: number; skipped: number }>;
  unhandled: string[];
}

describe('the suite on a machine without any e2e prerequisite', () => {
  it('collects every test file of the three tiers with no load error, and says loudly what it skips', { timeout: 900_000 }, async () => {
    const none = join(root, 'none');
    const tmp = join(root, 'tmp');
    mkdirSync(none);
    mkdirSync(tmp);
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) {
      // not this run's own: vitest's worker variables, the CPU record of .ci/run, the CI switch, the member build
      if (/^(VITEST|TEST$|OPSCTL_)/.test(k)) continue;
      env[k] = v;
    }
    Object.assign(env, {
      PATH: dirname(process.execPath),
      TMPDIR: tmp,
      OPSCTL_TEST_ABSENT: '1',
      OPSCTL_ETCD_BUILDS: none,
      OPSCTL_S3_BUILD: none,
      OPSCTL_ETCD_ARCHIVES: none,
      ...Object.fromEntries(['32', '33', '34', '35', '36', '37'].map((v) => [`OPSCTL_ETCD_${v}_DIR`, none])),
      // the exhaustive variants CI leaves to npm run test:paths, test:crash, test:versions and test:containers, collected too: every file and test loads
      OPSCTL_PATHS: 'all',
      OPSCTL_CRASH: 'all',
      OPSCTL_VERSIONS: 'all',
      OPSCTL_CONTAINERS: '1',
    });
    const started = Date.now();
    // (no deadline of its own but the test's: collecting ~300 files took 18–42 s, about 25 s of CPU, on 2 busy cores)
    const r = await execa(process.execPath, [join(REPO, 'test', 'helpers', 'collect-suite.mjs')], { cwd: REPO, env, extendEnv: false, reject: false });
    const ms = Date.now() - started;
    const stderr = String(r.stderr);
    expect(r.exitCode, stderr.slice(-4000)).toBe(0);
    const out = JSON.parse(String(r.stdout).trim().split('\n').at(-1)!) as Collected;

    const broken = out.files.filter((f) => f.errors.length).map((f) => `${f.file}: ${f.errors[0]}`);
    expect(broken).toEqual([]);
    expect(out.unhandled).toEqual([]);
    const expected = ['unit', 'integration', 'e2e'].flatMap((tier) => testFiles(join(REPO, 'test', tier))).sort();
    expect(out.files.map((f) => f.file).sort()).toEqual(expected);
    // the file of the issue: its three tests collected and skipped
    expect(out.files.find((f) => f.file.endsWith('/kv-crash-etcd.test.ts'))).toMatchObject({ tests: 5, skipped: 5 });

    const notices = [...stderr.matchAll(/\*\*\* SKIPPING (.*?) \*\*\*/g)].map((m) => m[1]!);
    for (const what of [
      /^real etcd ladder \(3\.2 … 3\.7\) tests: /,
      /^real etcd 3\.2 → 3\.3 tests: /,
      /^etcd end-to-end tests: \/usr\/bin\/etcd is not installed/,
      /^chromium end-to-end tests: /,
      /^script \(util-linux, for the pty tests\) end-to-end tests: /,
      /^S3-compatible server .*scripts\/s3-build\.sh/,
      /^dbus-run-session end-to-end tests: /,
      /^systemd-analyze /,
      /^GNU time /,
      /^xdg-open /,
      /^openssl end-to-end tests: /,
      /^man \(Debian: man-db\) /,
      /^the real etcd ladder 3\.2 → 3\.7: /,
      /^the real etcd ways back /,
      /^the real etcd v2store check: /,
      /^the ladder under client load: /,
    ])
      expect(
        notices.some((n) => what.test(n)),
        `a notice matching ${what}`,
      ).toBe(true);

    const tests = out.files.reduce((n, f) => n + f.tests, 0);
    const skipped = out.files.reduce((n, f) => n + f.skipped, 0);
    console.log(
      `suite collected without prerequisites in ${(ms / 1000).toFixed(1)} s: ${out.files.length} files, ${tests} tests, ${skipped} skipped; ` +
        `${notices.length} skip notices (${new Set(notices.map((n) => n.replace(/:.*/s, ''))).size} kinds)`,
    );
  });
});
