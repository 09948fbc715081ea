import { execa } from 'execa';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalTrustError } from '../../src/core/local-file.js';
import { readJournal } from '../../src/kv/journal/read.js';
import { newJournal, writeJournal } from '../../src/kv/journal/journal.js';
import { BIN, runBin } from '../helpers/bin.js';

/**
 * Local trust like ssh and gh (issue 27, item 8), through the built binary: opsctl's own files (config,
 * credentials, the embedded mock's state, a kv journal) are used only when they are the user's own, never
 * through a link, and never when others can write them; another user's config directory is refused
 * before any token is sent. Tests run as root, so "another user" is uid 65534 (nobody); root is a user
 * too: root's own files pass (every other test of the suite). The last block runs the binary as nobody.
 */

const NOBODY = 65534;
const SETPRIV = '/usr/bin/setpriv';
const canDrop = process.getuid?.() === 0 && existsSync(SETPRIV);

let dir: string;
let env: NodeJS.ProcessEnv;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'opsctl-trust-'));
  chmodSync(dir, 0o700);
  env = { OPSCTL_CONFIG_DIR: dir };
});
/** The other user's directories a test made (othersFile): removed with the test's own. */
const others: string[] = [];
afterEach(() => {
  for (const d of [dir, ...others.splice(0)]) rmSync(d, { recursive: true, force: true });
});

const bin = (argv: string[], input?: string) => runBin(argv, { env, input, timeout: 60_000 });

/** One clear refusal: exit 1, the file and the fix named, no stack, no "unexpected error", nothing secret. */
function expectRefused(r: Awaited<ReturnType<typeof runBin>>, ...words: string[]): void {
  const stderr = String(r.stderr);
  expect(r.exitCode, stderr).toBe(1);
  for (const w of words) expect(stderr).toContain(w);
  expect(stderr).not.toMatch(/unexpected error|^\s+at /im);
}

/** A file of another user (nobody), elsewhere: what a link could point at. */
function othersFile(content: string): string {
  const other = mkdtempSync(join(tmpdir(), 'opsctl-trust-other-'));
  others.push(other);
  chmodSync(other, 0o755);
  const f = join(other, 'theirs.json');
  writeFileSync(f, content, { mode: 0o644 });
  chownSync(f, NOBODY, NOBODY);
  return f;
}

describe('credentials.json', () => {
  // the profile the tokens are for exists (a --profile that names no profile is refused before any file is read)
  beforeEach(async () => {
    const r = await bin(['config', 'set', 'tracker', 'https://t.example', '--profile', 'p']);
    expect(r.exitCode, String(r.stderr)).toBe(0);
  });

  it("a link to another user's file: refused for the write (exit 1, naming the link and the fix); the target keeps its content and owner", async () => {
    const target = othersFile('{}\n');
    const creds = join(dir, 'credentials.json');
    symlinkSync(target, creds);
    const r = await bin(['auth', 'store-token', '--service', 'tracker', '--with-token', '--profile', 'p'], 'root-secret-token');
    expectRefused(r, `the credential file ${creds} is a symbolic link (to ${target})`, `rm ${creds}`);
    expect(String(r.stderr)).not.toContain('root-secret-token');
    expect(readFileSync(target, 'utf8')).toBe('{}\n');
    expect(statSync(target).uid).toBe(NOBODY);
    expect(lstatSync(creds).isSymbolicLink()).toBe(true);
  });

  it('a link is refused for the read too (auth token names it, exit 1, never "sign in")', async () => {
    const target = othersFile(JSON.stringify({ p: { tracker: { token: 'theirs' } } }));
    symlinkSync(target, join(dir, 'credentials.json'));
    const r = await bin(['auth', 'token', '--profile', 'p']);
    expectRefused(r, 'is a symbolic link');
    expect(String(r.stdout)).not.toContain('theirs');
  });

  it('owned by another uid: refused for read and write naming the owner and chown; never rewritten', async () => {
    const creds = join(dir, 'credentials.json');
    const content = `${JSON.stringify({ p: { tracker: { token: 'x' } } })}\n`;
    writeFileSync(creds, content, { mode: 0o600 });
    chownSync(creds, NOBODY, NOBODY);
    for (const [argv, input] of [
      [['auth', 'store-token', '--service', 'tracker', '--with-token', '--profile', 'p'], 'new-token'],
      [['auth', 'token', '--profile', 'p'], undefined],
    ] as const) {
      const r = await bin([...argv], input);
      expectRefused(r, `the credential file ${creds} is owned by uid ${NOBODY}, not by you (uid 0)`, `chown 0 ${creds}`);
    }
    expect(readFileSync(creds, 'utf8')).toBe(content);
    expect(statSync(creds).uid).toBe(NOBODY);
  });

  it('writable by group or others: refused naming the mode and chmod go-w; never rewritten', async () => {
    const creds = join(dir, 'credentials.json');
    const content = `${JSON.stringify({ p: { tracker: { token: 'x' } } })}\n`;
    writeFileSync(creds, content);
    chmodSync(creds, 0o666);
    const r = await bin(['auth', 'store-token', '--service', 'tracker', '--with-token', '--profile', 'p'], 'new-token');
    expectRefused(r, `the credential file ${creds} is writable by its group and others (mode 0666)`, `chmod go-w ${creds}`);
    expect(readFileSync(creds, 'utf8')).toBe(content);
    expect(statSync(creds).mode & 0o777).toBe(0o666);
  });
});

describe('config.json', () => {
  const cases: Array<[string, (f: string) => void, string[]]> = [
    ['a link', (f) => symlinkSync(othersFile('{"profiles":{}}'), f), ['is a symbolic link', 'rm ']],
    ['owned by another uid', (f) => (writeFileSync(f, '{"profiles":{}}'), chownSync(f, NOBODY, NOBODY)), [`is owned by uid ${NOBODY}`, 'chown 0']],
    ['group-writable', (f) => (writeFileSync(f, '{"profiles":{}}'), chmodSync(f, 0o664)), ['is writable by its group (mode 0664)', 'chmod go-w']],
  ];
  for (const [name, place, words] of cases) {
    it(`${name}: config list and config set exit 1 naming it and the fix; the file is left as it was`, async () => {
      const f = join(dir, 'config.json');
      place(f);
      const before = lstatSync(f);
      for (const argv of [
        ['config', 'list'],
        ['config', 'set', 'tracker', 'https://t.example', '--profile', 'p'],
      ]) {
        expectRefused(await bin(argv), `the config file ${f}`, ...words);
      }
      const after = lstatSync(f);
      expect([after.ino, after.uid, after.mode, after.mtimeMs]).toEqual([before.ino, before.uid, before.mode, before.mtimeMs]);
    });
  }
});

describe('a config directory of another user: refused before any token is sent', () => {
  let server: Server;
  let hits: string[];
  beforeEach(async () => {
    hits = [];
    server = createServer((req, res) => {
      hits.push(`${req.method} ${req.url} ${JSON.stringify(req.headers)}`);
      res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  });
  afterEach(() => new Promise<void>((r) => server.close(() => r())));

  /** Their config dir: its profile sends every service to their endpoint (the recording server). */
  function theirConfig(owner: number, mode: number): void {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ profile: 'theirs', profiles: { theirs: { tracker: url, labels: url, api: url } } }), {
      mode: 0o644,
    });
    chownSync(join(dir, 'config.json'), owner, owner);
    chownSync(dir, owner, owner);
    chmodSync(dir, mode);
  }

  for (const [name, owner, mode, words] of [
    ['owned by nobody', NOBODY, 0o755, [`is owned by uid ${NOBODY}, not by you (uid 0)`, 'OPSCTL_CONFIG_DIR']],
    ['writable by others', 0, 0o777, ['is writable by its group and others (mode 0777)', 'chmod go-w']],
  ] as const) {
    it(`${name}: OPSCTL_TRACKER_TOKEN and OPSCTL_ACCESS_TOKEN never reach its endpoint (exit 1, the directory named)`, async () => {
      theirConfig(owner, mode);
      env = { ...env, OPSCTL_TRACKER_TOKEN: 'tracker-secret', OPSCTL_ACCESS_TOKEN: 'access-secret' };
      for (const argv of [
        ['tracker', 'labels', 'list'],
        ['labels', 'list'],
      ]) {
        const r = await bin(argv);
        expectRefused(r, `the config directory ${dir}`, ...words);
        expect(String(r.stderr)).not.toMatch(/tracker-secret|access-secret/);
      }
      expect(hits).toEqual([]);
    });
  }
});

describe('the embedded mock state file and a kv journal', () => {
  it('mock-state.json owned by another uid, or a link: exit 1 naming it; never reset or rewritten', async () => {
    const state = join(dir, 'data', 'mock-state.json');
    // A first command makes a valid state of root's own.
    expect((await bin(['tracker', 'labels', 'create', '--name', 'a'])).exitCode).toBe(0);
    const content = readFileSync(state, 'utf8');
    chownSync(state, NOBODY, NOBODY);
    for (const argv of [
      ['tracker', 'labels', 'list'],
      ['tracker', 'labels', 'create', '--name', 'b'],
    ]) {
      expectRefused(await bin(argv), `the mock state file ${state} is owned by uid ${NOBODY}`, `chown 0 ${state}`);
    }
    expect(readFileSync(state, 'utf8')).toBe(content);
    expect(statSync(state).uid).toBe(NOBODY);

    rmSync(state);
    const target = othersFile(content);
    symlinkSync(target, state);
    expectRefused(await bin(['tracker', 'labels', 'create', '--name', 'c']), `the mock state file ${state} is a symbolic link`);
    expect(readFileSync(target, 'utf8')).toBe(content);
  });

  it('a kv journal of another uid, group-writable, or a link: refused naming it (the reader the upgrade and its resume use)', () => {
    const j = join(dir, 'journal.json');
    writeFileSync(j, '{}', { mode: 0o600 });
    chownSync(j, NOBODY, NOBODY);
    expect(() => readJournal(j)).toThrow(LocalTrustError);
    expect(() => readJournal(j)).toThrow(`the upgrade journal ${j} is owned by uid ${NOBODY}`);
    chownSync(j, 0, 0);
    chmodSync(j, 0o620);
    expect(() => readJournal(j)).toThrow(expect.objectContaining({ hint: expect.stringContaining(`chmod go-w ${j}`) }));
    rmSync(j);
    symlinkSync(othersFile('{}'), j);
    expect(() => readJournal(j)).toThrow('is a symbolic link');
  });

  it('a kv journal of another uid or a link is refused for writing too, and left as it was', async () => {
    const j = join(dir, 'journal-w.json');
    writeFileSync(j, '{"mine":false}', { mode: 0o600 });
    chownSync(j, NOBODY, NOBODY);
    const plan = { source: '3.2', target: '3.3', members: [] } as unknown as Parameters<typeof newJournal>[1];
    const journal = newJournal('c', plan, {}, { allowSameVersion: false, now: Date.now() });
    await expect(writeJournal(j, journal, Date.now())).rejects.toThrow(`the upgrade journal ${j} is owned by uid ${NOBODY}`);
    expect(readFileSync(j, 'utf8')).toBe('{"mine":false}');
    rmSync(j);
    const target = othersFile('{"theirs":true}');
    symlinkSync(target, j);
    await expect(writeJournal(j, journal, Date.now())).rejects.toThrow('is a symbolic link');
    expect(readFileSync(target, 'utf8')).toBe('{"theirs":true}');
  });
});

describe.skipIf(!canDrop)('as an unprivileged user (setpriv --reuid 65534)', () => {
  const asNobody = (argv: string[], configDir: string, input?: string) =>
    execa(SETPRIV, ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, BIN, ...argv], {
      reject: false,
      input,
      timeout: 60_000,
      env: { PATH: process.env.PATH, HOME: '/nonexistent', NO_COLOR: '1', OPSCTL_CONFIG_DIR: configDir },
      extendEnv: false,
    });

  it("its own directory works; root's directory (even readable, 0755) is refused; a link in its own directory to a root file is refused", async () => {
    const own = join(dir, 'nobody');
    mkdirSync(own, { mode: 0o700 });
    chownSync(own, NOBODY, NOBODY);
    chmodSync(dir, 0o755);
    let r = await asNobody(['config', 'set', 'tracker', 'https://t.example', '--profile', 'p'], own);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(statSync(join(own, 'config.json')).uid).toBe(NOBODY);
    r = await asNobody(['auth', 'store-token', '--service', 'tracker', '--with-token', '--profile', 'p'], own, 'nobody-token');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(statSync(join(own, 'credentials.json')).uid).toBe(NOBODY);

    // root's directory, with a config.json nobody can read
    writeFileSync(join(dir, 'config.json'), '{"profiles":{}}', { mode: 0o644 });
    r = await asNobody(['config', 'list'], dir);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`the config directory ${dir} is owned by uid 0, not by you (uid ${NOBODY})`);
    expect(r.stderr).not.toMatch(/unexpected error|^\s+at /im);

    // a link nobody planted in its own directory, to root's file: never read or written through
    const rootFile = join(dir, 'root-creds.json');
    writeFileSync(rootFile, '{}\n', { mode: 0o644 });
    rmSync(join(own, 'credentials.json'));
    symlinkSync(rootFile, join(own, 'credentials.json'));
    r = await asNobody(['auth', 'store-token', '--service', 'tracker', '--with-token', '--profile', 'p'], own, 'nobody-token');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('is a symbolic link');
    expect(readFileSync(rootFile, 'utf8')).toBe('{}\n');
  });
});
