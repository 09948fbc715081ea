import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { runBin } from '../helpers/bin.js';
import { requireProgram } from '../helpers/e2e.js';
import { startMock } from '../helpers/mock.js';

const haveKeyring =
  requireProgram('dbus-run-session', '/usr/bin/dbus-run-session') &&
  requireProgram('gnome-keyring-daemon', '/usr/bin/gnome-keyring-daemon') &&
  requireProgram('secret-tool', '/usr/bin/secret-tool');

/**
 * A real Secret Service: Debian's gnome-keyring in a D-Bus session of its own (dbus-run-session), its
 * login keyring unlocked with a password on stdin. The session lives until the test writes a line.
 */
async function startSecretService(home: string): Promise<{ address: string; env: NodeJS.ProcessEnv; stop: () => Promise<void> }> {
  const script = `
printf 'opsctl-test-password' | gnome-keyring-daemon --foreground --unlock --components=secrets >/dev/null 2>&1 &
daemon=$!
ok=
for i in $(seq 1 200); do
  if dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q 'boolean true'; then ok=1; break; fi
  sleep 0.1
done
[ -n "$ok" ] && echo "READY $DBUS_SESSION_BUS_ADDRESS" || echo "FAILED no Secret Service within 20 s"
read _
kill $daemon
wait $daemon 2>/dev/null
`;
  const env = { ...process.env, HOME: home, XDG_DATA_HOME: join(home, 'data'), XDG_RUNTIME_DIR: join(home, 'run'), XDG_CONFIG_HOME: join(home, 'cfg') };
  const { mkdirSync } = await import('node:fs');
  mkdirSync(join(home, 'run'), { recursive: true, mode: 0o700 });
  const child: ChildProcess = spawn('dbus-run-session', ['--', 'bash', '-c', script], { env, stdio: ['pipe', 'pipe', 'ignore'] });
  const line = await new Promise<string>((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`no D-Bus session within 30 s: ${buf}`)), 30_000);
    child.stdout!.on('data', (c: Buffer) => {
      buf += c.toString();
      if (buf.includes('\n')) {
        clearTimeout(timer);
        resolve(buf.split('\n')[0]!);
      }
    });
    child.once('exit', (code) => reject(new Error(`dbus-run-session ended (${code}): ${buf}`)));
  });
  if (!line.startsWith('READY ')) throw new Error(line);
  const address = line.slice('READY '.length);
  return {
    address,
    env: { ...env, DBUS_SESSION_BUS_ADDRESS: address },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const timer = setTimeout(() => (child.kill('SIGKILL'), resolve()), 10_000);
        child.once('exit', () => (clearTimeout(timer), resolve()));
        child.stdin!.end('stop\n');
      }),
  };
}

describe.skipIf(!haveKeyring)('secrets in a real Secret Service (gnome-keyring under dbus-run-session)', () => {
  let mock: Awaited<ReturnType<typeof startMock>>;
  let dir: string;
  let ss: Awaited<ReturnType<typeof startSecretService>>;

  beforeAll(async () => {
    mock = await startMock({ services: ['oauth', 'api'] });
    dir = mkdtempSync(join(tmpdir(), 'opsctl-e2e-keyring-'));
    ss = await startSecretService(join(dir, 'home'));
  }, 60_000);
  afterAll(async () => {
    await ss?.stop();
    await mock?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const lookup = (key: string) => execa('secret-tool', ['lookup', 'service', 'opsctl', 'username', key], { env: ss.env, reject: false });

  it('login keeps the tokens in the keyring (none in the file); api and auth token read them; logout removes them', async () => {
    const config = join(dir, 'config');
    const env = { ...ss.env, OPSCTL_CONFIG_DIR: config, OPSCTL_AUTH_URL: mock.url, OPSCTL_API_URL: mock.url };
    const login = await runBin(['login', '--consent-as', 'alice@example.com', '--scopes', 'openid', 'email', 'media.readonly'], { env });
    expect(login.exitCode, login.stderr as string).toBe(0);
    expect(login.stdout).toContain('stored in: OS keyring');
    expect(login.stderr).not.toContain('no OS keyring');

    const file = join(config, 'credentials.json');
    const text = readFileSync(file, 'utf8');
    const account = JSON.parse(text).embedded.accounts[0];
    expect(account).toMatchObject({ account: 'alice@example.com', storage: 'keyring', issuer: mock.url });
    expect(account.access_token).toBeUndefined();
    expect(account.refresh_token).toBeUndefined();

    const token = await runBin(['auth', 'token'], { env });
    expect(token.exitCode, token.stderr as string).toBe(0);
    const access = (token.stdout as string).trim();
    expect(text).not.toContain(access);
    // The keyring itself holds them, filed under opsctl.
    const key = `oauth:embedded:${mock.url}:alice@example.com`;
    const entry = await lookup(key);
    expect(entry.exitCode).toBe(0);
    expect(JSON.parse(entry.stdout).access_token).toBe(access);

    const api = await runBin(['api', '/media/v3/channels', '-f', 'part=snippet', '-f', 'mine=true'], { env });
    expect(JSON.parse(api.stdout as string).items[0].snippet.title).toBe("alice's channel");
    const status = await runBin(['auth', 'status', '--json'], { env });
    expect(JSON.parse(status.stdout as string)).toMatchObject({ account: 'alice@example.com', stored_in: 'OS keyring' });

    // Without the D-Bus session the keyring cannot be reached: exit 4 naming the keyring and the way out.
    const away = await runBin(['auth', 'token'], { env: { ...env, DBUS_SESSION_BUS_ADDRESS: '' } });
    expect(away.exitCode).toBe(4);
    expect(away.stderr).toContain('in the OS keyring, which cannot be reached');
    expect(away.stderr).toContain('--insecure-storage');

    const saved = readFileSync(file, 'utf8');
    const out = await runBin(['logout'], { env });
    expect(out.exitCode, out.stderr as string).toBe(0);
    expect((await lookup(key)).exitCode).not.toBe(0);
    // Put the file back: the account's tokens are gone from the keyring, and opsctl says so.
    writeFileSync(file, saved, { mode: 0o600 });
    const gone = await runBin(['auth', 'token'], { env });
    expect(gone.exitCode).toBe(4);
    expect(gone.stderr).toContain('the OS keyring holds no tokens for alice@example.com');
  });

  it('--insecure-storage keeps the tokens in the 0600 file even with a keyring', async () => {
    const config = join(dir, 'config-insecure');
    const env = { ...ss.env, OPSCTL_CONFIG_DIR: config, OPSCTL_AUTH_URL: mock.url };
    const login = await runBin(['login', '--consent-as', 'bob@example.com', '--insecure-storage'], { env });
    expect(login.exitCode, login.stderr as string).toBe(0);
    expect(login.stderr).not.toContain('no OS keyring');
    const account = JSON.parse(readFileSync(join(config, 'credentials.json'), 'utf8')).embedded.accounts[0];
    expect(account.storage).toBe('file');
    expect(typeof account.access_token).toBe('string');
  });

  it('client_secret goes to the keyring, never config.json; one left in config.json is moved on first use, with a notice', async () => {
    const config = join(dir, 'config-secret');
    const env = { ...ss.env, OPSCTL_CONFIG_DIR: config };
    expect((await runBin(['config', 'set', 'auth', mock.url, '--profile', 'work'], { env })).exitCode).toBe(0);
    const set = await runBin(['config', 'set', 'client_secret', 'kr-s3cret', '--profile', 'work'], { env });
    expect(set.exitCode, set.stderr as string).toBe(0);
    expect(set.stderr).toContain('in the OS keyring');
    expect(readFileSync(join(config, 'config.json'), 'utf8')).not.toContain('kr-s3cret');
    expect(readFileSync(join(config, 'credentials.json'), 'utf8')).not.toContain('kr-s3cret');
    expect((await lookup('client_secret:work')).stdout).toBe('kr-s3cret');
    const get = await runBin(['config', 'get', 'client_secret', '--profile', 'work'], { env });
    expect(get.stdout).toContain('[set: in the OS keyring]');

    // An older opsctl's config.json with the secret in it.
    const cfgFile = join(config, 'config.json');
    const cfg = JSON.parse(readFileSync(cfgFile, 'utf8'));
    cfg.profiles.old = { auth: mock.url, client_secret: 'old-s3cret' };
    writeFileSync(cfgFile, JSON.stringify(cfg));
    const list = await runBin(['config', 'list', '--json'], { env });
    expect(list.exitCode, list.stderr as string).toBe(0);
    expect(list.stderr).toContain(`moved the client_secret of profile old out of ${cfgFile}`);
    expect(list.stdout).not.toContain('s3cret');
    expect(JSON.parse(list.stdout as string)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ profile: 'old', key: 'client_secret', value: '[set: in the OS keyring]' }),
        expect.objectContaining({ profile: 'work', key: 'client_secret', value: '[set: in the OS keyring]' }),
      ]),
    );
    expect(readFileSync(cfgFile, 'utf8')).not.toContain('old-s3cret');
    expect((await lookup('client_secret:old')).stdout).toBe('old-s3cret');
    // Said once: the next command finds nothing to move.
    expect((await runBin(['config', 'list'], { env })).stderr).not.toContain('moved');
    expect(existsSync(join(config, 'credentials.json'))).toBe(true);
  });
});
