import { existsSync, mkdtempSync, rmSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BIN, runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { until } from '../helpers/kv.js';
import { startCluster, type SimulatedTestCluster } from '../framework/index.js';
import { PtySession, SCRIPT } from '../helpers/pty.js';

/**
 * Issue 58 item 5, the small habits of etcdctl and kubectl users, through the built binary: `opsctl version`
 * points at --version, `kv lease grant` piped prints etcdctl's one line, and the ports below 1024: refused by
 * login with the reason, taken by mock serve where the user may bind them (the reason said where it may not).
 */
const cfg = tempConfigDir('opsctl-habits-etcdctl-');
const env = { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1' };
afterAll(() => cfg.cleanup());

describe('opsctl version (the kubectl and etcdctl word)', () => {
  it('an unknown command that names a top-level flag: "did you mean opsctl --version?", exit 2; opsctl --version answers', async () => {
    const r = await runBin(['version'], { env });
    expect(r.exitCode).toBe(2);
    expect(String(r.stderr)).toBe("X unknown command 'version'\n  did you mean opsctl --version? (see: opsctl --help)");
    const json = await runBin(['version', '--json'], { env });
    expect(JSON.parse(String(json.stderr))).toMatchObject({ error: { code: 'usage', message: "unknown command 'version' (did you mean opsctl --version?)" } });
    const v = await runBin(['--version'], { env });
    expect([v.exitCode, String(v.stdout)]).toEqual([0, expect.stringMatching(/^\d+\.\d+\.\d+/)]);
    // a word that is not a flag keeps the plain hint
    expect(String((await runBin(['versions'], { env })).stderr)).not.toContain('--version');
  }, 60_000);
});

// Debian's etcd 3.4 and its etcdctl (the simulated members serve no leases)
const etcd = existsSync('/usr/bin/etcd') && existsSync('/usr/bin/etcdctl');
describe.runIf(etcd)('kv lease grant: one line piped, as etcdctl prints it (a sandbox of real etcd 3.4)', () => {
  let c: SimulatedTestCluster | undefined;
  beforeAll(async () => {
    c = await startCluster({ members: 'simulated', size: 1, etcdBin: '/usr/bin', configDir: cfg.dir });
  }, 150_000);
  afterAll(async () => {
    await c?.destroy();
  }, 150_000);

  it('piped: "lease <16 hex> granted with TTL(60s)" and nothing else; --json and --jq .id the fields; on a terminal the id and TTL as a record', async () => {
    const piped = await runBin(['kv', 'lease', 'grant', '60'], { env });
    expect(piped.exitCode, String(piped.stderr)).toBe(0);
    expect(String(piped.stdout)).toMatch(/^lease [0-9a-f]{16} granted with TTL\(60s\)$/);
    // the shape of etcdctl's own line, word for word but the id
    const endpoint = String((await runBin(['kv', 'sandbox', 'status', '--jq', '.[0].endpoint'], { env })).stdout).trim();
    const theirs = await execa('/usr/bin/etcdctl', ['--endpoints', endpoint, 'lease', 'grant', '60'], { env: { ETCDCTL_API: '3' }, extendEnv: false });
    expect(String(theirs.stdout).replace(/[0-9a-f]{16}/, 'ID')).toBe(String(piped.stdout).replace(/[0-9a-f]{16}/, 'ID'));
    // what a script written for etcdctl does with it
    const id = String(piped.stdout).split(' ')[1]!;
    const ttl = await runBin(['kv', 'lease', 'timetolive', id, '-w', 'simple'], { env });
    expect(String(ttl.stdout)).toMatch(new RegExp(`^lease ${id} granted with TTL\\(60s\\), remaining\\(\\d+s\\)$`));
    const json = await runBin(['kv', 'lease', 'grant', '60', '--json'], { env });
    expect(JSON.parse(String(json.stdout))).toEqual({ id: expect.stringMatching(/^[0-9a-f]{16}$/), ttl: 60 });
    expect(String((await runBin(['kv', 'lease', 'grant', '60', '--jq', '.id'], { env })).stdout)).toMatch(/^[0-9a-f]{16}$/);
    if (!existsSync(SCRIPT)) return;
    const tty = PtySession.opsctl(['kv', 'lease', 'grant', '60'], { env });
    try {
      expect(await tty.exitCode()).toBe(0);
      expect(tty.text).toMatch(/^id +[0-9a-f]{16}\nttl +60\n?$/m);
      expect(tty.text).not.toContain('granted with');
    } finally {
      tty.kill();
    }
  }, 120_000);
});

describe('ports below 1024: login refuses them and says why; mock serve takes them where the user may bind them', () => {
  const asRoot = process.getuid?.() === 0;
  let serving: ReturnType<typeof execa> | undefined;
  afterEach(() => {
    if (serving?.pid && serving.exitCode === null) process.kill(serving.pid, 'SIGTERM');
    serving = undefined;
  });

  it('login --port 80: exit 2 naming the field, why (a listener for one sign-in, no root for it) and the fix, before any page', async () => {
    const r = await runBin(['login', '--port', '80', '--no-browser'], { env });
    expect(r.exitCode).toBe(2);
    const err = String(r.stderr);
    expect(err).toContain("--port: 80 is a privileged port (below 1024): login's redirect listener opens only for this sign-in");
    expect(err).toContain('leave --port out (a free port: a loopback redirect URI matches any port, RFC 8252 §7.3)');
    expect(err).not.toMatch(/https?:\/\/\S+\/authorize|Sign(ing)? in at/);
    expect((await runBin(['login', '--port', '0'], { env })).exitCode).toBe(2);
  }, 60_000);

  it.skipIf(!asRoot || !existsSync('/usr/bin/setpriv'))(
    'mock serve --port 80: as nobody, exit 1 "port 80 is privileged … this user may not bind one" with the fix; as root it listens (or names the port in use), never a usage error',
    async () => {
      const nd = mkdtempSync(join(tmpdir(), 'opsctl-habits-nobody-'));
      chmodSync(nd, 0o777);
      try {
        const r = await execa(
          '/usr/bin/setpriv',
          ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, BIN, 'mock', 'serve', '--port', '80', '--memory'],
          { reject: false, extendEnv: false, env: { PATH: process.env.PATH, HOME: '/nonexistent', NO_COLOR: '1', OPSCTL_CONFIG_DIR: join(nd, 'c') } },
        );
        expect(r.exitCode, String(r.stderr)).toBe(1);
        expect(String(r.stderr)).toContain(
          'cannot listen on 127.0.0.1:80: permission denied: port 80 is privileged (below 1024), and this user may not bind one',
        );
        expect(String(r.stderr)).toContain('a privileged port needs root or the CAP_NET_BIND_SERVICE capability');
      } finally {
        rmSync(nd, { recursive: true, force: true });
      }
      // root: the port is the server's to take (or another program's already)
      const said: string[] = [];
      serving = execa(process.execPath, [BIN, 'mock', 'serve', '--port', '80', '--memory'], { reject: false, env, all: true });
      serving.all!.on('data', (c: Buffer) => said.push(c.toString()));
      await until(
        () => /listening on http:\/\/127\.0\.0\.1:80\b|port 80 is already in use/.test(said.join('')) || serving!.exitCode !== null,
        60_000,
        'mock serve on port 80',
      );
      expect(said.join('')).toMatch(/listening on http:\/\/127\.0\.0\.1:80\b|port 80 is already in use/);
    },
    90_000,
  );
});

// etcd 3.5.35 built by scripts/etcd-build.sh (global setup sets OPSCTL_ETCD_35_DIR where it finds it)
const v35 = process.env.OPSCTL_ETCD_35_DIR && existsSync(join(process.env.OPSCTL_ETCD_35_DIR, 'etcdctl')) ? process.env.OPSCTL_ETCD_35_DIR : undefined;
describe.runIf(Boolean(v35))("etcdctl's order and outputs: flags before the verb, -w json and -w table byte for byte (a sandbox of real etcd 3.5.35)", () => {
  const own = tempConfigDir('opsctl-habits-etcdctl-35-');
  const env35 = { OPSCTL_CONFIG_DIR: own.dir, NO_COLOR: '1' };
  let ep = '';
  let c: SimulatedTestCluster | undefined;
  beforeAll(async () => {
    c = await startCluster({ members: 'simulated', size: 1, etcdBin: v35!, configDir: own.dir });
    ep = new URL(String((await runBin(['kv', 'sandbox', 'status', '--jq', '.[0].endpoint'], { env: env35 })).stdout).trim()).host;
  }, 150_000);
  afterAll(async () => {
    await c?.destroy();
    own.cleanup();
  }, 150_000);

  it('opsctl kv --endpoints X -w FORMAT VERB prints what etcdctl --endpoints X VERB -w FORMAT prints, for member list and endpoint status', async () => {
    const etcdctl = (args: string[]) => execa(join(v35!, 'etcdctl'), ['--endpoints', ep, ...args], { env: { ETCDCTL_API: '3' }, extendEnv: false });
    // etcdctl's order: the flags before the verb
    expect((await runBin(['kv', '--endpoints', ep, 'put', 'habit', 'one'], { env: env35 })).exitCode).toBe(0);
    const got = await runBin(['kv', '--endpoints', ep, '-w', 'simple', 'get', 'habit'], { env: env35 });
    expect([got.exitCode, String(got.stdout)]).toEqual([0, String((await etcdctl(['get', 'habit'])).stdout)]);
    for (const verb of [
      ['member', 'list'],
      ['endpoint', 'status'],
    ])
      for (const format of ['json', 'table']) {
        const mine = await runBin(['kv', '--endpoints', ep, '-w', format, ...verb], { env: env35 });
        expect(mine.exitCode, String(mine.stderr)).toBe(0);
        // (a raft index may move between the two calls only by a write: none is made here)
        expect(`${String(mine.stdout)}\n`, `${verb.join(' ')} -w ${format}`).toBe(`${String((await etcdctl([...verb, '-w', format])).stdout)}\n`);
      }
    // a flag before the verb that the verb does not have: refused as before, naming it
    const bad = await runBin(['kv', '--bogus', 'get', 'habit'], { env: env35 });
    expect([bad.exitCode, String(bad.stderr)]).toEqual([2, expect.stringContaining("unknown option '--bogus'")]);
  }, 120_000);
});
