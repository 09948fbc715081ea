import { execa } from 'execa';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { startMock, trackerEnv } from '../helpers/mock.js';

const HOOKS = fileURLToPath(new URL('../helpers/record-modules.cjs', import.meta.url));

/** The packages bundled into the chunks a run of the binary ran (from each chunk's source map). */
async function loadedPackages(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Set<string>> {
  return (await loaded(args, env)).packages;
}

/** The packages bundled into the chunks a run loaded, and the Node built-in modules it loaded. */
async function loaded(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  /** stdout and stderr written to files of this directory, not pipes (read back after the run). */
  toFiles?: string,
): Promise<{ packages: Set<string>; builtins: Set<string>; sources: Set<string>; exitCode?: number; asyncLocalStorage: boolean }> {
  const argv = [process.execPath, '--require', HOOKS, BIN, ...args];
  // (the shell opens the files for it: execa's own file outputs are pipes it copies from)
  const run = toFiles
    ? await execa('sh', ['-c', 'exec "$@" >"$0/out" 2>"$0/err"', toFiles, ...argv], { env: { ...env, OPSCTL_RECORD_MODULES: '1' }, reject: false })
    : await execa(argv[0]!, argv.slice(1), { env: { ...env, OPSCTL_RECORD_MODULES: '1' }, reject: false });
  const r = toFiles ? { exitCode: run.exitCode, stderr: readFileSync(join(toFiles, 'err'), 'utf8') } : run;
  const builtinsLine = String(r.stderr)
    .split('\n')
    .find((l) => l.startsWith('builtins '));
  const builtins = new Set<string>(builtinsLine ? JSON.parse(builtinsLine.slice('builtins '.length)) : []);
  const files = String(r.stderr)
    .split('\n')
    // the chunks run (a chunk's code may come from another chunk's file: bin/load.cjs names each it runs)
    .filter((l) => l.startsWith('ran '))
    .map((l) => fileURLToPath(l.slice('ran '.length)))
    .filter((f) => f.includes('/dist/'));
  const packages = new Set<string>();
  const sources = new Set<string>();
  for (const file of files) {
    const map = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[] };
    for (const src of map.sources) {
      const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(src);
      if (m) packages.add(m[1]!);
      const own = /(?:^|\/)((?:packages\/[^/]+\/)?src\/.+)$/.exec(src);
      if (own && !m) sources.add(own[1]!);
    }
  }
  const asyncLocalStorage = String(r.stderr).split('\n').includes('als entered');
  return { packages, builtins, sources, exitCode: r.exitCode, asyncLocalStorage };
}

const HEAVY = [
  'undici',
  'conf',
  'ora',
  'execa',
  '@inquirer/prompts',
  '@inquirer/core',
  'open',
  'zod',
  'yaml',
  'playwright-core',
  '@aws-sdk/client-s3',
  '@aws-sdk/lib-storage',
  '@smithy/smithy-client',
];

describe('start-up stays cheap', () => {
  it('opsctl --version and -V are answered by the launcher: no chunk of dist/ loads, not even commander', async () => {
    for (const flag of ['--version', '-V']) {
      const r = await execa(process.execPath, ['--require', HOOKS, BIN, flag], { env: { OPSCTL_RECORD_MODULES: '1' }, reject: false });
      expect(r.exitCode).toBe(0);
      const files = String(r.stderr)
        .split('\n')
        .filter((l) => l.startsWith('loaded '));
      // (bin/help.cjs writes it: a pipe or a file with writeSync, not through Node's stream of stdout)
      expect(files.map((l) => l.replace(/^loaded .*\/(bin|dist)\//, '$1/'))).toEqual(['bin/opsctl.cjs', 'bin/help.cjs']);
    }
  });

  it("stdout and stderr that are a file are written with writeSync: --version, a help and an embedded list load neither node:net nor node:tty (making Node's stream loads both and every stream module); --version and a help do so on a pipe too", async () => {
    const cfg = tempConfigDir();
    try {
      for (const args of [['--version'], ['labels', '--help'], ['tracker', 'labels', 'list'], ['tracker', 'labels', 'get', '999']]) {
        const r = await loaded(args, { OPSCTL_CONFIG_DIR: cfg.dir }, cfg.dir);
        expect(r.exitCode, args.join(' ')).toBe(args.includes('get') ? 1 : 0);
        expect(r.builtins.has('net'), args.join(' ')).toBe(false);
        expect(r.builtins.has('tty'), args.join(' ')).toBe(false);
      }
      // (the launcher's one-shot answers: written whole, then the process ends)
      for (const args of [['--version'], ['labels', '--help']])
        expect((await loaded(args, { OPSCTL_CONFIG_DIR: cfg.dir })).builtins.has('net'), args.join(' ')).toBe(false);
    } finally {
      cfg.cleanup();
    }
  });

  it("a command's stdout and stderr that are a pipe are Node's own asynchronous stream: a reader that stops reading never stops the command's event loop (a member left down between its stop and its start, a Ctrl-C not heard)", async () => {
    const cfg = tempConfigDir();
    try {
      const r = await loaded(['tracker', 'labels', 'list'], { OPSCTL_CONFIG_DIR: cfg.dir });
      expect(r.exitCode).toBe(0);
      expect(r.builtins.has('net')).toBe(true);
    } finally {
      cfg.cleanup();
    }
  });

  it('a reader that stops early (a closed pipe) ends --version, a help and an embedded list quietly: exit 0, no error', async () => {
    const cfg = tempConfigDir();
    try {
      await execa(process.execPath, [BIN, 'tracker', 'labels', 'list'], { env: { OPSCTL_CONFIG_DIR: cfg.dir } });
      for (const args of [['--version'], ['kv', '--help'], ['tracker', 'labels', 'list']]) {
        // `true` has closed the pipe long before opsctl writes to it
        const r = await execa('bash', ['-c', '"$@" | true; echo "exit ${PIPESTATUS[0]}"', '_', process.execPath, BIN, ...args], {
          env: { OPSCTL_CONFIG_DIR: cfg.dir },
          reject: false,
        });
        expect(String(r.stdout), args.join(' ')).toBe('exit 0');
        expect(String(r.stderr), args.join(' ')).toBe('');
      }
    } finally {
      cfg.cleanup();
    }
  });

  it('a Node.js without process.getBuiltinModule (older than 20.16) is named with the fix, exit 1, not a stack trace', async () => {
    const old = 'data:text/javascript,delete process.getBuiltinModule';
    const r = await execa(process.execPath, ['--import', old, BIN, 'tracker', 'labels', 'list'], { reject: false });
    expect(r.exitCode).toBe(1);
    expect(String(r.stderr)).toContain(`opsctl needs Node.js 20.18.1 or later; this is ${process.version}`);
    expect(String(r.stderr)).toContain('single executable');
    expect(String(r.stderr)).not.toContain('TypeError');
  });

  it('a checkout whose dist/ was never built is named with the file and the fix, exit 1, not a stack trace', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'opsctl-unbuilt-'));
    try {
      mkdirSync(join(dir, 'bin'));
      for (const f of ['opsctl.cjs', 'load.cjs']) copyFileSync(join(dirname(BIN), f), join(dir, 'bin', f));
      const r = await execa(process.execPath, [join(dir, 'bin', 'opsctl.cjs'), 'tracker', 'labels', 'list'], { reject: false });
      expect(r.exitCode).toBe(1);
      expect(String(r.stderr)).toBe(`X opsctl is not built: ${join(dir, 'dist', 'cli.cjs')} is missing\n  run npm run build (or npm install) in ${dir}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the launcher's version is the one the CLI itself prints (commander, with another flag) and package.json's", async () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    const fast = await execa(process.execPath, [BIN, '--version'], { reject: false });
    const short = await execa(process.execPath, [BIN, '-V'], { reject: false });
    const full = await execa(process.execPath, [BIN, '--no-input', '--version'], { reject: false });
    expect(full.exitCode).toBe(0);
    expect(String(fast.stdout)).toBe(pkg.version);
    expect(String(short.stdout)).toBe(pkg.version);
    expect(String(full.stdout)).toBe(pkg.version);
  });

  it('a command line that names --version with anything else goes through the CLI (commander loads)', async () => {
    const pkgs = await loadedPackages(['--no-input', '--version']);
    expect(pkgs.has('commander')).toBe(true);
    for (const heavy of HEAVY) expect(pkgs.has(heavy), heavy).toBe(false);
  });

  it('opsctl --help loads none of them either (through the CLI: a flag before it)', async () => {
    const pkgs = await loadedPackages(['--no-input', '--help']);
    for (const heavy of HEAVY) expect(pkgs.has(heavy), heavy).toBe(false);
  });

  it("a command's --help is printed by the launcher from the build's texts (dist/help/): no chunk of dist/ loads, and the text is the CLI's own", async () => {
    for (const args of [['--help'], ['-h'], ['labels', '--help'], ['tracker', 'stories', 'create', '--help'], ['kv', 'get', '-h']]) {
      const r = await execa(process.execPath, ['--require', HOOKS, BIN, ...args], { env: { OPSCTL_RECORD_MODULES: '1' }, reject: false });
      expect(r.exitCode, args.join(' ')).toBe(0);
      const files = String(r.stderr)
        .split('\n')
        .filter((l) => l.startsWith('loaded '));
      expect(
        files.map((l) => l.replace(/^loaded .*\/(bin|dist)\//, '$1/')),
        args.join(' '),
      ).toEqual(['bin/opsctl.cjs', 'bin/help.cjs']);
      // a flag among the words sends the same help through commander and the command tree
      const live = await execa(process.execPath, [BIN, '--no-input', ...args], { reject: false });
      expect(live.exitCode).toBe(0);
      expect(String(r.stdout), args.join(' ')).toBe(String(live.stdout));
      expect(String(r.stdout)).toMatch(/^Usage: opsctl/);
    }
  });

  it('the S3 client loads only for an s3:// place: not for kv snapshot save --help, nor a local kv backups list', async () => {
    const cfg = tempConfigDir();
    try {
      for (const args of [
        ['kv', 'snapshot', 'save', '--help'],
        ['kv', 'backups', 'list'],
      ]) {
        const { packages, exitCode } = await loaded(args, { OPSCTL_CONFIG_DIR: cfg.dir });
        expect(exitCode, args.join(' ')).toBe(0);
        expect(
          [...packages].filter((p) => p.startsWith('@aws-sdk/') || p.startsWith('@smithy/')),
          args.join(' '),
        ).toEqual([]);
      }
      // and it does load for one (the unreachable endpoint fails after the SDK is loaded)
      const { packages } = await loaded(['kv', 'backups', 'list', '--from', 's3://backups/x', '--endpoint-url', 'http://127.0.0.1:1'], {
        OPSCTL_CONFIG_DIR: cfg.dir,
        AWS_ACCESS_KEY_ID: 'x',
        AWS_SECRET_ACCESS_KEY: 'y',
        AWS_MAX_ATTEMPTS: '1',
      });
      expect(packages.has('@aws-sdk/client-s3')).toBe(true);
    } finally {
      cfg.cleanup();
    }
  });

  it("a noun's --help builds its verbs from their specs: no verb's run module, no domain code beyond plain data, no heavy package", async () => {
    // the light files a noun's --help may load: its index, the verbs' specs, and the spec helpers they share
    const light = (f: string) => /^src\/commands\/([\w-]+\/)?(index|nouns|action|spec|[\w-]+\.spec|lib\/flags)\.ts$/.test(f);
    for (const noun of ['labels', 'auth', 'config', 'mock']) {
      // (`--no-input` first: the CLI renders it, as on a terminal of a width the build did not render for)
      const { packages, sources, exitCode } = await loaded(['--no-input', noun, '--help']);
      expect(exitCode, noun).toBe(0);
      for (const heavy of HEAVY) expect(packages.has(heavy), `${noun} --help loads ${heavy}`).toBe(false);
      const commands = [...sources].filter((f) => f.startsWith(`src/commands/${noun}/`));
      expect(commands.length, noun).toBeGreaterThan(1);
      expect(
        commands.filter((f) => !light(f)),
        `${noun} --help loads run modules`,
      ).toEqual([]);
    }
  });

  it("--help and a tracker verb's --help build their flags from the generated resource table, never the whole contract", async () => {
    for (const args of [
      ['--no-input', '--help'],
      ['--no-input', 'tracker', 'stories', 'create', '--help'],
    ]) {
      const { sources, exitCode } = await loaded(args);
      expect(exitCode, args.join(' ')).toBe(0);
      expect(sources.has('packages/shared/src/tracker/contract.ts'), args.join(' ')).toBe(false);
      expect(sources.has('packages/shared/src/tracker/types.ts'), args.join(' ')).toBe(false);
    }
    const { sources } = await loaded(['--no-input', 'tracker', 'stories', 'create', '--help']);
    expect(sources.has('packages/shared/src/tracker/resources.ts')).toBe(true);
  });

  it('a read against the embedded mock is answered in-process: no undici, and none of zod, conf, ora, execa, prompts, node:v8, node:fs/promises, nor an AsyncLocalStorage', async () => {
    const cfg = tempConfigDir();
    try {
      const { packages: pkgs, builtins, sources } = await loaded(['tracker', 'labels', 'list'], { OPSCTL_CONFIG_DIR: cfg.dir });
      expect(sources.has('packages/mock/src/in-process.ts')).toBe(true);
      for (const heavy of ['undici', 'zod', 'conf', 'ora', 'execa', '@inquirer/prompts', 'open']) expect(pkgs.has(heavy), heavy).toBe(false);
      // no WebAssembly on this path, so nothing sets V8 flags
      expect(builtins.has('v8')).toBe(false);
      expect(builtins.has('http2')).toBe(false);
      // the first use made the tracker's token (node:crypto); a read after it makes no id, token or key, and the
      // state file checked before is known by its identity: no node:crypto. Nor node:fs/promises (and the 8 modules
      // it brings, readline among them): a read reads the state, its check marks and the credentials with node:fs
      const read = await loaded(['tracker', 'labels', 'list'], { OPSCTL_CONFIG_DIR: cfg.dir });
      const again = read.builtins;
      expect(again.has('crypto')).toBe(false);
      expect(again.has('fs/promises')).toBe(false);
      // a GET runs in the mock without a request signal: no AsyncLocalStorage entered (on Node 20 its hook would
      // then run for every promise of the command); a write still has one (the store gives up its lock wait with it)
      expect(read.asyncLocalStorage).toBe(false);
      const write = await loaded(['tracker', 'labels', 'create', '--name', 'als'], { OPSCTL_CONFIG_DIR: cfg.dir });
      expect(write.exitCode).toBe(0);
      expect(write.asyncLocalStorage).toBe(true);
    } finally {
      cfg.cleanup();
    }
  });

  it('a read against a server loads undici (with Liftoff-only WebAssembly) but not node:http2', async () => {
    const cfg = tempConfigDir();
    const server = await startMock();
    try {
      const env = trackerEnv(server, cfg.dir);
      const { packages: pkgs, builtins, exitCode } = await loaded(['tracker', 'labels', 'list'], env);
      expect(exitCode).toBe(0);
      expect(pkgs.has('undici')).toBe(true);
      expect(builtins.has('v8')).toBe(true);
      // undici's HTTP/2 client is stubbed out of the bundle (opsctl never negotiates h2): no node:http2.
      expect(builtins.has('http2')).toBe(false);
    } finally {
      await server.close();
      cfg.cleanup();
    }
  });

  it('a sign-in against the embedded mock (CLI and mock in one process) loads none of the console or security-event code', async () => {
    const cfg = tempConfigDir();
    try {
      const { sources, exitCode } = await loaded(['login', '--consent-as', 'alice@example.com'], { OPSCTL_CONFIG_DIR: cfg.dir });
      expect(exitCode).toBe(0);
      // The mock's authorization and token endpoints did run in this process.
      expect(sources.has('packages/mock/src/services/oauth/authorize.ts')).toBe(true);
      expect(sources.has('packages/mock/src/services/oauth/token.ts')).toBe(true);
      for (const file of ['admin', 'console', 'console-schema', 'integrity', 'events', 'delivery']) {
        expect(sources.has(`packages/mock/src/services/oauth/${file}.ts`), file).toBe(false);
      }
    } finally {
      cfg.cleanup();
    }
  });
});
