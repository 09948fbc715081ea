import { execa, type ResultPromise } from 'execa';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * `npm run build` replaces dist/ whole (scripts/build.mjs builds beside it and renames it into place), so an
 * opsctl running from the checkout meanwhile never meets a half-built dist/ ("opsctl is not built"). Run in
 * a copy of the checkout (its sources and node_modules linked), so the tests' own dist/ is left alone.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const { createLoader } = createRequire(import.meta.url)('../../bin/load.cjs') as {
  createLoader(dist: string, env: NodeJS.ProcessEnv): { load(file: string): Record<string, () => unknown> };
};
let copy: string;

beforeAll(async () => {
  copy = mkdtempSync(join(tmpdir(), 'opsctl-atomic-build-'));
  for (const link of ['src', 'packages', 'scripts', 'node_modules']) symlinkSync(join(ROOT, link), join(copy, link));
  for (const file of ['package.json', 'tsconfig.json']) copyFileSync(join(ROOT, file), join(copy, file));
  mkdirSync(join(copy, 'bin'));
  for (const file of readdirSync(join(ROOT, 'bin'))) copyFileSync(join(ROOT, 'bin', file), join(copy, 'bin', file));
  // the copy starts from the tests' own build (the same sources, the same scripts/build.mjs: npm test built it), as a
  // copy, where a build of its own cost 7 s of CPU before any test ran; the tests below build it twice themselves
  cpSync(join(ROOT, 'dist'), join(copy, 'dist'), { recursive: true });
}, 300_000);
afterAll(() => rmSync(copy, { recursive: true, force: true }));

const opsctl = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  execa(process.execPath, [join(copy, 'bin', 'opsctl.cjs'), ...args], {
    reject: false,
    all: true,
    env: { NO_COLOR: '1', OPSCTL_CONFIG_DIR: join(copy, '.config'), ...env },
  });

describe('npm run build replaces dist/ whole', () => {
  it('the built binary run in a loop while the build runs twice: no run fails', async () => {
    let building = true;
    const runs: Array<{ args: string; exitCode?: number; out: string; during: boolean }> = [];
    // One loop, the three commands in turn, 250 ms between runs. Three loops back to back cost about 40 s of CPU beside
    // the two builds' 24 (the CI of 2026-11-27: 66.7 s for the file), and as much more as a loaded machine stretched
    // the builds; the instant between the two renames, which a loop meets only by chance, is the next test's, made
    // on purpose.
    const COMMANDS = [
      ['labels', '--help'],
      ['config', 'list'],
      ['help', 'exit-codes'],
    ];
    const loop = async () => {
      for (let i = 0; building; i++) {
        const args = COMMANDS[i % COMMANDS.length]!;
        const during = building;
        const r = await opsctl(args);
        runs.push({ args: args.join(' '), exitCode: r.exitCode, out: String(r.all), during });
        if (building) await new Promise((resolve) => setTimeout(resolve, 250));
      }
    };
    const loops = [loop()];
    try {
      for (let i = 0; i < 2; i++) {
        const b = await execa(process.execPath, ['scripts/build.mjs'], { cwd: copy, reject: false, all: true });
        expect(b.exitCode, String(b.all)).toBe(0);
      }
    } finally {
      building = false;
      await Promise.all(loops);
    }
    const failed = runs.filter((r) => r.exitCode !== 0);
    expect(failed.map((r) => `${r.args}: ${r.exitCode}: ${r.out.slice(0, 300)}`)).toEqual([]);
    expect(runs.filter((r) => r.during).length, 'runs while a build was under way').toBeGreaterThanOrEqual(6);
    for (const c of COMMANDS) expect(runs.filter((r) => r.during && r.args === c.join(' ')).length, c.join(' ')).toBeGreaterThanOrEqual(2);
    // one build kept aside (for processes started on it), no staging directory left behind
    const left = readdirSync(copy).filter((n) => n.startsWith('.dist-'));
    expect(left.filter((n) => n.startsWith('.dist-build-'))).toEqual([]);
    expect(left.filter((n) => n.startsWith('.dist-old-'))).toHaveLength(1);
    // readable by every user of the checkout, as a directory made in place is (not the 0700 of a temporary one)
    expect(statSync(join(copy, 'dist')).mode & 0o777).toBe(0o777 & ~process.umask());
  }, 600_000);

  it('started in the instant between the two renames (dist/ gone, the build under way): waits for the new dist/ and runs', async () => {
    const aside = join(copy, `.dist-old-${Date.now()}-1-0`);
    const stage = join(copy, `.dist-build-${process.pid}-swap`);
    mkdirSync(stage);
    renameSync(join(copy, 'dist'), aside);
    let run: ResultPromise | undefined;
    try {
      run = opsctl(['help', 'exit-codes']);
      let said = '';
      run.stderr!.on('data', (c: Buffer) => (said += c.toString()));
      // the condition: it has said that it waits for the build (it would have failed at once before)
      const deadline = Date.now() + 60_000;
      while (!said.includes('waiting for the build') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(said).toContain('waiting for the build of this checkout that is under way');
    } finally {
      renameSync(aside, join(copy, 'dist'));
      rmSync(stage, { recursive: true, force: true });
    }
    const r = await run;
    expect(r.exitCode, String(r.all)).toBe(0);
    expect(String(r.stdout)).toContain('130');
    // no build under way: a missing dist/ is named at once, as before
    renameSync(join(copy, 'dist'), aside);
    try {
      const unbuilt = await opsctl(['help', 'exit-codes']);
      expect(unbuilt.exitCode).toBe(1);
      expect(String(unbuilt.stderr)).toContain('opsctl is not built');
    } finally {
      renameSync(aside, join(copy, 'dist'));
    }
  }, 120_000);

  it('a process started on the build a rebuild replaced still loads its later chunks (from the build kept aside)', () => {
    const root = mkdtempSync(join(tmpdir(), 'opsctl-loader-'));
    try {
      const dist = join(root, 'dist');
      mkdirSync(join(dist, 'chunks'), { recursive: true });
      writeFileSync(join(dist, 'cli.cjs'), "exports.later = () => require('./chunks/verb-1111.cjs').built;");
      writeFileSync(join(dist, 'chunks', 'verb-1111.cjs'), "exports.built = 'the first build';");
      const cli = createLoader(dist, { NODE_DISABLE_COMPILE_CACHE: '1' }).load(join(dist, 'cli.cjs'));
      // the rebuild: dist/ moved aside whole, a new one (other chunk names) in its place
      renameSync(dist, join(root, `.dist-old-${Date.now()}-1-0`));
      mkdirSync(join(dist, 'chunks'), { recursive: true });
      writeFileSync(join(dist, 'cli.cjs'), "exports.later = () => require('./chunks/verb-2222.cjs').built;");
      writeFileSync(join(dist, 'chunks', 'verb-2222.cjs'), "exports.built = 'the second build';");
      expect(cli.later!()).toBe('the first build');
      expect(existsSync(join(dist, 'chunks', 'verb-1111.cjs'))).toBe(false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
