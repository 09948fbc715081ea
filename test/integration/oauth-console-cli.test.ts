import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET } from '@opsctl/mock/services/oauth/registry.js';
import { mintRefreshToken } from '@opsctl/mock/services/oauth/tokens.js';
import { runBin } from '../helpers/bin.js';
import { runCli, tempConfigDir } from '../helpers/cli.js';
import { startMock } from '../helpers/mock.js';
import { playBrowser, postForm } from '../helpers/oauth-browser.js';
import { freePort, serveUrl, startReceiver } from '../helpers/serve.js';

// `opsctl mock clients …` and `opsctl mock events …` against a mock named by OPSCTL_AUTH_URL (in-process
// CLI, real HTTP), and the built binary against the embedded mock.

let mock: Awaited<ReturnType<typeof startMock>>;
const cfg = tempConfigDir();
let env: NodeJS.ProcessEnv;
const cli = (...args: string[]) => runCli(args, { env });
/** `--json` last: before the command it would take the next word as its field list. */
const cliJson = (...args: string[]) => runCli([...args, '--json'], { env });
const writes = () => mock.requests.filter((r) => r.method !== 'GET' && r.path.startsWith('/oauth2/mock')).length;

beforeAll(async () => {
  mock = await startMock({ services: ['oauth'], options: { oauth: { events: { retryMinMs: 20, retryMaxMs: 200 } } } });
  env = { OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_AUTH_URL: mock.url };
});
afterAll(async () => {
  await mock.close();
  cfg.cleanup();
});

describe('opsctl mock clients', () => {
  it('create of every type, list, get, update, delete, restore', async () => {
    const made = {} as Record<'desktop' | 'universal_desktop' | 'mobile_a' | 'mobile_b' | 'extension', string>;
    for (const [type, extra] of [
      ['desktop', []],
      ['universal_desktop', ['--store-id', '9NBLGGH4NNS1']],
      ['mobile_a', ['--package-name', 'com.example.cli', '--sha1-fingerprint', 'da39a3ee5e6b4b0d3255bfef95601890afd80709', '--custom-scheme']],
      ['mobile_b', ['--bundle-id', 'com.example.cli', '--team-id', 'ABCDE12345', '--store-id', '284882215']],
      ['extension', ['--item-id', 'abcdefghijklmnopabcdefghijklmnop']],
    ] as const) {
      const r = await cliJson('mock', 'clients', 'create', '--type', type, '--name', `CLI ${type}`, ...extra);
      expect(r.code, r.stderr).toBe(0);
      made[type] = r.json().client_id;
      expect(r.json().client_secret).toBeUndefined(); // only with --show-secret
    }
    const shown = await cliJson('mock', 'clients', 'create', '--type', 'desktop', '--name', 'With secret', '--show-secret');
    expect(shown.json().client_secret).toMatch(/^MOCKSPX-/);
    expect((await cli('mock', 'clients', 'get', made.mobile_a)).stdout).toMatch(/custom_scheme_enabled\ttrue/);

    const list = await cli('mock', 'clients', 'list');
    expect(list.code).toBe(0);
    for (const id of Object.values(made)) expect(list.stdout).toContain(id);
    expect(list.stdout).not.toContain('MOCKSPX-');

    const upd = await cliJson('mock', 'clients', 'update', made.mobile_a, '--custom-scheme', 'off', '--name', 'Renamed');
    expect(upd.json()).toMatchObject({ name: 'Renamed', custom_scheme_enabled: false });
    expect((await cliJson('mock', 'clients', 'update', made.mobile_b, '--clear', 'store-id')).json().store_id).toBeNull();

    const del = await cli('mock', 'clients', 'delete', made.desktop, '--yes');
    expect(del.code).toBe(0);
    expect(del.stderr).toMatch(/restorable until/);
    expect((await cliJson('mock', 'clients', 'get', made.desktop)).json().status).toBe('deleted');
    expect((await cliJson('mock', 'clients', 'list', '--active')).json().map((c: any) => c.client_id)).not.toContain(made.desktop);
    expect((await cli('mock', 'clients', 'delete', made.universal_desktop)).code).toBe(2); // no terminal, no --yes
    const dry = await cliJson('mock', 'clients', 'delete', made.universal_desktop, '--dry-run');
    expect(dry.json()).toMatchObject({ dry_run: true, changed: false });
    expect((await cliJson('mock', 'clients', 'get', made.universal_desktop)).json().status).toBe('active');
    const res = await cliJson('mock', 'clients', 'restore', made.desktop);
    expect(res.json().status).toBe('active');
    const again = await cli('mock', 'clients', 'restore', made.desktop);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/not deleted/);
  });

  it('validates each field before sending anything: exit 2 naming the flag', async () => {
    const before = writes();
    const cases: Array<[string[], string]> = [
      [['create', '--name', 'x'], '--type'],
      [['create', '--type', 'desktop'], '--name'],
      [['create', '--type', 'universal_desktop', '--name', 'x', '--store-id', 'SHORT'], '--store-id'],
      [['create', '--type', 'mobile_b', '--name', 'x', '--bundle-id', 'com.a', '--store-id', 'id12'], '--store-id'],
      [['create', '--type', 'mobile_b', '--name', 'x', '--bundle-id', 'com.a', '--team-id', 'short'], '--team-id'],
      [['create', '--type', 'mobile_b', '--name', 'x', '--bundle-id', 'com.*', '--team-id', 'ABCDE12345', '--integrity'], '--bundle-id'],
      [['create', '--type', 'mobile_a', '--name', 'x', '--package-name', 'com.a'], '--sha1-fingerprint'],
      [['create', '--type', 'mobile_a', '--name', 'x', '--package-name', 'com', '--sha1-fingerprint', '00'.repeat(20)], '--package-name'],
      [['create', '--type', 'extension', '--name', 'x', '--item-id', 'z'.repeat(32)], '--item-id'],
      [['create', '--type', 'desktop', '--name', 'x', '--team-id', 'ABCDE12345'], '--team-id'],
      [['update', DEFAULT_CLIENT_ID, '--bundle-id', 'com.a'], '--bundle-id'],
      [['update', DEFAULT_CLIENT_ID], '--name'],
      [['update', DEFAULT_CLIENT_ID, '--custom-scheme', 'maybe'], '--custom-scheme'],
      [['integrity', DEFAULT_CLIENT_ID, 'explode'], 'action'],
      [['verify', DEFAULT_CLIENT_ID, '--account', 'nobody'], '--account'],
    ];
    for (const [args, flag] of cases) {
      const r = await cli('mock', 'clients', ...args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr, args.join(' ')).toContain(flag);
    }
    expect(writes()).toBe(before);
  });

  it('integrity enable → metrics → enforce, with the mock clock moved 15 minutes', async () => {
    const id = (
      await cliJson('mock', 'clients', 'create', '--type', 'mobile_b', '--name', 'Att', '--bundle-id', 'com.example.att', '--team-id', 'ABCDE12345')
    ).json().client_id;
    const en = await cli('mock', 'clients', 'integrity', id, 'enable');
    expect(en.code, en.stderr).toBe(0);
    expect(en.stderr).toMatch(/monitoring; in force from .* disabled until then/);
    mock.clock.advance(15 * 60_000);
    const tok = await cli('mock', 'clients', 'integrity-token', id);
    expect(tok.stdout.trim().split('.')).toHaveLength(3);
    const m = await cliJson('mock', 'clients', 'metrics', id);
    expect(m.json()).toMatchObject({
      effective: 'monitoring',
      metrics: { verified: 0, unverified_outdated_client: 0, unverified_unknown_origin: 0, unverified_invalid: 0 },
    });
    expect((await cli('mock', 'clients', 'metrics', id)).stdout).toMatch(/metrics\.unverified_unknown_origin\t0/);
    const bad = await cli('mock', 'clients', 'integrity', id, 'unenforce');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/409.*not enforced/);
    expect((await cli('mock', 'clients', 'integrity', id, 'enforce')).code).toBe(0);
  });
});

describe('opsctl mock events', () => {
  let rcv: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    rcv = await startReceiver();
    await mock.store.write(
      (s) =>
        void mintRefreshToken(s, { client_id: DEFAULT_CLIENT_ID, sub: '110000000000000000003', email: 'carol@partner.example', scopes: ['email'] }, Date.now()),
    );
  });
  afterAll(() => rcv.close());

  it('receivers add/list/remove, trigger, list with delivery status', async () => {
    const url = `http://127.0.0.1:${rcv.port}/se`;
    const add = await cliJson(
      'mock',
      'events',
      'receivers',
      'add',
      '--url',
      url,
      '--client-id',
      DEFAULT_CLIENT_ID,
      '--events',
      'sessions-revoked,account-disabled',
    );
    expect(add.code, add.stderr).toBe(0);
    const rid = add.json().id;
    expect((await cli('mock', 'events', 'receivers', 'list')).stdout).toContain(rid);
    const t = await cli('mock', 'events', 'trigger', 'sessions-revoked', '--user', 'carol@partner.example');
    expect(t.code, t.stderr).toBe(0);
    expect(t.stderr).toMatch(/1 SET\(s\), 1 delivered/);
    expect(rcv.received).toHaveLength(1);
    const none = await cli('mock', 'events', 'trigger', 'token-revoked', '--user', 'carol@partner.example', '--client-id', DEFAULT_CLIENT_ID);
    expect(none.stderr).toMatch(/no receiver listens/); // this receiver did not ask for token-revoked
    const list = await cliJson('mock', 'events', 'list', '--status', 'delivered');
    expect(list.json().some((e: any) => e.event === 'sessions-revoked' && e.subject === 'carol@partner.example')).toBe(true);
    for (const [args, flag] of [
      [['trigger', 'explode', '--user', 'a@b.c'], 'event'],
      [['trigger', 'token-revoked', '--user', 'a@b.c'], '--client-id'],
      [['trigger', 'sessions-revoked', '--user', 'a@b.c', '--reason', 'hijacking'], '--reason'],
      [['receivers', 'add', '--url', 'nope', '--client-id', 'x'], '--url'],
      [['receivers', 'add', '--url', url, '--client-id', 'x', '--events', 'bogus'], '--events'],
      [['list', '--status', 'lost'], '--status'],
    ] as const) {
      const r = await cli('mock', 'events', ...args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(flag);
    }
    expect((await cli('mock', 'events', 'receivers', 'remove', rid)).code).toBe(2); // no terminal, no --yes
    expect((await cli('mock', 'events', 'receivers', 'remove', rid, '--yes')).code).toBe(0);
    expect((await cli('mock', 'events', 'receivers', 'remove', rid, '--yes')).code).toBe(1);
  });
});

describe('the built binary against the embedded mock', () => {
  it('a trigger while the receiver is down returns (the delivery loop does not hold the process); a later command delivers', async () => {
    const dir = tempConfigDir('opsctl-embedded-events-');
    const benv = { OPSCTL_CONFIG_DIR: dir.dir, OPSCTL_MOCK_STATE: `${dir.dir}/state.json` };
    // A port with nobody on it (the receiver is "down"), then a receiver on it.
    const port = await freePort();
    try {
      const add = await runBin(['mock', 'events', 'receivers', 'add', '--url', `http://127.0.0.1:${port}/se`, '--client-id', DEFAULT_CLIENT_ID], { env: benv });
      expect(add.exitCode, String(add.stderr)).toBe(0);
      // carol grants opsctl's client in the embedded state (a refresh token), so her events concern it.
      const { FileStore } = await import('@opsctl/mock/store.js');
      const store = new FileStore(benv.OPSCTL_MOCK_STATE);
      await store.write(
        (s) =>
          void mintRefreshToken(
            s,
            { client_id: DEFAULT_CLIENT_ID, sub: '110000000000000000003', email: 'carol@partner.example', scopes: ['email'] },
            Date.now(),
          ),
      );
      const t = await runBin(['mock', 'events', 'trigger', 'sessions-revoked', '--user', 'carol@partner.example', '--json'], { env: benv, timeout: 60_000 });
      expect(t.exitCode, String(t.stderr)).toBe(0);
      expect(JSON.parse(String(t.stdout))[0]).toMatchObject({ status: 'pending' });
      const rcv = await startReceiver(port);
      const { received } = rcv;
      try {
        const d = await runBin(['mock', 'events', 'deliver', '--json'], { env: benv, timeout: 60_000 });
        expect(d.exitCode, String(d.stderr)).toBe(0);
        expect(JSON.parse(String(d.stdout))).toMatchObject({ pending: 0, delivered: 1 });
        expect(received).toHaveLength(1);
      } finally {
        await rcv.close();
      }
    } finally {
      dir.cleanup();
    }
  }, 120_000);
});

describe('opsctl mock serve: the console knobs', () => {
  it('--integrity-delay 0 makes integrity changes take effect at once; bad values are exit 2; SETs are retried in the background', async () => {
    const bad = await runBin(['mock', 'serve', '--memory', '--integrity-delay', '-5']);
    expect(bad.exitCode).toBe(2);
    expect(String(bad.stderr)).toContain('--integrity-delay');
    const serve = runBin(['mock', 'serve', '--memory', '--port', '0', '--json', '--integrity-delay', '0', '--unused-client-days', '30']);
    try {
      const base = await serveUrl(serve);
      const e = { ...env, OPSCTL_AUTH_URL: base };
      const made = await runCli(
        [
          'mock',
          'clients',
          'create',
          '--type',
          'mobile_b',
          '--name',
          'Now',
          '--bundle-id',
          'com.example.now',
          '--team-id',
          'ABCDE12345',
          '--integrity',
          '--json',
        ],
        { env: e },
      );
      expect(made.code, made.stderr).toBe(0);
      expect(made.json().integrity).toMatchObject({ configured: 'monitoring', effective: 'monitoring', pending: null });
      const sweep = await runCli(['mock', 'clients', 'sweep', '--json'], { env: e });
      expect(sweep.json().unused_client_days).toBe(30);

      // Background delivery: alice signs in to opsctl's client; its receiver is down when the event
      // happens and comes up later; mock serve delivers without being asked.
      const verifier = 'v'.repeat(43);
      const page = await playBrowser(
        `${base}/o/oauth2/v2/auth?client_id=${DEFAULT_CLIENT_ID}&redirect_uri=${encodeURIComponent('http://127.0.0.1:5000/')}&response_type=code&scope=email&code_challenge=${verifier}&code_challenge_method=plain`,
      );
      const code = new URL(page.location!).searchParams.get('code')!;
      const tok = await postForm(`${base}/token`, {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: 'http://127.0.0.1:5000/',
        client_id: DEFAULT_CLIENT_ID,
        client_secret: DEFAULT_CLIENT_SECRET,
      });
      expect(tok.status).toBe(200);
      const port = await freePort();
      expect(
        (await runCli(['mock', 'events', 'receivers', 'add', '--url', `http://127.0.0.1:${port}/se`, '--client-id', DEFAULT_CLIENT_ID], { env: e })).code,
      ).toBe(0);
      const t = await runCli(['mock', 'events', 'trigger', 'account-disabled', '--user', 'alice@example.com', '--json'], { env: e });
      expect(t.json()[0].status).toBe('pending');
      const rcv = await startReceiver(port);
      const { received } = rcv;
      try {
        for (let i = 0; i < 300 && received.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
        expect(received).toHaveLength(1);
        const listed = await runCli(['mock', 'events', 'list', '--json'], { env: e });
        expect(listed.json()[0]).toMatchObject({ status: 'delivered', event: 'account-disabled' });
        expect(listed.json()[0].attempts).toBeGreaterThanOrEqual(2);
      } finally {
        await rcv.close();
      }
    } finally {
      serve.kill('SIGTERM');
      await serve;
    }
  }, 120_000);
});
