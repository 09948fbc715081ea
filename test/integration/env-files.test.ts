import { execa, execaSync } from 'execa';
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lockFile } from '../../src/core/lock.js';
import { FileStore } from '@opsctl/mock/store.js';
import { BIN, runBin } from '../helpers/bin.js';
import { runCli, tempConfigDir } from '../helpers/cli.js';
import { ptyAvailable, PtySession } from '../helpers/pty.js';
import { bundleScript } from '../helpers/script.js';
import type { TestState } from '../helpers/mock.js';

/** Bad environments around opsctl's own files: the mock state, the credential file, the lock, the directories. */
let dir: string;
let cleanup: () => void;
let env: NodeJS.ProcessEnv;
let statePath: string;
beforeEach(() => {
  ({ dir, cleanup } = tempConfigDir('opsctl-env-files-'));
  env = { OPSCTL_CONFIG_DIR: dir };
  statePath = join(dir, 'data', 'mock-state.json');
});
afterEach(() => cleanup());

/** No "unexpected error", no stack trace, and the message printed once. */
function expectCleanError(stderr: string, needle: string): void {
  expect(stderr).not.toMatch(/unexpected error/i);
  expect(stderr).not.toMatch(/^\s+at /m);
  expect(stderr.split(needle).length - 1).toBe(1);
}

/** A valid state written by opsctl itself, parsed. */
async function validState(): Promise<any> {
  const r = await runCli(['tracker', 'labels', 'create', '--name', 'bug'], { env });
  expect(r.code).toBe(0);
  return JSON.parse(readFileSync(statePath, 'utf8'));
}

describe('mock-state.json of the wrong shape is refused, naming the file and the place, and never rewritten', () => {
  const cases: Array<[string, (s: any) => string, string]> = [
    ['an array', () => '[]', '(top level)'],
    ['null', () => 'null', '(top level)'],
    ['not JSON', () => '{"tracker": ', 'not valid JSON'],
    ['an empty object', () => '{}', 'is empty'],
    ['only an unknown key', () => '{"foo":1}', 'none of the mock\'s collections (tracker, oauth, labels), only "foo"'],
    ['a misspelt slice', (s) => JSON.stringify({ trackr: s.tracker }), 'only "trackr": a misspelt name'],
    ['tracker: 5', () => '{"tracker":5}', 'tracker:'],
    ['tracker: null', (s) => JSON.stringify({ ...s, tracker: null }), 'tracker:'],
    ['a label null', (s) => JSON.stringify({ ...s, tracker: { ...s.tracker, labels: [null] } }), 'tracker.labels[0]'],
    ['seq "x"', (s) => JSON.stringify({ ...s, tracker: { ...s.tracker, seq: 'x' } }), 'tracker.seq'],
    ['tracker labels: {}', (s) => JSON.stringify({ ...s, tracker: { ...s.tracker, labels: {} } }), 'tracker.labels'],
    ['label-service labels: {}', (s) => JSON.stringify({ ...s, labels: {} }), 'labels.labels'],
    // every collection the tracker mock keeps is checked, the last ones of the list included
    ['tracker storyHistory: "x"', (s) => JSON.stringify({ ...s, tracker: { ...s.tracker, storyHistory: 'x' } }), 'tracker.storyHistory'],
  ];
  for (const [name, make, where] of cases) {
    it(`${name}: exit 1, names ${where}, file bytes unchanged`, async () => {
      const content = make(await validState());
      writeFileSync(statePath, content);
      for (const argv of [
        ['tracker', 'labels', 'list'],
        ['tracker', 'labels', 'create', '--name', 'x'],
      ]) {
        const r = await runCli(argv, { env });
        expect(r.code).toBe(1);
        expect(r.stderr).toContain(statePath);
        expect(r.stderr).toContain(where);
        expect(r.stderr).toContain(`mv ${statePath}`);
        expectCleanError(r.stderr, 'is not usable');
      }
      expect(readFileSync(statePath, 'utf8')).toBe(content);
    });
  }

  it('once the user moves it aside, the next command starts a fresh state; the moved file is kept as it was', async () => {
    await validState();
    writeFileSync(statePath, '{"tracker":5}');
    expect((await runCli(['tracker', 'labels', 'list'], { env })).code).toBe(1);
    renameSync(statePath, `${statePath}.bad`);
    const r = await runCli(['tracker', 'labels', 'list', '--json'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toEqual([]);
    expect(readFileSync(`${statePath}.bad`, 'utf8')).toBe('{"tracker":5}');
  });

  it('the built binary refuses it the same way (one message, exit 1) and leaves the file alone', async () => {
    mkdirSync(join(dir, 'data'), { recursive: true });
    for (const content of ['{"tracker":5}', '{"foo":1}', '{"trackr":{"seq":1}}']) {
      writeFileSync(statePath, content);
      const r = await runBin(['tracker', 'labels', 'create', '--name', 'x'], { env });
      expect(r.exitCode).toBe(1);
      expectCleanError(String(r.stderr), 'is not usable');
      expect(readFileSync(statePath, 'utf8')).toBe(content);
    }
  });

  it('an older valid state missing a whole collection is completed, keeping every record', async () => {
    const s = await validState();
    delete s.tracker.stories;
    writeFileSync(statePath, JSON.stringify(s));
    const r = await runCli(['tracker', 'labels', 'list', '--json=name'], { env });
    expect(r.code).toBe(0);
    expect(r.json()).toEqual([{ name: 'bug' }]);
    const after = JSON.parse(readFileSync(statePath, 'utf8'));
    expect(after.tracker.stories).toEqual([]);
    expect(after.tracker.labels).toEqual(s.tracker.labels);
  });
});

describe('credentials.json with garbage or the wrong shape', () => {
  for (const [name, content] of [
    ['garbage', 'secret-token-xyz {'],
    ['an array', '[]'],
    ['a profile of the wrong shape', '{"embedded": {"tracker": {"token": 5}}}'],
  ] as const) {
    it(`${name}: commands needing it exit 4 naming the file and the fix; embedded ones work; the file is never rewritten`, async () => {
      await validState();
      const path = join(dir, 'credentials.json');
      writeFileSync(path, content);
      const labels = await runCli(['labels', 'list'], { env });
      expect(labels.code).toBe(4);
      expect(labels.stderr).toContain(path);
      expect(labels.stderr).toContain('opsctl login');
      expect(labels.stderr).toContain(`mv ${path}`);
      expect(labels.stderr).not.toContain('secret-token-xyz');
      expectCleanError(labels.stderr, 'the credential file');
      // Writing a token (for a real tracker: the embedded one takes none) would rewrite the file: refused, untouched.
      const store = await runCli(['auth', 'store-token', '--service', 'tracker', '--with-token'], {
        env: { ...env, OPSCTL_TRACKER_URL: 'https://t.example' },
        stdin: 'tok_123\n',
      });
      expect(store.code).toBe(4);
      expect(store.stderr).toContain(path);
      // The embedded tracker does not need the file: it works, with a warning naming it.
      const list = await runCli(['tracker', 'labels', 'list', '--json=name'], { env });
      expect(list.code).toBe(0);
      expect(list.json()).toEqual([{ name: 'bug' }]);
      expect(list.stderr).toContain(path);
      const cfg = await runCli(['config', 'list'], { env });
      expect(cfg.code).toBe(0);
      // A sign-in checks it first: before any page, browser or code exchange (the built binary, as a person runs it).
      const login = await runBin(['login', '--consent-as', 'alice@example.com'], { env });
      expect(login.exitCode).toBe(4);
      expect(String(login.stderr)).toContain(path);
      expect(String(login.stderr)).not.toMatch(/Sign(ing)? in at|Waiting for the browser|secret-token-xyz/);
      expectCleanError(String(login.stderr), 'the credential file');
      const oauth = JSON.parse(readFileSync(statePath, 'utf8')).oauth;
      expect(Object.keys(oauth?.pending ?? {})).toEqual([]);
      expect(Object.keys(oauth?.codes ?? {})).toEqual([]);
      expect(readFileSync(path, 'utf8')).toBe(content);
    });
  }
});

describe("the embedded mock's clients file (OPSCTL_MOCK_OAUTH_CLIENTS) that is wrong", () => {
  for (const [name, content, words, fileName] of [
    ['not JSON', '{nope', 'is not valid JSON'],
    ['a client of an unknown type', '{"clients":[{"client_id":"x.apps.mock","type":"weird"}]}', 'has a bad client: x.apps.mock: type must be one of'],
    [
      'a flag that is not a boolean',
      '{"clients":[{"client_id":"x.apps.mock","type":"desktop","data_api_enabled":"no"}]}',
      'has a bad client: x.apps.mock: data_api_enabled must be true or false',
    ],
    ['clients that are not a list', '{"clients":{"a":1}}', 'has "clients" that is not a list'],
    [
      'not YAML (a .yaml file)',
      'clients: [a',
      'is not valid YAML (line 1, column 12: expected an indentation that lines up with its siblings)',
      'clients.yaml',
    ],
  ] as Array<[string, string, string, string?]>) {
    it(`${name}: login exits 2 naming the file and the problem (built binary); no 500, no stack`, async () => {
      const file = join(dir, fileName ?? 'clients.json');
      writeFileSync(file, content);
      const r = await runBin(['login', '--consent-as', 'alice@example.com'], { env: { ...env, OPSCTL_MOCK_OAUTH_CLIENTS: file } });
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain(`the clients file ${file} ${words}`);
      expect(r.stderr).toContain('OPSCTL_MOCK_OAUTH_CLIENTS');
      expect(r.stderr).not.toMatch(/answered 5\d\d|opsctl mock:|seeded account|Sign(ing)? in at/);
      expectCleanError(String(r.stderr), `the clients file ${file}`);
      expect(existsSync(join(dir, 'credentials.json'))).toBe(false);
    });
  }
});

describe('config.json with garbage or the wrong shape', () => {
  for (const [name, content, where] of [
    ['garbage', '{"profiles": ', 'is not valid JSON'],
    ['an array', '[]', 'is not a JSON object'],
    ['profiles: 5', '{"profiles": 5}', 'profiles'],
    ['a setting that is not a string', '{"profiles": {"work": {"tracker": 5}}}', 'profiles.work.tracker'],
  ] as const) {
    it(`${name}: exit 1 naming the file and the place; config set refuses too; the file is never rewritten`, async () => {
      const path = join(dir, 'config.json');
      writeFileSync(path, content);
      for (const argv of [
        ['tracker', 'labels', 'list'],
        ['config', 'set', 'tracker', 'https://t.example', '--profile', 'work'],
        ['config', 'list'],
      ]) {
        const r = await runCli(argv, { env });
        expect(r.code, argv.join(' ')).toBe(1);
        expect(r.stderr).toContain(`the config file ${path}`);
        expect(r.stderr).toContain(where);
        expect(r.stderr).toContain(`mv ${path}`);
        expectCleanError(r.stderr, 'the config file');
      }
      expect(readFileSync(path, 'utf8')).toBe(content);
    });
  }
});

describe('the state lock', () => {
  it('a SIGKILLed holder: its lock is taken over at once (pid gone) and its temp files are removed', async () => {
    const script = await bundleScript(`
      import { lockFile } from './src/core/lock.ts';
      await lockFile(process.argv[2], { what: 'the mock state file' });
      console.log('locked');
      setInterval(() => {}, 1000);
    `);
    mkdirSync(join(dir, 'data'), { recursive: true });
    await validState();
    const child = execa(process.execPath, [script, statePath]);
    await new Promise<void>((resolve) => child.stdout.on('data', (c: Buffer) => c.toString().includes('locked') && resolve()));
    const leftover = `${statePath}.123456789`;
    writeFileSync(leftover, '{"half":');
    child.kill('SIGKILL');
    await child.catch(() => undefined);
    expect(existsSync(`${statePath}.lock`)).toBe(true);
    // A stale period of 10 minutes: only the dead-pid check can let this write through before the test times out.
    const store = new FileStore(statePath, 600_000);
    await store.write((s: TestState) => void (s.tracker.seq += 1));
    expect(existsSync(`${statePath}.lock`)).toBe(false);
    expect(existsSync(leftover)).toBe(false);
    expect(readdirSync(join(dir, 'data')).filter((f) => /^mock-state\.json\.\d+$/.test(f))).toEqual([]);
  });

  it('a live holder is never taken over: the waiter gives up naming the holder pid', async () => {
    const script = await bundleScript(`
      import { lockFile } from './src/core/lock.ts';
      await lockFile(process.argv[2], { what: 'the mock state file' });
      console.log('locked');
      setInterval(() => {}, 1000);
    `);
    const path = join(dir, 'x.json');
    const child = execa(process.execPath, [script, path]);
    try {
      await new Promise<void>((resolve) => child.stdout.on('data', (c: Buffer) => c.toString().includes('locked') && resolve()));
      await expect(lockFile(path, { what: 'the mock state file', waitMs: 200, staleMs: 600_000 })).rejects.toThrow(
        `locked by another opsctl process (pid ${child.pid})`,
      );
    } finally {
      child.kill('SIGKILL');
      await child.catch(() => undefined);
    }
  });
});

describe('a lock left behind or held (built binary)', () => {
  /** A process that holds the state lock until its stdin is closed; resolves once it holds it. */
  async function holdLock(path: string) {
    const script = await bundleScript(`
      import { lockFile } from './src/core/lock.ts';
      const release = await lockFile(process.argv[2], { what: 'the mock state file' });
      console.log('locked');
      process.stdin.on('end', async () => { await release(); console.log('released'); process.exit(0); });
      process.stdin.resume();
    `);
    const child = execa(process.execPath, [script, path], { stdin: 'pipe' });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (c: Buffer) => c.toString().includes('locked') && resolve());
      child.catch(reject);
    });
    return {
      pid: child.pid!,
      async release() {
        child.stdin.end();
        await child;
      },
    };
  }

  async function labelNames(): Promise<string[]> {
    const r = await runCli(['tracker', 'labels', 'list', '--json=name'], { env });
    expect(r.code, r.stderr).toBe(0);
    return r.json<Array<{ name: string }>>().map((l) => l.name);
  }

  const noNetworkError = (stderr: string) => {
    expect(stderr).not.toMatch(/no answer|endpoint|unexpected error/i);
    expect(stderr).not.toMatch(/^\s+at /m);
  };

  it('an empty lock directory (left by an older opsctl): free, the write applied once, no notice, no network error', async () => {
    await validState();
    for (const [name, age] of [
      ['old', 30],
      ['fresh', 0],
    ] as const) {
      mkdirSync(`${statePath}.lock`);
      if (age) utimesSync(`${statePath}.lock`, new Date(Date.now() - age * 1000), new Date(Date.now() - age * 1000));
      const r = await runBin(['tracker', 'labels', 'create', '--name', name], { env });
      expect(r.exitCode, String(r.stderr)).toBe(0);
      expect(String(r.stderr)).not.toMatch(/took over|waiting for the lock/);
      noNetworkError(String(r.stderr));
      expect(existsSync(`${statePath}.lock`)).toBe(false);
    }
    expect(await labelNames()).toEqual(['bug', 'old', 'fresh']);
  });

  it('an owner file of an older opsctl that is garbage, or names a live process that is not its holder (a reused pid): taken over with a notice', async () => {
    await validState();
    const owners = ['not json', JSON.stringify({ pid: process.pid, host: hostname(), start: 'not-the-start-of-this-pid' })];
    for (const [i, owner] of owners.entries()) {
      mkdirSync(`${statePath}.lock`);
      writeFileSync(join(`${statePath}.lock`, 'owner'), owner);
      utimesSync(join(`${statePath}.lock`, 'owner'), new Date(Date.now() - 30_000), new Date(Date.now() - 30_000));
      const r = await runBin(['tracker', 'labels', 'create', '--name', `l${i}`], { env });
      expect(r.exitCode, String(r.stderr)).toBe(0);
      expect(String(r.stderr)).toMatch(
        i === 0 ? /owner file is unreadable/ : new RegExp(`its holder \\(pid ${process.pid}\\) is gone and the pid now belongs to another process`),
      );
      noNetworkError(String(r.stderr));
    }
    expect(await labelNames()).toEqual(['bug', 'l0', 'l1']);
  });

  it.skipIf(!ptyAvailable())('Ctrl-C on a terminal while waiting for a live holder: exit 130 at once, and the write is never applied later', async () => {
    await validState();
    const holder = await holdLock(statePath);
    try {
      const pty = PtySession.opsctl(['tracker', 'labels', 'create', '--name', 'never'], { env });
      await pty.waitFor(`waiting for the lock on the mock state file ${statePath}, held by opsctl pid ${holder.pid}`);
      pty.ctrlC();
      expect(await pty.exitCode()).toBe(130);
      expect(pty.text).not.toMatch(/unexpected error|answered 500|^\s+at /im);
    } finally {
      await holder.release();
    }
    expect(await labelNames()).toEqual(['bug']);
  });

  it('SIGTERM while waiting: exit 130; a client that gave up (OPSCTL_HTTP_TIMEOUT_MS) fails and its write is never applied later', async () => {
    await validState();
    const holder = await holdLock(statePath);
    try {
      const child = runBin(['tracker', 'labels', 'create', '--name', 'never'], { env });
      await new Promise<void>((resolve) => child.stderr!.on('data', (c: Buffer) => c.toString().includes('waiting for the lock') && resolve()));
      child.kill('SIGTERM');
      const r = await child;
      expect(r.exitCode).toBe(130);
      expect(String(r.stderr)).toContain('terminated (SIGTERM)');

      const gaveUp = await runBin(['tracker', 'labels', 'create', '--name', 'late'], { env: { ...env, OPSCTL_HTTP_TIMEOUT_MS: '1500' } });
      expect(gaveUp.exitCode).toBe(1);
      expect(String(gaveUp.stderr)).toContain(`held by opsctl pid ${holder.pid}`);
    } finally {
      await holder.release();
    }
    // The holder is gone: nothing either command asked for was applied after it failed.
    expect(await labelNames()).toEqual(['bug']);
    expect(existsSync(`${statePath}.lock`)).toBe(false);
  });
});

describe('directories', () => {
  it('the config and data directories are created 0700 under umask 000 (built binary)', async () => {
    const base = join(dir, 'fresh', 'opsctl');
    const r = await execa('sh', ['-c', `umask 000; exec "${process.execPath}" bin/opsctl.cjs tracker labels create --name a`], {
      reject: false,
      env: { ...process.env, OPSCTL_CONFIG_DIR: base, NO_COLOR: '1' },
    });
    expect(r.exitCode).toBe(0);
    expect(statSync(base).mode & 0o777).toBe(0o700);
    expect(statSync(join(base, 'data')).mode & 0o777).toBe(0o700);
    expect(statSync(join(base, 'data', 'mock-state.json')).mode & 0o777).toBe(0o600);
  });

  it('a kv sandbox started first, under umask 000, also creates the data directory 0700 (built binary)', async () => {
    const base = join(dir, 'fresh-kv');
    const sh = (args: string) =>
      execa('sh', ['-c', `umask 000; exec "${process.execPath}" bin/opsctl.cjs ${args}`], {
        reject: false,
        env: { ...process.env, OPSCTL_CONFIG_DIR: base, NO_COLOR: '1' },
      });
    const up = await sh('kv sandbox up --members 1');
    try {
      expect(up.exitCode, String(up.stderr)).toBe(0);
      for (const d of [base, join(base, 'data'), join(base, 'data', 'kv'), join(base, 'data', 'kv', 'sandbox')])
        expect(statSync(d).mode & 0o777, d).toBe(0o700);
    } finally {
      await sh('kv sandbox down');
    }
  });

  it('a config dir that cannot be created (simulated: its path runs under a regular file, ENOTDIR) names it and OPSCTL_CONFIG_DIR', async () => {
    writeFileSync(join(dir, 'afile'), '');
    const bad = join(dir, 'afile', 'opsctl');
    for (const argv of [
      ['tracker', 'labels', 'list'],
      ['config', 'set', 'tracker', 'https://t.example', '--profile', 'work'],
      ['auth', 'store-token', '--service', 'tracker', '--with-token'],
    ]) {
      const r = await runCli(argv, { env: { OPSCTL_CONFIG_DIR: bad }, stdin: 'tok\n' });
      expect(r.code, argv.join(' ')).toBe(1);
      expect(r.stderr).toContain(bad);
      expect(r.stderr).toContain('OPSCTL_CONFIG_DIR');
      expectCleanError(r.stderr, 'cannot write');
    }
  });

  it('an unwritable HOME (simulated: HOME under a regular file, no OPSCTL_CONFIG_DIR) names the directory and OPSCTL_CONFIG_DIR', async () => {
    writeFileSync(join(dir, 'afile'), '');
    const home = join(dir, 'afile', 'home');
    const r = await runBin(['tracker', 'labels', 'list'], { env: { HOME: home, XDG_CONFIG_HOME: '', XDG_DATA_HOME: '', OPSCTL_CONFIG_DIR: '' } });
    expect(r.exitCode).toBe(1);
    expect(String(r.stderr)).toContain(home);
    expect(String(r.stderr)).toContain('OPSCTL_CONFIG_DIR');
    expectCleanError(String(r.stderr), 'cannot write');
  });

  const canDropToNobody = process.getuid?.() === 0 && existsSync('/usr/bin/setpriv');
  it.skipIf(!canDropToNobody)(
    'a real unwritable HOME: the binary run as nobody (setpriv) under a root-owned 0755 HOME names the directory and OPSCTL_CONFIG_DIR',
    async () => {
      const home = join(dir, 'home');
      mkdirSync(home, { mode: 0o755 });
      chmodSync(dir, 0o755);
      for (const argv of [
        ['tracker', 'labels', 'list'],
        ['config', 'set', 'tracker', 'https://t.example', '--profile', 'w'],
      ]) {
        const r = await execa('/usr/bin/setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, BIN, ...argv], {
          reject: false,
          env: { PATH: process.env.PATH, HOME: home, NO_COLOR: '1' },
          extendEnv: false,
        });
        expect(r.exitCode, argv.join(' ')).toBe(1);
        expect(r.stderr).toContain(home);
        expect(r.stderr).toContain('EACCES');
        expect(r.stderr).toContain('OPSCTL_CONFIG_DIR');
        expectCleanError(r.stderr, 'cannot write');
      }
    },
  );

  const canUnshare = process.getuid?.() === 0 && existsSync('/usr/bin/unshare');
  it.skipIf(!canUnshare)(
    'a read-only HOME (a read-only bind mount in a private mount namespace): EROFS named with the directory and OPSCTL_CONFIG_DIR, not "unexpected error: ENOENT … mkdir"',
    async () => {
      const home = join(dir, 'home');
      mkdirSync(home);
      for (const argv of [
        ['config', 'set', 'tracker', 'https://t.example'],
        ['tracker', 'labels', 'list'],
        ['login', '--consent-as', 'alice@example.com'],
      ]) {
        // The mount exists only inside the namespace, which ends with the command.
        const r = await execa('/usr/bin/unshare', ['-m', '/bin/sh', '-c', 'mount --bind -o ro "$0" "$0" && exec "$@"', home, process.execPath, BIN, ...argv], {
          reject: false,
          timeout: 30_000,
          env: { PATH: process.env.PATH, HOME: home, NO_COLOR: '1' },
          extendEnv: false,
        });
        expect(r.exitCode, argv.join(' ')).toBe(1);
        expect(r.stderr).toMatch(
          new RegExp(
            `cannot write opsctl's directory ${home}/\\.(config|local/share)/opsctl \\(at ${home}/\\.(config|local)\\) \\(the file system is read-only, EROFS\\)`,
          ),
        );
        expect(r.stderr).toContain('OPSCTL_CONFIG_DIR');
        expect(r.stderr).not.toMatch(/ENOENT|Sign(ing)? in at/);
        expectCleanError(r.stderr, 'cannot write');
      }
    },
  );

  it('an empty HOME (a relative directory) and a HOME under /proc (where a recursive mkdir never returns): named, no hang, nothing written in the working directory', async () => {
    const cwd = join(dir, 'cwd');
    mkdirSync(cwd);
    for (const [home, words] of [
      ['', 'is not an absolute path (HOME or an XDG_* variable is empty or relative)'],
      ['/proc/self/nothere', '(it cannot be created there, ENOENT)'],
    ] as const) {
      const r = await execa(process.execPath, [BIN, 'config', 'set', 'tracker', 'https://t.example'], {
        reject: false,
        timeout: 30_000,
        cwd,
        env: { PATH: process.env.PATH, HOME: home, NO_COLOR: '1' },
        extendEnv: false,
      });
      expect(r.exitCode, home).toBe(1);
      expect(r.stderr).toContain(words);
      expect(r.stderr).toContain('OPSCTL_CONFIG_DIR');
      expectCleanError(r.stderr, words);
    }
    expect(readdirSync(cwd)).toEqual([]);
  });

  it.skipIf(!canDropToNobody)(
    'as nobody, a config or data directory it cannot write: sign-in refused before any page or browser, a write to the embedded mock names the directory (no 503, no stack), reads still work',
    async () => {
      await validState();
      const before = readFileSync(statePath, 'utf8');
      chmodSync(dir, 0o755);
      chmodSync(join(dir, 'data'), 0o755);
      for (const f of readdirSync(join(dir, 'data'))) chmodSync(join(dir, 'data', f), 0o644);
      const asNobody = (argv: string[]) =>
        execa('/usr/bin/setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, BIN, ...argv], {
          reject: false,
          env: { PATH: process.env.PATH, HOME: '/nonexistent', NO_COLOR: '1', OPSCTL_CONFIG_DIR: dir },
          extendEnv: false,
        });
      // The config directory (where credentials.json goes) is root's: not nobody's own, refused at once.
      let r = await asNobody(['login', '--consent-as', 'alice@example.com']);
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toContain(`the config directory ${dir} is owned by uid 0, not by you (uid 65534)`);
      expect(r.stderr).not.toMatch(/Sign(ing)? in at|Waiting for the browser|seeded account/);
      expectCleanError(r.stderr, 'the config directory');
      // The config directory is nobody's, the embedded mock's data directory is root's (not writable): named before any page too.
      chownSync(dir, 65534, 65534);
      chownSync(statePath, 65534, 65534);
      r = await asNobody(['login', '--consent-as', 'alice@example.com']);
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toContain(`cannot write opsctl's directory ${join(dir, 'data')} (permission denied, EACCES)`);
      expect(r.stderr).not.toMatch(/Sign(ing)? in at|answered 5\d\d|seeded account/);
      expectCleanError(r.stderr, 'cannot write');
      expect(existsSync(join(dir, 'credentials.json'))).toBe(false);
      // A write through the embedded mock: its own storage error, as that same message (not "HTTP 503", not a stack).
      r = await asNobody(['tracker', 'labels', 'create', '--name', 'x']);
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toContain(`cannot write opsctl's directory ${join(dir, 'data')} (permission denied, EACCES)`);
      expect(r.stderr).toContain('OPSCTL_CONFIG_DIR');
      expect(r.stderr).not.toMatch(/HTTP 503|opsctl mock:/);
      expectCleanError(r.stderr, 'cannot write');
      // Reading needs no write: still works.
      r = await asNobody(['tracker', 'labels', 'list', '--json=name']);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual([{ name: 'bug' }]);
      expect(readFileSync(statePath, 'utf8')).toBe(before);
    },
  );
});

describe('only regular files are read, with a size cap (built binary; nothing is ever opened for a blocking read)', () => {
  /** Runs the binary with a deadline: a hang on a FIFO would be a timeout, not a pass. */
  const bin = (argv: string[], cwd?: string) => runBin(argv, { env, cwd, timeout: 20_000 });
  const place = (path: string, kind: 'fifo' | 'dir' | 'zero') => {
    mkdirSync(join(path, '..'), { recursive: true });
    if (kind === 'fifo') execaSync('mkfifo', [path]);
    else if (kind === 'dir') mkdirSync(path);
    else symlinkSync('/dev/zero', path);
  };
  // A link is never followed for opsctl's own files: a link to /dev/zero is refused as a link.
  const words = { fifo: 'is a FIFO (named pipe), not a regular file', dir: 'is a directory', zero: 'is a symbolic link (to /dev/zero)' } as const;
  const cases: Array<[string, () => string, string[], number]> = [
    ['config.json', () => join(dir, 'config.json'), ['config', 'list'], 1],
    ['credentials.json', () => join(dir, 'credentials.json'), ['auth', 'token'], 1],
    ['mock-state.json', () => statePath, ['tracker', 'labels', 'list'], 1],
  ];
  for (const [name, pathOf, argv, code] of cases) {
    for (const kind of ['fifo', 'dir', 'zero'] as const) {
      it(`${kind === 'zero' ? 'a link to /dev/zero' : `a ${kind}`} as ${name}: exit ${code} naming it and the fix, no hang, left in place`, async () => {
        const path = pathOf();
        place(path, kind);
        const r = await bin(argv);
        expect(r.timedOut).toBe(false);
        expect(r.exitCode, String(r.stderr)).toBe(code);
        expect(String(r.stderr)).toContain(path);
        expectCleanError(String(r.stderr), `${path} ${words[kind]}`);
        expect(existsSync(path) || lstatSync(path).isSymbolicLink()).toBe(true);
      });
    }
  }

  it('a FIFO given to -f is a usage error (exit 2) naming the flag and the file', async () => {
    const f = join(dir, 'in.yaml');
    execaSync('mkfifo', [f]);
    const r = await bin(['tracker', 'labels', 'apply', '-f', f, '--dry-run']);
    expect(r.timedOut).toBe(false);
    expect(r.exitCode, String(r.stderr)).toBe(2);
    expect(String(r.stderr)).toContain(`--file: ${f} is a FIFO`);
  });

  it('a config.json over 1 MiB (sparse, 2 MiB) is refused naming its size and the cap, never read', async () => {
    const f = join(dir, 'config.json');
    writeFileSync(f, '');
    truncateSync(f, 2 * 1024 * 1024);
    const r = await bin(['config', 'list']);
    expect(r.exitCode).toBe(1);
    expect(String(r.stderr)).toContain(`the config file ${f} is 2 MiB, over the 1 MiB opsctl reads`);
  });

  it('config.json and credentials.json are written 0600 under umask 000 and 022, also over an existing 0644 file', async () => {
    for (const mask of ['000', '022']) {
      const base = join(dir, `umask-${mask}`);
      mkdirSync(base, { mode: 0o700 });
      writeFileSync(join(base, 'config.json'), '{"profiles":{}}', { mode: 0o644 });
      chmodSync(join(base, 'config.json'), 0o644);
      const sh = (args: string, input?: string) =>
        execa('sh', ['-c', `umask ${mask}; exec "${process.execPath}" "${BIN}" ${args}`], {
          reject: false,
          input,
          env: { ...process.env, OPSCTL_CONFIG_DIR: base, NO_COLOR: '1' },
        });
      expect((await sh('config set tracker https://t.example.com')).exitCode).toBe(0);
      expect((await sh('auth store-token --service tracker --with-token', 'tok-123\n')).exitCode).toBe(0);
      expect(statSync(join(base, 'config.json')).mode & 0o777, `config.json under umask ${mask}`).toBe(0o600);
      expect(statSync(join(base, 'credentials.json')).mode & 0o777, `credentials.json under umask ${mask}`).toBe(0o600);
    }
  });
});
