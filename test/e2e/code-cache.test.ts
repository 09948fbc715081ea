import { execa } from 'execa';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';

const { createLoader } = createRequire(import.meta.url)('../../bin/load.cjs') as {
  createLoader(dist: string, env: NodeJS.ProcessEnv): { stats: { dir?: string } };
};

const ROOT = join(import.meta.dirname, '..', '..');
const BUILD_ID = readFileSync(join(ROOT, 'dist', 'build-id'), 'utf8').trim();
const KEY = `${BUILD_ID}-${process.version}-${process.arch}`;

const temps: string[] = [];
function temp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'opsctl-code-cache-'));
  temps.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A dist/ of two chunks: the entry requires the other by relative path, a built-in, and a package. */
function fakeDist(id = '0123456789abcdef'): string {
  // inside the project, so Node's require finds the package in node_modules/ as it does for dist/
  mkdirSync(join(ROOT, '.opsctl-test'), { recursive: true });
  const dist = mkdtempSync(join(ROOT, '.opsctl-test', 'dist-'));
  temps.push(dist);
  mkdirSync(join(dist, 'chunks'));
  writeFileSync(join(dist, 'build-id'), `${id}\n`);
  writeFileSync(
    join(dist, 'cli.cjs'),
    "const { twice } = require('./chunks/a.cjs'); const { join } = require('node:path'); exports.answer = () => twice(21); exports.joined = join('a', 'b'); exports.yaml = typeof require('yaml').parse;",
  );
  writeFileSync(join(dist, 'chunks', 'a.cjs'), 'exports.twice = (n) => n * 2;');
  return dist;
}

const files = (dir: string) => readdirSync(dir).sort();

interface LoaderRun {
  answer: number;
  joined: string;
  yaml: string;
  stats: { cached: number; compiled: number; written: number; dir?: string };
}

/**
 * Loads a dist/'s cli.cjs with bin/load.cjs in a new node (V8 keeps compiled scripts in memory per
 * process, so a second load in this one would not read the cache at all), saves, and reports.
 */
async function loaderRun(dist: string, env: NodeJS.ProcessEnv, nodeFlags: string[] = []): Promise<LoaderRun> {
  const script = `
    const [load, dist, env] = process.argv.slice(1);
    const loader = require(load).createLoader(dist, JSON.parse(env));
    const e = loader.load(require('node:path').join(dist, 'cli.cjs'));
    loader.save();
    console.log(JSON.stringify({ answer: e.answer(), joined: e.joined, yaml: e.yaml, stats: loader.stats }));`;
  const r = await execa(process.execPath, [...nodeFlags, '-e', script, join(ROOT, 'bin', 'load.cjs'), dist, JSON.stringify(env)]);
  return JSON.parse(String(r.stdout)) as LoaderRun;
}

describe('bin/load.cjs: the chunks with a V8 code cache', () => {
  it('compiles and writes on the first run, and the next run compiles nothing (V8 took every cached chunk)', async () => {
    const dist = fakeDist();
    const cache = temp();
    const first = await loaderRun(dist, { OPSCTL_CODE_CACHE: cache });
    expect(first.answer).toBe(42);
    expect(first.joined).toBe(join('a', 'b'));
    expect(first.yaml).toBe('function'); // a package goes to Node's require, from the chunk's directory up
    const dir = join(cache, `0123456789abcdef-${process.version}-${process.arch}`);
    expect(first.stats).toEqual({ cached: 0, compiled: 2, written: 2, dir });
    expect(files(dir)).toEqual(['a.cjs.v8', 'cli.cjs.v8']);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'cli.cjs.v8')).mode & 0o777).toBe(0o600);

    const second = await loaderRun(dist, { OPSCTL_CODE_CACHE: cache });
    expect(second.answer).toBe(42);
    expect(second.stats).toMatchObject({ cached: 2, compiled: 0, written: 0 });
  });

  it('another build (another build-id, the same file names) never meets this cache', async () => {
    const cache = temp();
    const first = await loaderRun(fakeDist('aaaaaaaaaaaaaaaa'), { OPSCTL_CODE_CACHE: cache });
    const b = fakeDist('bbbbbbbbbbbbbbbb');
    writeFileSync(join(b, 'chunks', 'a.cjs'), 'exports.twice = (n) => n * 3;'); // same length, other code
    const second = await loaderRun(b, { OPSCTL_CODE_CACHE: cache });
    expect(second.answer).toBe(63);
    expect(second.stats).toMatchObject({ cached: 0, compiled: 2, written: 2 });
    expect(second.stats.dir).not.toBe(first.stats.dir);
  });

  it('a damaged cache file is refused by V8: the chunk compiles as without one, and its file is rewritten', async () => {
    const dist = fakeDist();
    const cache = temp();
    const first = await loaderRun(dist, { OPSCTL_CODE_CACHE: cache });
    const file = join(first.stats.dir!, 'cli.cjs.v8');
    const garbage = Buffer.alloc(statSync(file).size, 7);
    writeFileSync(file, garbage);
    const second = await loaderRun(dist, { OPSCTL_CODE_CACHE: cache });
    expect(second.answer).toBe(42);
    expect(second.stats).toMatchObject({ cached: 1, compiled: 1, written: 1 });
    expect(readFileSync(file).equals(garbage)).toBe(false);
    expect((await loaderRun(dist, { OPSCTL_CODE_CACHE: cache })).stats).toMatchObject({ cached: 2, compiled: 0 });
  });

  it('a cache that does not fit the running V8 (made under other flags, as another V8 would make it) is refused silently: compiled, rewritten', async () => {
    const dist = fakeDist();
    const cache = temp();
    // V8 keys cached code by its flags: the same Node version's directory, code another V8 configuration made
    const other = await loaderRun(dist, { OPSCTL_CODE_CACHE: cache }, ['--no-lazy-feedback-allocation']);
    expect(other.stats).toMatchObject({ cached: 0, compiled: 2, written: 2 });
    const file = join(other.stats.dir!, 'cli.cjs.v8');
    const before = readFileSync(file);
    const here = await loaderRun(dist, { OPSCTL_CODE_CACHE: cache });
    expect(here.answer).toBe(42);
    expect(here.stats).toMatchObject({ cached: 0, compiled: 2, written: 2 });
    expect(readFileSync(file).equals(before)).toBe(false);
    expect((await loaderRun(dist, { OPSCTL_CODE_CACHE: cache })).stats).toMatchObject({ cached: 2, compiled: 0, written: 0 });
  });

  it('a cache directory others may write is neither read nor written (cached code runs as the user)', async () => {
    const dist = fakeDist();
    const cache = temp();
    const first = await loaderRun(dist, { OPSCTL_CODE_CACHE: cache });
    chmodSync(first.stats.dir!, 0o777);
    const before = readFileSync(join(first.stats.dir!, 'cli.cjs.v8'));
    const second = await loaderRun(dist, { OPSCTL_CODE_CACHE: cache });
    expect(second.stats).toMatchObject({ cached: 0, compiled: 2, written: 0 });
    expect(readFileSync(join(first.stats.dir!, 'cli.cjs.v8')).equals(before)).toBe(true);
  });

  it('no cache: NODE_DISABLE_COMPILE_CACHE, a relative or empty root, a dist/ without a well-formed build-id', async () => {
    const cache = temp();
    for (const env of [{ OPSCTL_CODE_CACHE: cache, NODE_DISABLE_COMPILE_CACHE: '1' }, { OPSCTL_CODE_CACHE: 'relative/dir' }, { HOME: '' }]) {
      const r = await loaderRun(fakeDist(), env);
      expect(r.answer).toBe(42);
      expect(r.stats).toEqual({ cached: 0, compiled: 2, written: 0 });
    }
    const r = await loaderRun(fakeDist('../../etc'), { OPSCTL_CODE_CACHE: cache });
    expect(r.stats.dir).toBeUndefined();
    expect(readdirSync(cache)).toEqual([]);
  });

  it('the default place is $XDG_CACHE_HOME/opsctl/code, else ~/.cache/opsctl/code', () => {
    const dist = fakeDist();
    const key = `0123456789abcdef-${process.version}-${process.arch}`;
    expect(createLoader(dist, { XDG_CACHE_HOME: '/x/cache', HOME: '/home/u' }).stats.dir).toBe(join('/x/cache/opsctl/code', key));
    expect(createLoader(dist, { HOME: '/home/u' }).stats.dir).toBe(join('/home/u/.cache/opsctl/code', key));
  });
});

describe('the built binary with its code cache', () => {
  const run = (args: string[], env: NodeJS.ProcessEnv) => execa(process.execPath, [BIN, ...args], { env: { NO_COLOR: '1', ...env }, reject: false });

  it('a first run writes the cache, a second prints the same and writes nothing; a damaged cache changes nothing but is rewritten', async () => {
    const cfg = tempConfigDir();
    const cache = temp();
    try {
      const env = { OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_CODE_CACHE: cache };
      expect((await run(['tracker', 'labels', 'create', '--name', 'bug'], { OPSCTL_CONFIG_DIR: cfg.dir })).exitCode).toBe(0);
      const cold = await run(['tracker', 'labels', 'list', '--json=id,name'], env);
      expect(cold.exitCode, String(cold.stderr)).toBe(0);
      expect(JSON.parse(String(cold.stdout))).toEqual([{ id: 1, name: 'bug' }]);
      const dir = join(cache, KEY);
      const written = files(dir);
      expect(written).toContain('cli.cjs.v8');
      expect(written.every((f) => f.endsWith('.cjs.v8'))).toBe(true); // no temporary file left
      const stamp = (f: string) => statSync(join(dir, f)).mtimeMs;
      const old = Date.now() / 1000 - 3600;
      for (const f of written) utimesSync(join(dir, f), old, old);
      const times = written.map(stamp);

      const warm = await run(['tracker', 'labels', 'list', '--json=id,name'], env);
      expect(warm.exitCode).toBe(0);
      expect(String(warm.stdout)).toBe(String(cold.stdout));
      expect(String(warm.stderr)).toBe(String(cold.stderr));
      expect(files(dir)).toEqual(written);
      expect(written.map(stamp)).toEqual(times); // every chunk came from the cache: none compiled afresh

      for (const f of written) writeFileSync(join(dir, f), Buffer.alloc(statSync(join(dir, f)).size, 1));
      const damaged = await run(['tracker', 'labels', 'list', '--json=id,name'], env);
      expect(damaged.exitCode).toBe(0);
      expect(String(damaged.stdout)).toBe(String(cold.stdout));
      expect(String(damaged.stderr)).toBe(String(cold.stderr));
      expect(written.filter((f) => readFileSync(join(dir, f)).every((b) => b === 1))).toEqual([]);
    } finally {
      cfg.cleanup();
    }
  });

  it('a cache that cannot be made (a file in the way) or is turned off changes nothing the user sees', async () => {
    const cfg = tempConfigDir();
    const base = temp();
    try {
      writeFileSync(join(base, 'file'), '');
      await run(['tracker', 'labels', 'list'], { OPSCTL_CONFIG_DIR: cfg.dir }); // the embedded mock's first-use notice
      const plain = await run(['tracker', 'labels', 'list', '--json'], {
        OPSCTL_CONFIG_DIR: cfg.dir,
        NODE_DISABLE_COMPILE_CACHE: '1',
        OPSCTL_CODE_CACHE: join(base, 'off'),
      });
      expect(plain.exitCode).toBe(0);
      expect(readdirSync(base)).toEqual(['file']);
      const blocked = await run(['tracker', 'labels', 'list', '--json'], { OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_CODE_CACHE: join(base, 'file', 'cache') });
      expect(blocked.exitCode).toBe(0);
      expect(String(blocked.stdout)).toBe(String(plain.stdout));
      expect(String(blocked.stderr)).toBe(String(plain.stderr));
    } finally {
      cfg.cleanup();
    }
  });

  it('a new build keeps the caches of the 2 most recently written other builds and removes older ones; other entries stay', async () => {
    const cfg = tempConfigDir();
    const cache = temp();
    try {
      const now = Date.now() / 1000;
      const others = ['1111111111111111', '2222222222222222', '3333333333333333', '4444444444444444'].map((id, i) => {
        const name = `${id}-v20.0.0-x64`;
        mkdirSync(join(cache, name));
        utimesSync(join(cache, name), now - 1000 * (i + 1), now - 1000 * (i + 1));
        return name;
      });
      mkdirSync(join(cache, 'notes'));
      // (through the CLI: a bare --help is printed by the launcher, which compiles nothing)
      const r = await run(['--no-input', '--help'], { OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_CODE_CACHE: cache });
      expect(r.exitCode).toBe(0);
      expect(files(cache)).toEqual([KEY, ...others.slice(0, 2), 'notes'].sort());
    } finally {
      cfg.cleanup();
    }
  });
});
