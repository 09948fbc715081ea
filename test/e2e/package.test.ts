import { execa } from 'execa';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The two ways to install opsctl (`npm run package`), tried as an operator would: the single
 * executable on a host with no node (PATH holds only the executable and the few system tools a shell
 * has), and the npm tarball installed globally into an empty prefix. Each runs the demo, and the
 * executable runs a kv sandbox upgrade on its own (its simulated members are the executable itself).
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const OUT = join(ROOT, 'out');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const EXE = join(OUT, 'opsctl');
const TGZ = join(OUT, `opsctl-${VERSION}.tgz`);

let work: string;
let nodelessPath: string;
/** The package made while an executable at out/opsctl ran (the last test's case), when this file made it. */
let madeWhileRunning: Repackaged | undefined;

/** out/ is built here when missing or older than dist/ (`npm run package`; CI's clean clone has none). */
function packageIsCurrent(): boolean {
  if (!existsSync(EXE) || !existsSync(TGZ)) return false;
  const built = statSync(join(ROOT, 'dist', 'cli.cjs')).mtimeMs;
  return statSync(EXE).mtimeMs >= built && statSync(TGZ).mtimeMs >= built;
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'opsctl-package-'));
  // One package a run, not two: out/ made here is made while an executable at out/opsctl runs, as the last test asks
  // (a copy of this node serving HTTP: the single executable is a copy of node too); out/ already current is packaged
  // again there, under its own `mock serve`.
  if (!packageIsCurrent()) {
    madeWhileRunning = await repackageWhileRunning(cleanEnv(join(work, 'home-first-package'), '/usr/bin:/bin'), 'node');
    if (madeWhileRunning.exitCode !== 0) throw new Error(`npm run package failed (exit ${madeWhileRunning.exitCode}):\n${madeWhileRunning.output}`);
  }
  // a PATH with the executable and nothing else that could be node
  nodelessPath = join(work, 'bin');
  mkdirSync(nodelessPath);
  symlinkSync(EXE, join(nodelessPath, 'opsctl'));
}, 240_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

/** A clean environment: a fresh HOME, no NODE_* or npm variables, and the given PATH. */
function cleanEnv(home: string, path: string): Record<string, string> {
  mkdirSync(home, { recursive: true });
  return { PATH: path, HOME: home, TERM: 'dumb', NO_COLOR: '1', LANG: 'C.UTF-8' };
}

function run(file: string, args: string[], env: Record<string, string>) {
  return execa(file, args, { reject: false, env, extendEnv: false, cwd: env.HOME, timeout: 120_000 });
}

describe('the single executable (out/opsctl)', () => {
  it('is one file that runs with no node on the PATH', async () => {
    const env = cleanEnv(join(work, 'home-version'), nodelessPath);
    const which = await run('/bin/sh', ['-c', 'command -v node || echo none'], env);
    expect(which.stdout.trim()).toBe('none');
    const r = await run('opsctl', ['--version'], { ...env, PATH: nodelessPath });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(VERSION);
  });

  it('runs the chunks it ran at package time from the code compiled then: a first --help and list in a new home compile none of them', async () => {
    const home = join(work, 'home-baked');
    const env = cleanEnv(home, nodelessPath);
    for (const args of [
      ['--no-input', '--help'],
      ['tracker', 'labels', 'list'],
    ]) {
      const r = await run(join(nodelessPath, 'opsctl'), args, env);
      expect(r.exitCode, r.stderr).toBe(0);
      // what a run depends on is read when it runs: the embedded state lives under this run's home
      if (args[0] === 'tracker') expect(r.stderr).toContain(`state: ${home}/`);
    }
    // bin/load.cjs writes a chunk's code to the user's cache only when it compiled the chunk itself
    const written = existsSync(join(home, '.cache', 'opsctl', 'code'))
      ? readdirSync(join(home, '.cache', 'opsctl', 'code'), { recursive: true })
          .map(String)
          .filter((f) => f.endsWith('.v8'))
      : [];
    expect(written).toEqual([]);
    // a command not run at package time compiles its own chunk and keeps it in the user's cache, as dist/ does
    expect((await run(join(nodelessPath, 'opsctl'), ['help', 'exit-codes'], env)).exitCode).toBe(0);
    const later = readdirSync(join(home, '.cache', 'opsctl', 'code'), { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.v8'));
    expect(later.length).toBeGreaterThan(0);
  });

  it('holds no path of the build machine: not the checkout, not the staging directory of the package script', () => {
    const bytes = readFileSync(EXE);
    for (const path of [ROOT.replace(/\/$/, ''), '.out-build-', 'opsctl-sea-cache-']) expect(bytes.includes(path), path).toBe(false);
  });

  it('runs the whole demo against its embedded mocks', async () => {
    const env = cleanEnv(join(work, 'home-demo'), nodelessPath);
    const r = await run(join(nodelessPath, 'opsctl'), ['demo'], env);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    const out = `${r.stdout}\n${r.stderr}`;
    expect(out).toMatch(/kv: the upgrade ladder 3\.2 → 3\.7 of a local sandbox cluster, one safe rolling upgrade per minor: (\d+)\/\1 steps/);
    expect(out).not.toContain('✗');
    expectDemoLadder(out);
  }, 180_000);

  it('signs in against its embedded mock; with a D-Bus session it says it cannot carry the keyring binding and keeps the tokens in the 0600 file', async () => {
    const env = { ...cleanEnv(join(work, 'home-login'), nodelessPath), DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(work, 'no-bus')}` };
    const r = await run(join(nodelessPath, 'opsctl'), ['login', '--consent-as', 'alice@example.com'], env);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain('the single executable cannot load the keyring binding');
    const status = await run(join(nodelessPath, 'opsctl'), ['auth', 'status', '--json'], env);
    expect(status.exitCode, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ account: 'alice@example.com' });
    const files = readdirSync(join(work, 'home-login'), { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('credentials.json'));
    expect(files).toHaveLength(1);
    expect(statSync(join(work, 'home-login', files[0]!)).mode & 0o777).toBe(0o600);
  }, 120_000);

  it('brings a kv sandbox up, upgrades it 3.2 → 3.3 and takes it down, its members being the executable itself', async () => {
    const env = cleanEnv(join(work, 'home-kv'), nodelessPath);
    const opsctl = join(nodelessPath, 'opsctl');
    const up = await run(opsctl, ['kv', 'sandbox', 'up', '--members', '3', '--version', '3.2'], env);
    try {
      expect(up.exitCode, up.stderr).toBe(0);
      expect((await run(opsctl, ['kv', 'put', 'pkg/key', 'kept'], env)).exitCode).toBe(0);
      const upgrade = await run(opsctl, ['kv', 'upgrade', '--to', '3.3', '--yes', '--poll-interval', '100ms'], env);
      expect(upgrade.exitCode, upgrade.stderr).toBe(0);
      const status = await run(opsctl, ['kv', 'status', '--json'], env);
      expect(status.exitCode, status.stderr).toBe(0);
      expect(status.stdout).toContain('3.3');
      const get = await run(opsctl, ['kv', 'get', 'pkg/key'], env);
      expect(get.stdout.trim()).toContain('kept');
    } finally {
      const down = await run(opsctl, ['kv', 'sandbox', 'down'], env);
      expect(down.exitCode, down.stderr).toBe(0);
    }
  }, 180_000);
});

describe('what ships', () => {
  // Test knobs live in the tests and in packages/etcd-sim/testing: never in dist/ (the npm package) nor in
  // the single executable. The strings are the knobs' names as they were and as they are.
  const KNOBS = ['VITEST', 'FAULT.json', 'CONDITIONS.json', 'OPSCTL_TEST', 'opsctl-test:', 'OPSCTL_PAUSE', 'member-with-conditions'];

  it('carries no test knob: dist/ and out/opsctl hold none of their names', () => {
    const files = readdirSync(join(ROOT, 'dist'), { recursive: true })
      .map(String)
      .filter((f) => /\.(c?js|mjs)$/.test(f));
    expect(files.length).toBeGreaterThan(10);
    const found: string[] = [];
    for (const f of files) {
      const text = readFileSync(join(ROOT, 'dist', f), 'latin1');
      for (const k of KNOBS) if (text.includes(k)) found.push(`dist/${f}: ${k}`);
    }
    const exe = readFileSync(EXE).toString('latin1');
    for (const k of KNOBS) if (exe.includes(k)) found.push(`out/opsctl: ${k}`);
    expect(found).toEqual([]);
  });
});

describe('the npm package (out/opsctl-<version>.tgz)', () => {
  it('installs globally into an empty prefix, bringing only the keyring binding, and runs --version and the demo', async () => {
    const prefix = join(work, 'prefix');
    // --prefer-offline, not --offline: on a fresh machine npm's cache holds the keyring's tarballs (npm ci
    // fetched them by the lockfile's URLs) but not its registry metadata, which a tarball install resolves
    const install = await execa('npm', ['install', '--global', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', TGZ], { reject: false });
    expect(install.exitCode, install.stderr).toBe(0);
    // the published package.json carries no scripts (dist/ is built), so npm has no install script of ours to warn about
    expect(install.stderr).not.toMatch(/install.?scripts|opsctl@/i);
    const installed = JSON.parse(readFileSync(join(prefix, 'lib', 'node_modules', 'opsctl', 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(installed.scripts).toBeUndefined();
    expect(installed.devDependencies).toBeUndefined();
    // dist/ bundles every dependency but the keyring binding (a native addon, one prebuilt package per platform)
    expect(readdirSync(join(prefix, 'lib', 'node_modules'))).toEqual(['opsctl']);
    const nested = join(prefix, 'lib', 'node_modules', 'opsctl', 'node_modules');
    expect(readdirSync(nested)).toEqual(['@napi-rs']);
    expect(readdirSync(join(nested, '@napi-rs')).sort()).toEqual(['keyring', 'keyring-linux-x64-gnu']);
    const env = cleanEnv(join(work, 'home-npm'), `${join(prefix, 'bin')}:${dirnameOfNode()}:/usr/bin:/bin`);
    const version = await run('opsctl', ['--version'], env);
    expect(version.exitCode, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(VERSION);
    const demo = await run('opsctl', ['demo'], env);
    expect(demo.exitCode, `${demo.stdout}\n${demo.stderr}`).toBe(0);
    expect(`${demo.stdout}\n${demo.stderr}`).not.toContain('✗');
    expectDemoLadder(`${demo.stdout}\n${demo.stderr}`);
  }, 180_000);
});

describe('npm run package while out/opsctl runs', () => {
  it('replaces each file with one rename: the running executable keeps serving, the new one is in place, nothing half-made is left', async () => {
    const env = cleanEnv(join(work, 'home-repackage'), nodelessPath);
    // (made by beforeAll when out/ was missing or stale, else here: the package under a running out/opsctl either way)
    const made = madeWhileRunning ?? (await repackageWhileRunning(env, 'sea'));
    expect(made.exitCode, made.output).toBe(0);
    expect(made.servedAfter, made.ran).toBe(200);
    const r = await run('opsctl', ['--version'], env);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(VERSION);
    expect(readdirSync(ROOT).filter((n) => n.startsWith('.out-build-'))).toEqual([]);
  }, 300_000);
});

interface Repackaged {
  /** What ran from out/opsctl meanwhile. */
  ran: string;
  exitCode?: number;
  output: string;
  /** The running executable's answer (HTTP status) once the package was done. */
  servedAfter: number;
}

/**
 * `npm run package` while an executable at out/opsctl runs and serves HTTP: the current package's `mock serve`
 * ('sea'), or a copy of this node serving a page ('node': none made yet, or one older than dist/). Copying over a
 * running executable fails (ETXTBSY): the package renames its files into place instead, and the running one keeps
 * its file and serves on.
 */
async function repackageWhileRunning(env: Record<string, string>, running: 'sea' | 'node'): Promise<Repackaged> {
  const sea = running === 'sea';
  if (!sea) {
    mkdirSync(OUT, { recursive: true });
    rmSync(EXE, { force: true });
    copyFileSync(process.execPath, EXE);
    chmodSync(EXE, 0o755);
  }
  const server =
    "require('node:http').createServer((q, s) => s.end('ok')).listen(0, '127.0.0.1', function () { console.log(JSON.stringify({ url: `http://127.0.0.1:${this.address().port}` })) })";
  const [args, path, ran] = sea
    ? [['mock', 'serve', '--memory', '--json', '--port', '0'], '/.well-known/openid-configuration', 'out/opsctl mock serve']
    : [['-e', server], '/', 'out/opsctl, a copy of node serving HTTP'];
  const serving = execa(EXE, args, { reject: false, env, extendEnv: false, cwd: env.HOME });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      serving.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        const line = out.split('\n').find((l) => l.startsWith('{') && out.includes('\n'));
        if (line) resolve((JSON.parse(line) as { url: string }).url);
      });
      void serving.then((r) => reject(new Error(`${ran} exited ${r.exitCode}: ${String(r.stderr)}`)));
    });
    const pkg = await execa(process.execPath, [join(ROOT, 'scripts', 'package.mjs')], { cwd: ROOT, reject: false, all: true });
    return { ran, exitCode: pkg.exitCode, output: String(pkg.all), servedAfter: (await fetch(`${url}${path}`)).status };
  } finally {
    serving.kill('SIGTERM');
    await serving;
  }
}

/**
 * The demo's kv section as it printed it (each command echoed as `$ opsctl …`, then what it said): the plan shows
 * the five hops with their checks, the ladder ends on 3.7, every member on 3.7.3, and the key written on 3.2 is
 * read back. (The section's steps ran in process in an integration file of their own before; the demos here run
 * the same steps through both ways to install, so that file ran a sixth simulated ladder to prove what these do.)
 */
function expectDemoLadder(out: string): void {
  const said = new Map(
    out
      .split(/^\$ opsctl /m)
      .slice(1)
      .map((part) => {
        const nl = part.indexOf('\n');
        return [part.slice(0, nl), part.slice(nl + 1).replace(/^\(exit \d+[^)]*\)[\s\S]*$/m, '')] as const;
      }),
  );
  const plan = said.get('kv upgrade --to 3.7 --dry-run') ?? '';
  expect(plan).toMatch(/Ladder: 3\.2 → 3\.7 in 5 hops/);
  for (const hop of ['3.2 → 3.3', '3.3 → 3.4', '3.4 → 3.5', '3.5 → 3.6', '3.6 → 3.7']) expect(plan).toContain(hop);
  expect(plan).toContain('[v2store-check]');
  expect(plan).toContain('[experimental-removed]');
  expect(said.get('kv upgrade --to 3.7 --yes --poll-interval 50ms')).toMatch(/cluster upgraded to 3\.7 in 5 hops/);
  const status = said.get('kv status') ?? '';
  expect(status).toMatch(/3\.7\.3/);
  expect(status).not.toMatch(/3\.[2-6]\.\d/);
  expect(said.get('kv get demo/greeting')).toContain('hello from 3.2');
}

function dirnameOfNode(): string {
  return join(process.execPath, '..');
}
