import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Command } from 'commander';
import { createContext } from '../../src/wiring/context.js';
import { buildProgram } from '../../src/program.js';
import { runCli, tempConfigDir } from '../helpers/cli.js';
import { startMock } from '../helpers/mock.js';

let cfg: ReturnType<typeof tempConfigDir>;
beforeEach(() => {
  cfg = tempConfigDir();
});
afterEach(() => cfg.cleanup());
const env = () => ({ OPSCTL_CONFIG_DIR: cfg.dir });

describe('config', () => {
  it('sets, gets, lists and unsets profile settings', async () => {
    expect((await runCli(['config', 'set', 'tracker', 'https://tracker.example', '--profile', 'work'], { env: env() })).code).toBe(0);
    const got = await runCli(['config', 'get', 'tracker', '--profile', 'work'], { env: env() });
    expect(got.stdout.trim()).toBe('https://tracker.example');
    expect((await runCli(['config', 'set', 'profile', 'work'], { env: env() })).code).toBe(0);
    const list = await runCli(['config', 'list', '--json'], { env: env() });
    expect(list.json()).toContainEqual({ profile: 'work', active: true, key: 'tracker', value: 'https://tracker.example' });
    expect((await runCli(['config', 'unset', 'tracker'], { env: env() })).code).toBe(0);
    expect((await runCli(['config', 'get', 'tracker'], { env: env() })).code).toBe(1);
  });

  it('rejects unknown keys and bad values, naming them', async () => {
    const bad = await runCli(['config', 'set', 'trackr', 'x'], { env: env() });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown config key "trackr"');
    expect(bad.stderr).toContain('known keys: profile, issuer, auth');
    const url = await runCli(['config', 'set', 'tracker', 'not a url'], { env: env() });
    expect(url.code).toBe(2);
    expect(url.stderr).toContain('tracker: must be an http(s) URL');
  });

  it('fails with the fix when a named profile lacks an endpoint', async () => {
    expect((await runCli(['config', 'set', 'labels', 'https://labels.example', '--profile', 'work'], { env: env() })).code).toBe(0);
    const r = await runCli(['tracker', 'labels', 'list', '--profile', 'work'], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('profile "work" has no tracker endpoint');
    expect(r.stderr).toContain('opsctl config set tracker https://… --profile work');
  });
});

describe('auth store-token --with-token', () => {
  it('stores the tracker token from stdin in a 0600 file inside a 0700 directory, and uses it', async () => {
    const mock = await startMock({ services: ['tracker'] });
    try {
      await runCli(['config', 'set', 'tracker', mock.url, '--profile', 'ci'], { env: env() });
      const login = await runCli(['auth', 'store-token', '--service', 'tracker', '--with-token', '--profile', 'ci'], {
        env: env(),
        stdin: `${mock.trackerToken}\n`,
      });
      expect(login.code).toBe(0);
      expect(login.stdout + login.stderr).not.toContain(mock.trackerToken);
      const file = join(cfg.dir, 'credentials.json');
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(statSync(cfg.dir).mode & 0o777).toBe(0o700);
      const list = await runCli(['tracker', 'labels', 'list', '--profile', 'ci', '--json'], { env: env() });
      expect(list.code).toBe(0);
      expect(list.json()).toEqual([]);
    } finally {
      await mock.close();
    }
  });

  it('refuses an empty token', async () => {
    const r = await runCli(['auth', 'store-token', '--service', 'tracker', '--with-token'], {
      env: { ...env(), OPSCTL_TRACKER_URL: 'https://t.example' },
      stdin: '\n',
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no token on standard input');
  });

  it('refuses to store a token for the embedded tracker (it provisions its own), and auth forget-token --service tracker forgets a stored one', async () => {
    const embedded = await runCli(['auth', 'store-token', '--service', 'tracker', '--with-token'], { env: env(), stdin: 'tok\n' });
    expect(embedded.code).toBe(2);
    expect(embedded.stderr).toContain('profile embedded uses the embedded tracker, which provisions its own token');
    expect((await runCli(['config', 'set', 'tracker', 'https://t.example', '--profile', 'work'], { env: env() })).code).toBe(0);
    expect((await runCli(['auth', 'store-token', '--service', 'tracker', '--with-token', '--profile', 'work'], { env: env(), stdin: 'tok\n' })).code).toBe(0);
    const logout = await runCli(['logout', '--profile', 'work'], { env: env() });
    expect(logout.stderr).toContain('a tracker token is stored: opsctl auth forget-token --service tracker --profile work forgets it');
    const forget = await runCli(['auth', 'forget-token', '--service', 'tracker', '--profile', 'work', '--json'], { env: env() });
    expect(forget.code).toBe(0);
    expect(forget.json()).toEqual({ service: 'tracker', removed: ['work'] });
    const again = await runCli(['auth', 'forget-token', '--service', 'tracker', '--all'], { env: env() });
    expect(again.stderr).toContain('no tracker token is stored for any profile: nothing to do');
  });

  it('the old names (auth login, auth logout) still work, hidden from help, with one line naming the new ones', async () => {
    expect((await runCli(['config', 'set', 'tracker', 'https://t.example', '--profile', 'old'], { env: env() })).code).toBe(0);
    const stored = await runCli(['auth', 'login', '--service', 'tracker', '--with-token', '--profile', 'old'], { env: env(), stdin: 'tok\n' });
    expect(stored.code, stored.stderr).toBe(0);
    expect(stored.stderr).toContain('`opsctl auth login` is now `opsctl auth store-token`');
    const forgot = await runCli(['auth', 'logout', '--service', 'tracker', '--profile', 'old', '--json'], { env: env() });
    expect(forgot.code, forgot.stderr).toBe(0);
    expect(forgot.json()).toEqual({ service: 'tracker', removed: ['old'] });
    expect(forgot.stderr).toContain('`opsctl auth logout` is now `opsctl auth forget-token`');
    const help = await runCli(['auth', '--help'], { env: env() });
    expect(help.stdout).toMatch(/store-token/);
    expect(help.stdout).not.toMatch(/^\s+login\b/m);
    expect(help.stdout).not.toMatch(/^\s+logout\b/m);
  });

  it("a hint names the failed command's --profile", async () => {
    expect((await runCli(['config', 'set', 'tracker', 'http://127.0.0.1:9', '--profile', 'work'], { env: env() })).code).toBe(0);
    const r = await runCli(['tracker', 'labels', 'list', '--profile', 'work'], { env: env() });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('run: opsctl auth store-token --service tracker --with-token --profile work < token.txt');
    const j = await runCli(['tracker', 'labels', 'list', '--profile', 'work', '--json'], { env: env() });
    expect(JSON.parse(j.stderr).error.hint).toContain('--with-token --profile work < token.txt');
  });

  it('lets OPSCTL_TRACKER_TOKEN beat the stored token', async () => {
    const mock = await startMock({ services: ['tracker'] });
    try {
      const e = { ...env(), OPSCTL_TRACKER_URL: mock.url };
      expect((await runCli(['auth', 'store-token', '--service', 'tracker', '--with-token'], { env: e, stdin: 'stale-token' })).code).toBe(0);
      expect((await runCli(['tracker', 'labels', 'list'], { env: e })).code).toBe(4);
      expect((await runCli(['tracker', 'labels', 'list'], { env: { ...e, OPSCTL_TRACKER_TOKEN: mock.trackerToken } })).code).toBe(0);
    } finally {
      await mock.close();
    }
  });
});

describe('the embedded default', () => {
  it('starts the mock in-process, provisions its own token, keeps state across commands, and says so once', async () => {
    const first = await runCli(['tracker', 'labels', 'create', '--name', 'embedded-1'], { env: env() });
    expect(first.code).toBe(0);
    expect(first.stderr).toContain('Using the embedded mock services');
    const second = await runCli(['tracker', 'labels', 'list', '--json=name'], { env: env() });
    expect(second.json()).toEqual([{ name: 'embedded-1' }]);
    expect(second.stderr).not.toContain('Using the embedded mock services');
  });
});

describe('help', () => {
  function leaves(cmd: Command, path: string[] = []): string[][] {
    if (cmd.commands.length === 0) return [path];
    return cmd.commands.flatMap((c) => leaves(c, [...path, c.name()]));
  }

  it('shows an example in the --help of every command', async () => {
    const program = await buildProgram(createContext({ env: env() }));
    const paths = leaves(program);
    expect(paths.length).toBeGreaterThan(10);
    for (const path of paths) {
      const r = await runCli([...path, '--help'], { env: env() });
      expect(r.code, path.join(' ')).toBe(0);
      expect(r.stdout, `opsctl ${path.join(' ')} --help`).toContain('Examples:');
      expect(r.stdout).toMatch(/Examples:\n\s+\$ .*opsctl/);
    }
  });

  it('every verb that deletes or removes names the one rule: asks, --yes without a terminal, --dry-run', async () => {
    const program = await buildProgram(createContext({ env: env() }));
    const destructive: string[] = [];
    const walk = (cmd: Command, path: string[]): void => {
      for (const c of cmd.commands) {
        const p = [...path, c.name()];
        if (/(^|-)(delete|remove)$/.test(c.name())) {
          destructive.push(p.join(' '));
          expect(c.description(), `opsctl ${p.join(' ')}`).toContain('needs --yes without one; --dry-run shows it');
          expect(
            c.options.map((o) => o.long),
            `opsctl ${p.join(' ')}`,
          ).toContain('--dry-run');
        }
        walk(c, p);
      }
    };
    walk(program, []);
    // The tree does hold such verbs in every noun that has them (an empty walk would assert nothing).
    for (const verb of [
      'tracker labels delete',
      'tracker stories bulk-delete',
      'labels delete',
      'labels permissions remove',
      'mock clients delete',
      'mock events receivers remove',
    ]) {
      expect(destructive).toContain(verb);
    }
  });

  it('documents the exit codes', async () => {
    const r = await runCli(['help', 'exit-codes', '--json'], { env: env() });
    expect(r.json().map((x: { code: number }) => x.code)).toEqual([0, 1, 2, 3, 4, 5, 6, 130]);
  });

  it('exits 2 on an unknown command or flag, with a suggestion', async () => {
    const r = await runCli(['tracker', 'lables', 'list'], { env: env() });
    expect(r.code).toBe(2);
    // the shape of every other error: "X message", then a hint
    expect(r.stderr).toBe("X unknown command 'lables'\n  did you mean labels? (see: opsctl tracker --help)\n");
    // the hint points at the level of the typo, not at a command further along the line
    const top = await runCli(['--profile', 'x', 'trakcer', 'labels', 'list'], { env: env() });
    expect(top.stderr).toBe("X unknown command 'trakcer'\n  did you mean tracker? (see: opsctl --help)\n");
    const f = await runCli(['tracker', 'labels', 'list', '--nope'], { env: env() });
    expect(f.code).toBe(2);
    expect(f.stderr).toBe("X unknown option '--nope'\n  see: opsctl tracker labels list --help\n");
    const m = await runCli(['tracker', 'labels', 'create', '--name'], { env: env() });
    expect(m.code).toBe(2);
    expect(m.stderr).toBe("X option '--name <string>' argument missing\n  see: opsctl tracker labels create --help\n");
  });

  it('accepts global flags after the subcommand', async () => {
    const r = await runCli(['tracker', 'labels', 'list', '--json', '--no-input', '--yes', '--profile', 'embedded'], { env: env() });
    expect(r.code).toBe(0);
    expect(r.json()).toEqual([]);
  });
});

describe('delete confirmation', () => {
  it('fails without a terminal unless --yes, naming the flag', async () => {
    await runCli(['tracker', 'labels', 'create', '--name', 'keep-me'], { env: env() });
    const r = await runCli(['tracker', 'labels', 'delete', '1'], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('pass --yes to confirm');
    const yes = await runCli(['tracker', 'labels', 'delete', '1', '--yes'], { env: env() });
    expect(yes.code).toBe(0);
  });

  it('asks on a terminal and deletes nothing when the answer is no (exit 5, declined)', async () => {
    await runCli(['tracker', 'labels', 'create', '--name', 'keep-me'], { env: env() });
    const asked: string[] = [];
    const r = await runCli(['tracker', 'labels', 'delete', '1'], {
      env: env(),
      tty: true,
      prompter: { confirm: async (m) => (asked.push(m), false), input: async () => '', password: async () => '' },
    });
    expect(r.code).toBe(5);
    expect(r.stderr).toContain('nothing changed');
    expect(asked).toEqual(['Delete label 1?\n  - label 1 "keep-me"']);
    expect((await runCli(['tracker', 'labels', 'get', '1'], { env: env() })).code).toBe(0);
  });
});

describe('the embedded authorization server with a clients file', () => {
  it('loads OPSCTL_MOCK_OAUTH_CLIENTS, so a profile can sign in with its own client and user', async () => {
    const { writeFileSync } = await import('node:fs');
    const file = join(cfg.dir, 'clients.yaml');
    writeFileSync(
      file,
      'clients:\n  - client_id: team-app.apps.mock\n    client_secret: s3cret\n    name: Team app\n    type: desktop\nusers:\n  - sub: "4242"\n    email: zoe@example.com\n    name: Zoe\n',
    );
    const e = { ...env(), OPSCTL_MOCK_OAUTH_CLIENTS: file };
    expect((await runCli(['config', 'set', 'client_id', 'team-app.apps.mock'], { env: e })).code).toBe(0);
    expect((await runCli(['config', 'set', 'client_secret', 's3cret'], { env: e })).code).toBe(0);
    const login = await runCli(['login', '--consent-as', 'zoe@example.com', '--scopes', 'openid', 'email'], { env: e });
    expect(login.code, login.stderr).toBe(0);
    const status = await runCli(['auth', 'status', '--json'], { env: e });
    expect(status.json()).toMatchObject({ account: 'zoe@example.com' });
  });
});
