import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runBin } from '../helpers/bin.js';
import { until } from '../helpers/kv.js';
import { startCluster, type KvSandbox } from '../framework/index.js';

// Fast but never speed-dependent: short polls, generous timeouts.
const FAST = ['--poll-interval', '50ms', '--healthy-timeout', '60s', '--stop-timeout', '30s'];

let sb: KvSandbox | undefined;
afterEach(async () => {
  await sb?.down();
  sb = undefined;
});

async function up(version: string, ...extra: string[]) {
  sb = (await startCluster({ members: 'simulated', size: 3, version: version, extra: [...extra] })).sandbox;
  return sb;
}

async function versions(s: KvSandbox) {
  return (await s.kv('version', '--json')).json<Array<{ name: string; server: string; cluster: string }>>();
}

/** `kv upgrade --to 3.6 ARGS` on members held below 3.5's cluster version: it waits for 3.5, the hold is lifted, it goes on. */
async function waitsThenGoesOn(s: KvSandbox, args: string[]) {
  const run = runBin(['kv', 'upgrade', '--to', '3.6', ...args], { env: s.env });
  let said = '';
  run.stderr?.on('data', (d: Buffer) => (said += String(d)));
  await until(() => said.includes('waiting for the cluster version to reach 3.5'), 60_000, 'the wait for the cluster version');
  s.fault({});
  const r = await run;
  expect(r.exitCode, said).toBe(0);
  expect(said).toMatch(/✓ cluster version 3\.5 \(\d+ ms\)/);
  return r;
}

/** The ladder file of the sandbox's cluster (one cluster per sandbox). */
function ladder(s: KvSandbox): any {
  const dir = join(s.dir, 'data', 'kv', 'journals');
  const sub = existsSync(dir) ? readdirSync(dir).find((x: string) => x.endsWith('.ladder')) : undefined;
  const f = sub ? join(dir, sub, 'ladder.json') : undefined;
  try {
    return f && existsSync(f) ? JSON.parse(readFileSync(f, 'utf8')) : undefined;
  } catch {
    return undefined;
  }
}

describe('kv upgrade --to 3.7: the ladder on simulated members', () => {
  it('--dry-run shows every hop, every member and every check with its result; nothing changes', async () => {
    const s = await up('3.2');
    const r = await s.kv('upgrade', '--to', '3.7', '--dry-run');
    expect(r.code, r.stderr).toBe(0);
    // the three lines first: what will happen, that nothing blocks it (and what to heed), what to do next
    expect(r.stdout.split('\n').slice(0, 3)).toEqual([
      expect.stringMatching(
        /^Upgrade 3\.2 → 3\.7 in 5 hops \(3\.3, 3\.4, 3\.5, 3\.6, 3\.7\), each restarting the 3 members one at a time: kv\d, kv\d, then kv\d \(the leader\)$/,
      ),
      expect.stringMatching(/^Nothing blocks it: \d+ of \d+ findings ok; to heed: 3 warn \(3\.3 → 3\.4 \[enable-v2\] kv1, kv2, kv3\), \d+ not checked \(/),
      'Next: run the same command without --dry-run: it asks before the first stop (--yes: no question)',
    ]);
    expect(r.stdout).toMatch(/Ladder: 3\.2 → 3\.7 in 5 hops/);
    for (const hop of ['3.2 → 3.3', '3.3 → 3.4', '3.4 → 3.5', '3.5 → 3.6', '3.6 → 3.7']) expect(r.stdout).toContain(`: ${hop} — binaries: simulated`);
    // every member in every hop, the leader last
    expect(r.stdout.match(/\[leader, last\]/g)).toHaveLength(5);
    // each hop's plan: the staging advice and what the hop changes for clients (3.3's from the seed)
    expect(r.stdout.match(/clients: test the services that depend on etcd against a staging cluster/g)).toHaveLength(5);
    expect(r.stdout).toContain('- 3.7: the Go client/v2 package and v2 discovery are removed');
    expect(r.stdout).toContain('- 3.3: from 3.3.14 a client must pass grpc.WithBlock()');
    expect(r.stdout).toContain('- 3.3: message sizes: the client sends at most 2 MiB');
    expect(r.stdout).toContain('- 3.6: the v2 store and the v2 API are removed');
    for (const id of [
      'config-3.3',
      'log-outputs',
      'enable-v2',
      'data-dir-0700',
      'auth-rolling',
      'v2-data',
      'removed-log-flags',
      'target-3.5.3',
      'from-3.5.32',
      'v2store-check',
      'experimental-renamed',
      'trial-start',
      'env-shadowed',
      'logger-capnslog',
      'proxy-removed',
      'discovery-fallback-proxy',
      'from-3.6.11',
      'experimental-removed',
      'v2-discovery-removed',
      'v2-deprecation-enforced',
      'enable-v2-gone',
    ])
      expect(r.stdout).toContain(`[${id}]`);
    // every member tried on every hop's binary before anything stops (a simulated one: the member program of that release)
    // (a rule every member passed is one line; --json keeps each member's own finding)
    expect(r.stdout.match(/\[trial-start\] ok on kv1, kv2, kv3: /g)).toHaveLength(5);
    const rows = (await s.kv('upgrade', '--to', '3.7', '--dry-run', '--json')).json<{
      checks: Array<{ rule: string; member?: string; status: string; detail: string }>;
    }>().checks;
    expect(rows.filter((c) => c.rule === 'trial-start' && c.status === 'ok' && /^etcd 3\.\d\.\d+ served \/health/.test(c.detail))).toHaveLength(15);
    expect(r.stdout).toMatch(
      /Trials: 15 of 15 starts with each member's settings ran, 0 of 15 starts on a copy of each member's data ran \(15 do not apply: simulated members keep no etcd data\)/,
    );
    // the 3.7 hop's floor, seen from the start: the release the 3.6 hop brings
    expect(r.stdout).toMatch(/\[from-3\.6\.11\] ok: the members will run 3\.6\.16/);
    // a check that cannot run says so, with why (the members with the same words on one line)
    expect(r.stdout).toMatch(/kv1, kv2, kv3: not checked: a simulated member keeps no etcd data dir/);
    expect(r.stdout).toContain('(--dry-run: nothing was changed)');
    for (const v of await versions(s)) expect(v.server).toBe('3.2.32');
    expect(ladder(s)).toBeUndefined();
    // --strict refuses while any check cannot run, naming it (exit 1, nothing stopped)
    const strict = await s.kv('upgrade', '--to', '3.7', '--yes', '--strict');
    expect(strict.code).toBe(1);
    expect(strict.stderr).toMatch(/not checked \(--strict\): a simulated member keeps no etcd data dir/);
    for (const v of await versions(s)) expect(v.server).toBe('3.2.32');
  }, 120_000);

  it('3.2 → 3.7 with --yes: five hops, keys intact, cluster version 3.7, each hop journal kept; the 3.7 shapes', async () => {
    const s = await up('3.2');
    for (let i = 0; i < 5; i++) expect((await s.kv('put', `k${i}`, `v${i}`)).code).toBe(0);
    const r = await s.kv('upgrade', '--to', '3.7', '--yes', ...FAST, '--json');
    expect(r.code, r.stderr).toBe(0);
    const rep = r.json();
    expect(rep).toMatchObject({ kind: 'ladder', status: 'done', from: '3.2', to: '3.7' });
    expect(rep.hops.map((h: any) => `${h.from}>${h.to}:${h.status}`)).toEqual(['3.2>3.3:done', '3.3>3.4:done', '3.4>3.5:done', '3.5>3.6:done', '3.6>3.7:done']);
    for (const h of rep.hops) {
      expect(existsSync(h.journal)).toBe(true);
      expect(h.report.steps.filter((x: any) => x.kind === 'start')).toHaveLength(3);
    }
    for (const v of await versions(s)) expect(v).toMatchObject({ server: '3.7.3', cluster: '3.7.0' });
    for (let i = 0; i < 5; i++) expect((await s.kv('get', `k${i}`)).stdout.trim()).toBe(`v${i}`);
    expect(ladder(s)).toMatchObject({ status: 'done', current: 5 });
    expect(s.logs()).toContain('updated the cluster version from 3.5 to 3.6');
    expect(s.logs()).toContain('updated the cluster version from 3.6 to 3.7');
    // 3.7's shapes (those of 3.6): /version with storage, /health a reason, the gateway is /v3 (and /v3beta), /v3alpha is gone
    const ep = s.spec().members[0]!.endpoint;
    expect(await (await fetch(`${ep}/version`)).json()).toMatchObject({ kvserver: '3.7.3', kvcluster: '3.7.0', storage: '3.7.0' });
    expect(await (await fetch(`${ep}/health`)).json()).toEqual({ health: 'true', reason: '' });
    for (const p of ['/v3', '/v3beta']) expect((await fetch(`${ep}${p}/maintenance/status`, { method: 'POST', body: '{}' })).status).toBe(200);
    expect((await fetch(`${ep}/v3alpha/maintenance/status`, { method: 'POST', body: '{}' })).status).toBe(404);
    // a re-run has nothing left to do
    const again = await s.kv('upgrade', '--to', '3.7', '--yes');
    expect(again.code, again.stderr).toBe(0);
  }, 300_000);

  it("the next hop's settings are read while the hop before waits for its cluster version (etcd raises it on its own clock), not after", async () => {
    const s = await up('3.2');
    const r = await s.kv('upgrade', '--to', '3.4', '--yes', ...FAST, '--debug');
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr.split('\n');
    const at = (re: RegExp, from = 0) => lines.findIndex((l, i) => i >= from && re.test(l));
    const waiting = at(/^… cluster: wait for the cluster version to reach 3\.3$/);
    const reached = at(/^✓ cluster: wait for the cluster version to reach 3\.3: /);
    expect(waiting, r.stderr).toBeGreaterThan(0);
    expect(reached).toBeGreaterThan(waiting);
    // the reads of hop 2 (3.3 → 3.4) begin as the wait begins (before its first poll answers), and all three are in before the next hop's pre-flight
    const settled = at(/^✓ kv\d: settle: /, at(/^Hop 1\/2|wait for the cluster version to reach 3\.3, final health pass/));
    const reads = lines.map((l, i) => (/point: before startSettings kv\d$/.test(l) && i > settled ? i : -1)).filter((i) => i >= 0);
    expect(reads.length, r.stderr).toBeGreaterThanOrEqual(3);
    expect(reads.slice(0, 3).every((i) => i < reached)).toBe(true);
    expect(at(/point: after startSettings kv\d$/, reads[2])).toBeLessThan(at(/^… pre-flight: checking 3 members$/, reached));
    for (const v of await versions(s)) expect(v).toMatchObject({ cluster: '3.4.0' });
  }, 120_000);

  it('opsctl killed (SIGKILL) during the 3.4 → 3.5 hop: the re-run resumes at that hop and member and finishes', async () => {
    const s = await up('3.2');
    expect((await s.kv('put', 'before', 'kill')).code).toBe(0);
    const child = runBin(['kv', 'upgrade', '--to', '3.6', '--yes', ...FAST, '--settle', '3s'], { env: s.env });
    await until(
      () => {
        const l = ladder(s);
        return l?.current === 2 && s.journal()?.target === '3.5' && s.journal()?.steps.some((x: any) => x.kind === 'wait-healthy' && x.status === 'done');
      },
      240_000,
      'the first member back on 3.5',
    );
    child.kill('SIGKILL');
    await child;
    expect(ladder(s)).toMatchObject({ status: 'running', current: 2 });
    const first = s.journal().steps.find((x: any) => x.kind === 'wait-healthy' && x.status === 'done').member;
    const startedAt = s.journal().steps.find((x: any) => x.id === `${first}/start`).startedAt;
    const r = await runBin(['kv', 'upgrade', '--to', '3.6', '--yes', ...FAST, '--settle', '0s', '--json'], { env: s.env });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const rep = JSON.parse(String(r.stdout));
    expect(rep).toMatchObject({ kind: 'ladder', status: 'done', resumed: true });
    expect(String(r.stderr)).toMatch(/resuming at hop 3/);
    // hop 3 resumed its journal: the member upgraded before the kill was not started again
    const hop3 = rep.hops[2].report;
    expect(hop3.resumed).toBe(true);
    expect(hop3.steps.find((x: any) => x.id === `${first}/start`).startedAt).toBe(startedAt);
    for (const v of await versions(s)) expect(v).toMatchObject({ server: '3.6.16', cluster: '3.6.0' });
    expect((await s.kv('get', 'before')).stdout.trim()).toBe('kill');
  }, 300_000);

  it('every member on 3.5 while the cluster version is still 3.4 (a rolling restart by hand just ended): the run waits for it, then goes on; one that never moves is refused after --cluster-version-timeout', async () => {
    const s = await up('3.4');
    expect((await s.kv('put', 'by-hand', 'kept')).code).toBe(0);
    // the members restarted on 3.5 by hand, the leader not yet moving the cluster version: the upgrade's own
    // last wait gives up (exit 3), then its journal is gone, as after a restart done without opsctl
    s.fault({ clusterVersionLags: true });
    const first = await s.kv('upgrade', '--to', '3.5', '--yes', ...FAST, '--cluster-version-timeout', '1s');
    expect(first.code, first.stderr).toBe(3);
    for (const v of await versions(s)) expect(v).toMatchObject({ server: '3.5.35', cluster: '3.4.0' });
    rmSync(join(s.dir, 'data', 'kv', 'journals'), { recursive: true, force: true });

    const stuck = await s.kv('upgrade', '--to', '3.6', '--dry-run', '--cluster-version-timeout', '1s');
    expect(stuck.code).not.toBe(0);
    expect(stuck.stderr).toContain('the cluster version did not reach 3.5 within 1 s');
    expect(stuck.stderr).toContain('the cluster version is 3.4 while the lowest member runs 3.5');

    await waitsThenGoesOn(s, ['--yes', ...FAST]);
    for (const v of await versions(s)) expect(v).toMatchObject({ server: '3.6.16', cluster: '3.6.0' });
    expect((await s.kv('get', 'by-hand')).stdout.trim()).toBe('kept');
  }, 240_000);

  it("a cluster made seconds ago, its cluster version still etcd's initial 3.0: waited for as a lagging one, not refused", async () => {
    const s = await up('3.5');
    // (etcd gives a cluster it makes the cluster version 3.0 until its leader first checks the members: seen on real
    // 3.5.35 at load 13; the simulated leader holds it there)
    s.fault({ clusterVersionAt: '3.0' });
    await until(async () => (await versions(s)).every((v) => v.cluster === '3.0.0'), 60_000, 'the cluster version 3.0');
    const held = await s.kv('upgrade', '--to', '3.6', '--dry-run', '--cluster-version-timeout', '1s');
    expect(held.code).not.toBe(0);
    expect(held.stderr).toContain('waiting for the cluster version to reach 3.5');
    expect(held.stderr).toContain('the cluster version did not reach 3.5 within 1 s');
    const r = await waitsThenGoesOn(s, ['--dry-run']);
    expect(String(r.stdout)).toMatch(/^Upgrade 3\.5 → 3\.6/);
  }, 120_000);

  it('3.3 → 3.4 with log-output: default in the config: refused before anything stops, naming log-outputs', async () => {
    const s = await up('3.3', '--config', 'log-output=default');
    for (const to of ['3.4', '3.6']) {
      const r = await s.kv('upgrade', '--to', to, '--yes', ...FAST);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(
        /3\.3 → 3\.4 \[log-outputs\] member kv1: .*log-output: "default": 3\.4 reads log-outputs, a list.*fix: write log-outputs: \[default\]/,
      );
      expect(r.stderr).toContain('nothing was stopped');
    }
    for (const v of await versions(s)) expect(v.server).toBe('3.3.27');
    expect(s.journal()).toBeUndefined();
  }, 120_000);

  it('3.4 → 3.5 with auth enabled: refused before anything stops, naming the restore-based way', async () => {
    const s = await up('3.4');
    s.fault({ authEnabled: true });
    const r = await s.kv('upgrade', '--to', '3.6', '--yes', ...FAST);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/3\.4 → 3\.5 \[auth-rolling\]: auth is enabled on the cluster; fix: .*kv restore --snapshot FILE --to-version 3\.5/);
    for (const v of await versions(s)) expect(v.server).toBe('3.4.23');
    expect(s.journal()).toBeUndefined();
  }, 120_000);

  it('a 3.5.26 member (the floor before August 2026): the plan has a patch hop inside 3.5 to the newest 3.5 before 3.5 → 3.6', async () => {
    const s = await up('3.5.26');
    const r = await s.kv('upgrade', '--to', '3.6', '--dry-run');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Hop 1\/2: 3\.5 → 3\.5 \(patch\)/);
    expect(r.stdout).toMatch(/Hop 2\/2: 3\.5 → 3\.6/);
    expect(r.stdout).toMatch(/\[from-3\.5\.32\] ok: a patch hop inside 3\.5 to 3\.5\.35 is planned first/);
    // run: the patch hop first (every member restarted on 3.5.35), then 3.5 → 3.6
    const run = await s.kv('upgrade', '--to', '3.6', '--yes', ...FAST, '--json');
    expect(run.code, run.stderr).toBe(0);
    const rep = run.json();
    expect(
      rep.hops.map((h: { from: string; to: string; patch: boolean; status: string }) => `${h.from}>${h.to}${h.patch ? ' patch' : ''}:${h.status}`),
    ).toEqual(['3.5>3.5 patch:done', '3.5>3.6:done']);
    for (const v of await versions(s)) expect(v).toMatchObject({ server: '3.6.16', cluster: '3.6.0' });
  }, 120_000);

  it("3.6 → 3.7 with kubeadm's two experimental settings in the members' config files: refused before any stop, naming both and both replacements in one run; replaced, it goes to 3.7, then kv downgrade --to 3.6 with the keys", async () => {
    const s = await up('3.6', '--config', 'experimental-initial-corrupt-check=true', '--config', 'experimental-watch-progress-notify-interval=5000000000');
    for (let i = 0; i < 3; i++) expect((await s.kv('put', `kubeadm/${i}`, `v${i}`)).code).toBe(0);
    const refused = await s.kv('upgrade', '--to', '3.7', '--yes', ...FAST);
    expect(refused.code).toBe(1);
    for (const name of ['kv1', 'kv2', 'kv3']) {
      const line = refused.stderr.split('\n').find((l) => l.includes(`[experimental-removed] member ${name}:`));
      expect(line, refused.stderr).toBeDefined();
      expect(line).toContain('2 removed in 3.7');
      expect(line).toContain('experimental-initial-corrupt-check: true');
      expect(line).toContain('experimental-watch-progress-notify-interval: 5000000000');
      expect(line).toContain('3.7 ignores the key and starts without the setting');
      expect(line).toContain('with feature-gates: InitialCorruptCheck=true, watch-progress-notify-interval: 5000000000');
    }
    expect(refused.stderr).toContain('nothing was stopped or changed');
    for (const v of await versions(s)) expect(v).toMatchObject({ server: '3.6.16', cluster: '3.6.0' });
    expect(s.journal()).toBeUndefined();
    // the replacements, as the finding says them (3.6 takes them)
    const files = readdirSync(join(s.dir, 'data', 'kv', 'sandbox'))
      .filter((n) => /^kv\d$/.test(n))
      .map((n) => join(s.dir, 'data', 'kv', 'sandbox', n, `${n}.conf.yml`));
    expect(files).toHaveLength(3);
    for (const f of files) {
      const text = readFileSync(f, 'utf8')
        .replace('experimental-initial-corrupt-check: true', 'feature-gates: InitialCorruptCheck=true')
        .replace('experimental-watch-progress-notify-interval:', 'watch-progress-notify-interval:');
      writeFileSync(f, text);
    }
    const r = await s.kv('upgrade', '--to', '3.7', '--yes', ...FAST, '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ status: 'done' });
    for (const v of await versions(s)) expect(v).toMatchObject({ server: '3.7.3', cluster: '3.7.0' });
    const down = await s.kv('downgrade', '--to', '3.6', '--yes', ...FAST, '--json');
    expect(down.code, down.stderr).toBe(0);
    expect(down.json()).toMatchObject({ kind: 'downgrade', status: 'done', from: '3.7', to: '3.6' });
    for (const v of await versions(s)) expect(v).toMatchObject({ server: '3.6.16', cluster: '3.6.0' });
    for (let i = 0; i < 3; i++) expect((await s.kv('get', `kubeadm/${i}`)).stdout.trim()).toBe(`v${i}`);
  }, 180_000);

  it("a 3.6.5 member (below the 3.7 guide's 3.6.11): a patch hop inside 3.6 to the newest 3.6 before 3.6 → 3.7, as inside 3.5 before 3.6", async () => {
    const s = await up('3.6.5');
    const r = await s.kv('upgrade', '--to', '3.7', '--dry-run');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Hop 1\/2: 3\.6 → 3\.6 \(patch\)/);
    expect(r.stdout).toMatch(/Hop 2\/2: 3\.6 → 3\.7/);
    expect(r.stdout).toMatch(/\[from-3\.6\.11\] ok: a patch hop inside 3\.6 to 3\.6\.16 is planned first/);
    const run = await s.kv('upgrade', '--to', '3.7', '--yes', ...FAST, '--json');
    expect(run.code, run.stderr).toBe(0);
    expect(
      run.json().hops.map((h: { from: string; to: string; patch: boolean; status: string }) => `${h.from}>${h.to}${h.patch ? ' patch' : ''}:${h.status}`),
    ).toEqual(['3.6>3.6 patch:done', '3.6>3.7:done']);
    for (const v of await versions(s)) expect(v).toMatchObject({ server: '3.7.3', cluster: '3.7.0' });
  }, 120_000);
});
