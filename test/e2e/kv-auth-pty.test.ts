import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { requireProgram } from '../helpers/e2e.js';
import { startCluster, type RealTestCluster } from '../framework/index.js';
import { PtySession, SCRIPT } from '../helpers/pty.js';

const PASSWORD = 'pty-Secret-42';

/**
 * `kv … --user NAME` with neither OPSCTL_KV_PASSWORD nor a password file: the built binary asks on
 * the terminal (a real pseudo-terminal) against a real etcd 3.4 member with auth enabled.
 */
describe.runIf(
  requireProgram('script (util-linux, for the pty tests)', SCRIPT) && requireProgram('etcd', '/usr/bin/etcd') && requireProgram('etcdctl', '/usr/bin/etcdctl'),
)('kv --user: the password prompt on a real terminal (built binary, real etcd 3.4 with auth)', () => {
  const cfg = tempConfigDir('opsctl-kv-pty-');
  let c: RealTestCluster;
  let ep: string;
  const sessions: PtySession[] = [];
  // No password source at all: not from this machine's environment either.
  const env = { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', OPSCTL_KV_PASSWORD: undefined, OPSCTL_KV_PASSWORD_FILE: undefined };
  const pty = (args: string[]) => {
    const s = PtySession.opsctl(args, { env });
    sessions.push(s);
    return s;
  };

  beforeAll(async () => {
    c = await startCluster({ members: 'real', size: 1, version: '/usr/bin', ready: 'etcdctl', rootPassword: PASSWORD, configDir: cfg.dir });
    ep = c.endpoints[0]!;
  }, 40_000);
  afterEach(() => {
    for (const s of sessions.splice(0)) s.kill();
  });
  afterAll(async () => {
    await c?.destroy();
    cfg.cleanup();
  });

  it('the typed password is not shown on the screen, and the command works with it', async () => {
    const put = pty(['kv', 'put', 'pty/key', 'typed', '--endpoints', ep, '--user', 'root']);
    await put.waitFor('etcd password for root');
    put.type(`${PASSWORD}\r`);
    expect(await put.exitCode()).toBe(0);
    // Nothing the terminal showed (echo included) holds the password; the prompt masked each key.
    expect(put.output).not.toContain(PASSWORD);
    expect(put.text).toMatch(/etcd password for root.*\*{3,}/);
    // The write really happened, with the typed password (read back by etcdctl as root).
    const got = c.real.etcdctl('/usr/bin', ['--user', `root:${PASSWORD}`, 'get', 'pty/key', '--print-value-only']);
    expect(String(got).trim()).toBe('typed');

    const get = pty(['kv', 'get', 'pty/key', '--endpoints', ep, '--user', 'root']);
    await get.waitFor('etcd password for root');
    get.type(`${PASSWORD}\r`);
    expect(await get.exitCode()).toBe(0);
    expect(get.text).toMatch(/^typed$/m);
    expect(get.output).not.toContain(PASSWORD);
  });

  it('a wrong password typed at the prompt is refused by etcd (exit 4, as every kv auth refusal), the password not shown', async () => {
    const s = pty(['kv', 'get', 'pty/key', '--endpoints', ep, '--user', 'root']);
    await s.waitFor('etcd password for root');
    s.type('wrong-Pass-1\r');
    expect(await s.exitCode()).toBe(4);
    expect(s.output).not.toContain('wrong-Pass-1');
    expect(s.text).toMatch(/etcd refused user root: wrong user name or password/);
    expect(s.text).toMatch(/check --user and the password \(prompt, OPSCTL_KV_PASSWORD or --password-file\)/);
  });

  it('Ctrl-C at the prompt exits 130, nothing sent', async () => {
    const s = pty(['kv', 'put', 'pty/never', 'x', '--endpoints', ep, '--user', 'root']);
    await s.waitFor('etcd password for root');
    s.type('half');
    s.ctrlC();
    expect(await s.exitCode()).toBe(130);
    expect(s.text).toMatch(/interrupted/);
    expect(s.output).not.toContain('half');
    const got = c.real.etcdctl('/usr/bin', ['--user', `root:${PASSWORD}`, 'get', 'pty/never', '--print-value-only']);
    expect(String(got).trim()).toBe('');
  });

  it('without a terminal: exit 2, the error names OPSCTL_KV_PASSWORD and --password-file', async () => {
    const r = await runBin(['kv', 'get', 'pty/key', '--endpoints', ep, '--user', 'root'], {
      env: { OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_KV_PASSWORD: undefined, OPSCTL_KV_PASSWORD_FILE: undefined },
    });
    expect(r.exitCode, String(r.stderr)).toBe(2);
    expect(String(r.stderr)).toMatch(/--user root: no password/);
    expect(String(r.stderr)).toMatch(/--password-file/);
    expect(String(r.stderr)).toMatch(/OPSCTL_KV_PASSWORD/);
  });
});
