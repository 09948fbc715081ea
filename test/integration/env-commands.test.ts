import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli, tempConfigDir } from '../helpers/cli.js';
import { startCluster, type SimulatedTestCluster } from '../framework/index.js';
import { runBin } from '../helpers/bin.js';

/** Bad environments around commands: cluster files, snapshot paths, profiles, busy ports, silent endpoints. */
let dir: string;
let cleanup: () => void;
let env: NodeJS.ProcessEnv;
beforeEach(() => {
  ({ dir, cleanup } = tempConfigDir('opsctl-env-cmds-'));
  env = { OPSCTL_CONFIG_DIR: dir };
});
afterEach(() => cleanup());

function expectNoCrash(stderr: string): void {
  expect(stderr).not.toMatch(/unexpected error/i);
  expect(stderr).not.toMatch(/^\s+at /m);
}

describe('kv cluster files and snapshot paths (one simulated member)', () => {
  let c: SimulatedTestCluster;
  let endpoint: string;
  beforeAll(async () => {
    c = await startCluster({ members: 'simulated', size: 1, version: '3.2' });
    endpoint = c.members[0]!.clientUrl;
  }, 60_000);
  afterAll(() => c?.destroy());

  it("--cluster prod.yaml in the README's YAML form (flow mappings, comments) loads", async () => {
    const file = join(dir, 'prod.yaml');
    writeFileSync(
      file,
      `# prod.yaml\nmembers:\n  - { name: infra1, endpoint: ${endpoint}, host: infra1 }\ndriver:\n  type: command\n  stop: ssh {host} sudo systemctl stop etcd\n  start: ssh {host} sudo systemctl start etcd@{version}\n  running: ssh {host} systemctl is-active --quiet etcd     # exit 0 while the process exists\n`,
    );
    const r = await runCli(['kv', 'health', '--cluster', file, '--json'], { env: c.sandbox.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('is not a function');
    expect(JSON.stringify(r.json())).toContain(endpoint);
  });

  it('a cluster file that is not YAML is a usage error naming the file', async () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'members: [ {name: a\n');
    const r = await runCli(['kv', 'health', '--cluster', file], { env: c.sandbox.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(file);
    expect(r.stderr).not.toContain('is not a function');
    expectNoCrash(r.stderr);
  });

  it('snapshot save into a directory that does not exist: refused, nothing created', async () => {
    const target = join(dir, 'no', 'such', 'dir', 'x.db');
    const r = await runCli(['kv', 'snapshot', 'save', target], { env: c.sandbox.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(join(dir, 'no', 'such', 'dir'));
    expect(r.stderr).toContain('does not exist');
    expect(existsSync(join(dir, 'no'))).toBe(false);
    expectNoCrash(r.stderr);
  });

  it('snapshot save onto an existing file: refused without --force (file unchanged), replaced with it', async () => {
    const target = join(dir, 'backup.db');
    writeFileSync(target, 'precious');
    const r = await runCli(['kv', 'snapshot', 'save', target], { env: c.sandbox.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('already exists');
    expect(r.stderr).toContain('--force');
    expect(readFileSync(target, 'utf8')).toBe('precious');
    const forced = await runCli(['kv', 'snapshot', 'save', target, '--force'], { env: c.sandbox.env });
    expect(forced.code, forced.stderr).toBe(0);
    expect(readFileSync(target, 'utf8')).not.toBe('precious');
  });

  it('snapshot save when no member of the cluster file serves: exit 1 naming each member and why it was passed over, no file', async () => {
    // a port nothing listens on: taken, then given back
    const closed = createNetServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const dead = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((r) => closed.close(() => r()));
    const file = join(dir, 'dead.yaml');
    writeFileSync(file, `members:\n  - { name: gone1, endpoint: ${dead} }\n`);
    const target = join(dir, 'none.db');
    const r = await runCli(['kv', 'snapshot', 'save', target, '--cluster', file], { env: c.sandbox.env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`no healthy member to take a snapshot from: gone1 (${dead}): `);
    expect(r.stderr).toContain('opsctl kv health');
    expect(existsSync(target)).toBe(false);
    expectNoCrash(r.stderr);
  });

  it('snapshot save to a path under a regular file: a message about the path, no --endpoint hint', async () => {
    writeFileSync(join(dir, 'afile'), '');
    const r = await runCli(['kv', 'snapshot', 'save', join(dir, 'afile', 'x.db')], { env: c.sandbox.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is a file, not a directory');
    expect(r.stderr).not.toContain('--endpoint');
    expectNoCrash(r.stderr);
  });
});

describe('config set profile', () => {
  it('an unknown profile is refused, naming the existing ones and how to create one', async () => {
    expect((await runCli(['config', 'set', 'tracker', 'https://t.example', '--profile', 'work'], { env })).code).toBe(0);
    const r = await runCli(['config', 'set', 'profile', 'nosuch'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no profile "nosuch" (named by config set profile): the profiles are embedded, work');
    expect(r.stderr).toContain('opsctl config set tracker https://… --profile nosuch');
    expect((await runCli(['config', 'get', 'profile'], { env })).code).toBe(1);
    const ok = await runCli(['config', 'set', 'profile', 'work'], { env });
    expect(ok.code).toBe(0);
    expect((await runCli(['config', 'get', 'profile'], { env })).stdout.trim()).toBe('work');
  });
});

describe('mock serve cannot listen', () => {
  let busy: NetServer;
  beforeAll(async () => {
    busy = createNetServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
  });
  afterAll(() => new Promise<void>((r) => busy.close(() => r())));

  it('a busy port: exit 1 naming the port and the fix', async () => {
    const port = (busy.address() as AddressInfo).port;
    const r = await runCli(['mock', 'serve', '--memory', '--port', String(port)], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`the port ${port} is already in use`);
    expect(r.stderr).toContain('--port 0');
    expectNoCrash(r.stderr);
  });

  it('an address not on this machine (192.0.2.1, TEST-NET, EADDRNOTAVAIL): exit 1 naming it', async () => {
    const r = await runCli(['mock', 'serve', '--memory', '--host', '192.0.2.1', '--expose-admin'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('192.0.2.1 is not an address of this machine');
    expectNoCrash(r.stderr);
  });

  it('a malformed address: exit 2', async () => {
    const r = await runCli(['mock', 'serve', '--memory', '--host', '10.0.0.1:80'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--host');
    expectNoCrash(r.stderr);
  });

  it('a state file of the wrong shape: refused before listening, file unchanged', async () => {
    const state = join(dir, 'state.json');
    writeFileSync(state, '{"tracker":null}');
    const r = await runCli(['mock', 'serve', '--state', state], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(state);
    expect(r.stdout).not.toContain('listening');
    expect(readFileSync(state, 'utf8')).toBe('{"tracker":null}');
  });
});

describe('an endpoint that accepts and never answers', () => {
  let silent: NetServer;
  const sockets = new Set<Socket>();
  beforeAll(async () => {
    silent = createNetServer((s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  });
  afterAll(() => {
    for (const s of sockets) s.destroy();
    return new Promise<void>((r) => silent.close(() => r()));
  });

  it('says what it waits for, gives up within OPSCTL_HTTP_TIMEOUT_MS with a message naming the endpoint, exit 1', async () => {
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const r = await runCli(['tracker', 'labels', 'list'], {
      env: { ...env, OPSCTL_TRACKER_URL: url, OPSCTL_TRACKER_TOKEN: 'x', OPSCTL_HTTP_TIMEOUT_MS: '1500' },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`tracker: waiting for an answer to GET ${url}/api/v3/labels`);
    expect(r.stderr).toContain(`failed: no answer within 1.5 s`);
    expect(r.stderr).toContain(url);
    expect(r.stderr).toContain('OPSCTL_HTTP_TIMEOUT_MS');
    expect(r.stderr).not.toContain('Headers Timeout Error');
    expectNoCrash(r.stderr);
  });
});

it('opsctl help environment documents the whole-request bound OPSCTL_HTTP_TIMEOUT_MS', async () => {
  const r = await runCli(['help', 'environment'], { env });
  expect(r.code).toBe(0);
  expect(r.stdout.replace(/\s+/g, ' ')).toMatch(/OPSCTL_HTTP_TIMEOUT_MS .*all retries included \(default 30000\)/);
});

describe('an endpoint that drops the first connections', () => {
  let server: Server;
  let hits = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      hits++;
      if (hits <= 2) return req.socket.destroy();
      res.setHeader('content-type', 'application/json');
      res.end('[]');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('names each retry on stderr and succeeds', async () => {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const r = await runCli(['tracker', 'labels', 'list'], { env: { ...env, OPSCTL_TRACKER_URL: url, OPSCTL_TRACKER_TOKEN: 'x' } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('retrying (attempt 2 of 4)');
    expect(r.stderr).toContain('retrying (attempt 3 of 4)');
  });
});

describe('signing in to the local mock without any browser', () => {
  it('--consent-as is a visible, documented option of login', async () => {
    const r = await runCli(['login', '--help'], { env });
    expect(r.code).toBe(0);
    const help = r.stdout.replace(/\s+/g, ' ');
    expect(help).toContain('--consent-as <email>');
    expect(help).toContain('LOCAL MOCK only');
    expect(help).toContain('opsctl login --consent-as alice@example.com');
  });

  it('a login with no browser against the embedded mock points to --consent-as', async () => {
    const r = await runCli(['login', '--no-browser', '--timeout', '1s'], { env });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('opsctl login --consent-as alice@example.com');
  });

  it('--consent-as signs in to the embedded mock, and is refused (exit 2, nothing sent) for a server that is not local', async () => {
    const ok = await runCli(['login', '--consent-as', 'alice@example.com'], { env });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout + ok.stderr).toContain('alice@example.com');
    const far = await runCli(['login', '--consent-as', 'alice@example.com'], {
      env: { ...env, OPSCTL_AUTH_URL: 'https://auth.example.com', OPSCTL_CLIENT_ID: 'x' },
    });
    expect(far.code).toBe(2);
    expect(far.stderr).toContain('--consent-as only works against a local mock');
  });

  it('--consent-as against a local server that is not running: exit 1 naming its address, no "seeded account" hint (built binary)', async () => {
    // A loopback port that was free a moment ago and has no listener now.
    const port = await new Promise<number>((resolve) => {
      const s = createNetServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const r = await runBin(['login', '--consent-as', 'alice@example.com', '--timeout', '60s'], {
      env: { ...env, OPSCTL_AUTH_URL: `http://127.0.0.1:${port}` },
    });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`cannot reach the authorization server http://127.0.0.1:${port}`);
    expect(r.stderr).toContain('ECONNREFUSED');
    expect(r.stderr).toContain('OPSCTL_AUTH_URL');
    expect(r.stderr).not.toContain('seeded account');
    expectNoCrash(String(r.stderr));
    expect(existsSync(join(dir, 'credentials.json'))).toBe(false);
  });

  it('--consent-as with an account the mock does not have is still a usage error (exit 2) pointing to a seeded one', async () => {
    const r = await runBin(['login', '--consent-as', 'nobody@example.com'], { env });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('no consent form for nobody@example.com');
    expect(r.stderr).toContain('alice@example.com');
  });
});
