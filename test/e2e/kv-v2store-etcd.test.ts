import { execa } from 'execa';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { walV2Census } from '../../src/kv/wal/v2-data.js';
import { startCluster, type SimulatedTestCluster } from '../framework/index.js';

/**
 * The 3.5 → 3.6 hop on real etcd 3.5.35 whose members hold custom v2 content (a v2 key put through
 * --enable-v2): `etcdutl check v2store` fails on every member, and the upgrade is refused before
 * anything stops, naming each member, what etcdutl said and the guide's fix.
 */
const BUILDS = process.env.OPSCTL_ETCD_BUILDS ?? '/var/tmp/opsctl-etcd-builds';
const v35 = process.env.OPSCTL_ETCD_35_DIR ?? join(BUILDS, 'etcd-v3.5.35-linux-amd64');
const v36 = process.env.OPSCTL_ETCD_36_DIR ?? join(BUILDS, 'etcd-v3.6.16-linux-amd64');
const ready = existsSync(join(v35, 'etcdutl')) && existsSync(join(v36, 'etcd'));
if (!ready) {
  const why = `missing etcd 3.5 (${v35}) or 3.6 (${v36}): build them with scripts/etcd-build.sh`;
  if (process.env.OPSCTL_REQUIRE_E2E === '1') throw new Error(`real etcd 3.5/3.6 are required (OPSCTL_REQUIRE_E2E=1): ${why}`);
  process.stderr.write(`\n*** SKIPPING the real etcd v2store check: ${why} ***\n\n`);
}

describe.runIf(ready)('kv upgrade --to 3.6: etcdutl check v2store on real 3.5.35 members (the built binary)', () => {
  const cfg = tempConfigDir('opsctl-v2store-e2e-');
  const opsctl = (...args: string[]) =>
    execa(process.execPath, [BIN, ...args], { reject: false, env: { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1' }, extendEnv: true, timeout: 240_000 });
  let c: SimulatedTestCluster | undefined;

  afterAll(async () => {
    await c?.destroy();
    cfg.cleanup();
  });
  const dataDirs = () => ['kv1', 'kv2', 'kv3'].map((m) => join(cfg.dir, 'data', 'kv', 'sandbox', m, 'data'));

  it('custom v2 content in the WAL (the WAL census counts it): with --no-fix-v2store, refused before any stop, naming each member, what etcdutl said and the --snapshot-count=1 fix', async () => {
    c = await startCluster({ members: 'simulated', size: 3, etcdBin: v35, configDir: cfg.dir, extra: ['--config', 'enable-v2=true'] });
    const status = JSON.parse(String((await opsctl('kv', 'status', '--json')).stdout)) as Array<{ endpoint: string; id: string }>;
    const endpoint = status[0]!.endpoint;
    // a v2 key, put and deleted through the v2 API: custom v2 entries in every member's WAL
    expect((await fetch(`${endpoint}/v2/keys/legacy`, { method: 'PUT', body: new URLSearchParams({ value: 'old' }) })).status).toBe(201);
    expect((await fetch(`${endpoint}/v2/keys/legacy`, { method: 'DELETE' })).status).toBe(200);
    // the census opsctl's tests count its own v2 requests with sees them: a PUT and a DELETE in each member's WAL
    for (const d of dataDirs()) expect(walV2Census(d)).toMatchObject({ byMethod: { PUT: expect.any(Number), DELETE: 1 }, custom: 2 });

    const r = await opsctl('kv', 'upgrade', '--to', '3.6', '--yes', '--no-fix-v2store', '--target-bin', v36);
    const err = String(r.stderr);
    expect(r.exitCode, err).toBe(1);
    for (const m of ['kv1', 'kv2', 'kv3']) {
      expect(err).toMatch(
        new RegExp(
          `\\[v2store-check\\] member ${m}: etcdutl check v2store: Error: detected custom v2 content in WAL records; fix: restart ${m} once on 3\\.5 with --snapshot-count=1`,
        ),
      );
    }
    expect(err).toContain('nothing was stopped or changed');
    // nothing stopped: every member still runs 3.5.35 under the same id
    const after = JSON.parse(String((await opsctl('kv', 'status', '--json')).stdout)) as Array<{ id: string; version: string }>;
    expect(after.map((m) => m.id)).toEqual(status.map((m) => m.id));
    const v = JSON.parse(String((await opsctl('kv', 'version', '--json')).stdout)) as Array<{ server: string }>;
    expect(v.map((m) => m.server)).toEqual(['3.5.35', '3.5.35', '3.5.35']);
    // the refusal says opsctl applies the fix by default, and which flag turned it off
    expect(err).toContain('the default; --no-fix-v2store refuses instead');
  }, 300_000);

  it('the fix, planned by default: each member restarted once on 3.5 with snapshot-count 1 (its config file put back), check v2store passes, the hop finishes with keys intact', async () => {
    for (let i = 0; i < 5; i++) expect((await opsctl('kv', 'put', `fix/${i}`, `v${i}`)).exitCode).toBe(0);
    const configs = (readdirSync(cfg.dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.conf.yml')).map((f) => join(cfg.dir, f));
    expect(configs).toHaveLength(3);
    // the operator drops enable-v2 (3.6 refuses it: its own rule) before the hop; the members still run with it
    for (const f of configs) writeFileSync(f, readFileSync(f, 'utf8').replace(/^enable-v2:.*\n/m, ''));
    const before = configs.map((f) => readFileSync(f, 'utf8'));

    const r = await opsctl('kv', 'upgrade', '--to', '3.6', '--yes', '--target-bin', v36, '--json');
    const err = String(r.stderr);
    expect(r.exitCode, err).toBe(0);
    for (const m of ['kv1', 'kv2', 'kv3']) {
      expect(err).toMatch(new RegExp(`${m}: start on 3\\.5 with snapshot-count 1`));
      expect(err).toMatch(new RegExp(`${m}: wait for a new v2 snapshot: [0-9a-f]{16}-[0-9a-f]{16}\\.snap`));
    }
    const rep = JSON.parse(String(r.stdout));
    expect(rep.status).toBe('done');
    // each member's own config is back, unedited (the journal says every member is done)
    expect(configs.map((f) => readFileSync(f, 'utf8'))).toEqual(before);
    expect(configs.filter((f) => existsSync(`${f}.opsctl-kept`))).toEqual([]);
    const journal = (readdirSync(cfg.dir, { recursive: true }) as string[]).find((f) => f.endsWith('.v2store-fix.json'));
    const fix = JSON.parse(readFileSync(join(cfg.dir, journal!), 'utf8'));
    expect(fix.status).toBe('done');
    // every member's two cycles (kv/upgrade/cycle.ts) done, in the one step shape
    expect(fix.steps.filter((x: any) => x.id.startsWith(`r${fix.round}-`) && x.status !== 'done')).toEqual([]);
    // the last round's etcdutl check v2store passed on every member (measured: a second round when the members
    // still serving the v2 API wrote v2 QGETs, one per /health, while the first ones were restarted)
    const last = fix.checks.filter((c: any) => c.round === fix.round);
    expect(last.map((c: any) => [c.member, c.ok])).toEqual([
      ['kv1', true],
      ['kv2', true],
      ['kv3', true],
    ]);
    expect(err).toMatch(new RegExp(`--fix-v2store round ${fix.round}: etcdutl check v2store passes on every member`));
    const v = JSON.parse(String((await opsctl('kv', 'version', '--json')).stdout)) as Array<{ server: string; cluster: string }>;
    for (const m of v) expect(m).toMatchObject({ server: '3.6.16', cluster: '3.6.0' });
    for (let i = 0; i < 5; i++) expect(String((await opsctl('kv', 'get', `fix/${i}`)).stdout).trim()).toBe(`v${i}`);
  }, 400_000);

  it('--fix-v2store is resumable: opsctl killed (SIGKILL) while a member runs on its edited config; the same command finishes the fix, puts every config back, then the hop', async () => {
    await c?.destroy();
    c = await startCluster({ members: 'simulated', size: 3, etcdBin: v35, configDir: cfg.dir, extra: ['--config', 'enable-v2=true'] });
    const endpoint = (JSON.parse(String((await opsctl('kv', 'status', '--json')).stdout)) as Array<{ endpoint: string }>)[0]!.endpoint;
    expect((await fetch(`${endpoint}/v2/keys/legacy`, { method: 'PUT', body: new URLSearchParams({ value: 'old' }) })).status).toBe(201);
    expect((await fetch(`${endpoint}/v2/keys/legacy`, { method: 'DELETE' })).status).toBe(200);
    expect((await opsctl('kv', 'put', 'resume/k', 'kept')).exitCode).toBe(0);
    const configs = (readdirSync(cfg.dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.conf.yml')).map((f) => join(cfg.dir, f));
    for (const f of configs) writeFileSync(f, readFileSync(f, 'utf8').replace(/^enable-v2:.*\n/m, ''));
    const before = configs.map((f) => readFileSync(f, 'utf8'));
    // (the previous test's fix journal is another cluster's: this sandbox has new ports)
    const old = new Set((readdirSync(cfg.dir, { recursive: true }) as string[]).filter((x) => x.endsWith('.v2store-fix.json')));
    const fixJournal = () => {
      const f = (readdirSync(cfg.dir, { recursive: true }) as string[]).find((x) => x.endsWith('.v2store-fix.json') && !old.has(x));
      try {
        return f
          ? (JSON.parse(readFileSync(join(cfg.dir, f), 'utf8')) as {
              status: string;
              steps: Array<{ id: string; member: string; kind: string; status: string }>;
            })
          : undefined;
      } catch {
        return undefined; // (between its write and rename)
      }
    };
    const args = ['kv', 'upgrade', '--to', '3.6', '--yes', '--target-bin', v36, '--fix-v2store'];
    const first = execa(process.execPath, [BIN, ...args], { reject: false, env: { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1' }, extendEnv: true });
    // a member started with snapshot-count 1 in its config (the fix's middle): kill -9 there
    let edited: string | undefined;
    let ended = false;
    void first.then(() => (ended = true));
    for (const t0 = Date.now(); Date.now() - t0 < 200_000 && !ended;) {
      // (its fix cycle started, its way back not yet stopped)
      const s = fixJournal()?.steps.find((x) => /^r\d+-fix\//.test(x.id) && x.kind === 'start' && x.status !== 'pending');
      const m =
        s && fixJournal()?.steps.find((x) => x.id === `${s.id.split('/')[0]!.replace('fix', 'back')}/${s.member}/stop` && x.status === 'pending')
          ? { name: s.member }
          : undefined;
      const conf = m && configs.find((f) => f.includes(`${m.name}.conf.yml`));
      if (conf && existsSync(`${conf}.opsctl-kept`) && /snapshot-count: 1/.test(readFileSync(conf, 'utf8'))) {
        edited = m.name;
        first.kill('SIGKILL');
        break;
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    const ran = await first;
    expect(
      edited,
      `opsctl was killed while a member ran on its edited config (it ended: ${String(ran.stderr).slice(-1500)}; journal ${JSON.stringify(fixJournal())})`,
    ).toBeDefined();
    expect(fixJournal()?.status).toBe('running');
    expect(
      readFileSync(
        configs.find((f) => f.includes(`${edited}.conf.yml`))!,
        'utf8',
      ),
    ).toMatch(/snapshot-count: 1/);

    const again = await opsctl(...args, '--json');
    const err = String(again.stderr);
    expect(again.exitCode, err).toBe(0);
    expect(err).toMatch(/--fix-v2store: finishing the fix recorded for/);
    expect(fixJournal()?.status).toBe('done');
    expect(configs.map((f) => readFileSync(f, 'utf8'))).toEqual(before);
    expect(configs.filter((f) => existsSync(`${f}.opsctl-kept`))).toEqual([]);
    const v = JSON.parse(String((await opsctl('kv', 'version', '--json')).stdout)) as Array<{ server: string }>;
    expect(v.map((m) => m.server)).toEqual(['3.6.16', '3.6.16', '3.6.16']);
    expect(String((await opsctl('kv', 'get', 'resume/k')).stdout).trim()).toBe('kept');
  }, 400_000);
});
