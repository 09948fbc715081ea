import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { PAUSED, runBin } from '../helpers/bin.js';
import { inProcess } from '../helpers/in-process.js';
import { until } from '../helpers/kv.js';
import { startCluster, type KvSandbox } from '../framework/index.js';

// The ways back of issue 28 item 4 on simulated members: a hop's restore point, kv restore onto 3.5/3.6.
// Fast but never speed-dependent: short polls, generous timeouts.
const FAST = ['--poll-interval', '50ms', '--healthy-timeout', '60s', '--stop-timeout', '30s'];

let sb: KvSandbox | undefined;
afterEach(async () => {
  await sb?.down();
  sb = undefined;
});

async function up(version: string) {
  sb = (await startCluster({ members: 'simulated', size: 3, version: version })).sandbox;
  return sb;
}

async function versions(s: KvSandbox) {
  return (await s.kv('version', '--json')).json<Array<{ name: string; server: string; cluster: string }>>();
}

function ladderFile(s: KvSandbox): any {
  const dir = join(s.dir, 'data', 'kv', 'journals');
  const sub = readdirSync(dir).find((x: string) => x.endsWith('.ladder'))!;
  return JSON.parse(readFileSync(join(dir, sub, 'ladder.json'), 'utf8'));
}

describe('kv restore --from-hop: a restore point per hop of the ladder (simulated members)', () => {
  it('after 3.4 → 3.5 → 3.6, the 3.4 point restores onto 3.4 and the 3.5 point onto 3.5, each with its keys', async () => {
    const s = await up('3.4');
    for (let i = 0; i < 4; i++) expect((await s.kv('put', `early/${i}`, `v${i}`)).code).toBe(0);
    const lad = await s.kv('upgrade', '--to', '3.6', '--yes', ...FAST);
    expect(lad.code, lad.stderr).toBe(0);
    // the ladder file keeps each hop's restore point
    const lf = ladderFile(s);
    expect(lf.hops.map((h: any) => `${h.from}>${h.to}`)).toEqual(['3.4>3.5', '3.5>3.6']);
    for (const h of lf.hops) {
      expect(h.restorePoint?.file, JSON.stringify(h)).toBeTruthy();
      expect(existsSync(h.restorePoint.file)).toBe(true);
    }
    expect(lf.hops[0].restorePoint.file).not.toBe(lf.hops[1].restorePoint.file);
    for (let i = 0; i < 3; i++) expect((await s.kv('put', `late/${i}`, 'after the ladder')).code).toBe(0);

    // an unknown minor, a hop with no point, both sources at once: usage errors, nothing stopped
    expect((await s.kv('restore', '--from-hop', '3.9', '--yes')).code).toBe(2);
    const none = await s.kv('restore', '--from-hop', '3.2', '--yes');
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no restore point of a hop from 3\.2.*\n?.*3\.4 \(hop 3\.4 → 3\.5/s);
    expect((await s.kv('restore', '--from-hop', '3.4', '--snapshot', 'x.db', '--yes')).code).toBe(2);

    const dry = await s.kv('restore', '--from-hop', '3.5', '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`Restore from ${lf.hops[1].restorePoint.file}`);
    expect(dry.stdout).toMatch(/started on 3\.5/);

    const r35 = await s.kv('restore', '--from-hop', '3.5', '--yes', ...FAST);
    expect(r35.code, r35.stderr).toBe(0);
    for (const m of await versions(s)) expect(m.server).toMatch(/^3\.5\./);
    expect((await s.kv('get', 'early/3')).stdout.trim()).toBe('v3');
    expect((await s.kv('get', 'late/0', '--require')).code).not.toBe(0);

    const r34 = await s.kv('restore', '--from-hop', '3.4', '--yes', ...FAST);
    expect(r34.code, r34.stderr).toBe(0);
    for (const m of await versions(s)) expect(m.server).toMatch(/^3\.4\./);
    expect((await s.kv('get', 'early/0')).stdout.trim()).toBe('v0');
  }, 240_000);

  it('kv restore --to-version 3.6 on a 3.6 sandbox (a snapshot of it): members back on 3.6 with its keys', async () => {
    const s = await up('3.6');
    expect((await s.kv('put', 'k', 'before')).code).toBe(0);
    const file = join(s.dir, 'snap.db');
    expect((await s.kv('snapshot', 'save', file)).code).toBe(0);
    expect((await s.kv('put', 'k', 'after')).code).toBe(0);
    // a command driver whose restore template runs etcdctl snapshot restore: refused for 3.6 before any stop
    const eps = s
      .spec()
      .members.map((m) => m.endpoint)
      .join(',');
    const cmd = ['--stop-cmd', 'false', '--start-cmd', 'false', '--running-cmd', 'false'];
    const old = await s.kv(
      'restore',
      '--snapshot',
      file,
      '--endpoints',
      eps,
      ...cmd,
      '--restore-cmd',
      'etcdctl snapshot restore {snapshot} --name {name}',
      '--to-version',
      '3.6',
      '--yes',
    );
    expect(old.code).toBe(1);
    expect(old.stderr).toMatch(/runs etcdctl snapshot restore, which etcd 3\.6's etcdctl does not have: write etcdutl snapshot restore/);
    expect(old.stderr).toMatch(/nothing was stopped/);
    const r = await s.kv('restore', '--snapshot', file, '--to-version', '3.6', '--yes', ...FAST);
    expect(r.code, r.stderr).toBe(0);
    for (const m of await versions(s)) expect(m.server).toMatch(/^3\.6\./);
    expect((await s.kv('get', 'k')).stdout.trim()).toBe('before');
  }, 120_000);
});

describe('kv restore --dry-run refused: each problem once, naming the members it applies to', () => {
  it('a command driver without a restore template: one line "every member (kv1, kv2, kv3): the driver has no restore template" (built binary), exit 1, nothing stopped', async () => {
    const s = await up('3.4');
    const file = join(s.dir, 'snap.db');
    expect((await s.kv('snapshot', 'save', file)).code).toBe(0);
    const eps = s
      .spec()
      .members.map((m) => m.endpoint)
      .join(',');
    const r = await runBin(
      ['kv', 'restore', '--snapshot', file, '--endpoints', eps, '--stop-cmd', 'false', '--start-cmd', 'false', '--running-cmd', 'false', '--dry-run'],
      {
        env: s.env,
      },
    );
    const err = String(r.stderr);
    expect(r.exitCode, err).toBe(1);
    expect(err).toContain(
      'kv restore refused before any change: every member (kv1, kv2, kv3): the driver has no restore template (driver.restore in the cluster file, or --restore-cmd)',
    );
    expect(err.match(/no restore template/g)).toHaveLength(1);
    expect(err).toContain('nothing was stopped');
    for (const m of await versions(s)) expect(m.server).toMatch(/^3\.4\./);
  }, 120_000);
});

describe("kv downgrade --to 3.5: etcd 3.6's downgrade API on simulated members", () => {
  it('refuses with nothing changed: not all on 3.6, a target other than the previous minor', async () => {
    const s = await up('3.5');
    const r = await s.kv('downgrade', '--to', '3.4', '--yes', ...FAST);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/every member runs 3\.6/);
    for (const m of await versions(s)) expect(m.server).toMatch(/^3\.5\./);
    await s.down();
    const s6 = await up('3.6');
    const bad = await s6.kv('downgrade', '--to', '3.4', '--yes', ...FAST);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--to 3\.4: etcd downgrades one minor at a time, from 3\.6 to 3\.5 only/);
    for (const m of await versions(s6)) expect(m).toMatchObject({ cluster: '3.6.0' });
  }, 120_000);

  it('--dry-run shows validate, enable and every member (the leader last); the run takes every member to 3.5 with the keys', async () => {
    const s = await up('3.6');
    for (let i = 0; i < 5; i++) expect((await s.kv('put', `d/${i}`, `v${i}`)).code).toBe(0);
    const dry = await s.kv('downgrade', '--to', '3.5', '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/downgrade validate 3\.5, then etcdctl downgrade enable 3\.5/);
    expect(dry.stdout).toMatch(/Plan: downgrade 3\.6 → 3\.5/);
    // the 3.5 binary tried with every member's settings before anything is enabled or stopped
    expect(dry.stdout).toMatch(/the 3\.5 binary tried with each member's settings/);
    expect(dry.stdout.match(/kv\d: ok: etcd 3\.5\.35 served \/health/g)).toHaveLength(3);
    expect(dry.stdout).toMatch(/\[leader, last\]/);
    for (const m of await versions(s)) expect(m).toMatchObject({ cluster: '3.6.0' });

    const r = await s.kv('downgrade', '--to', '3.5', '--yes', '--json', ...FAST);
    expect(r.code, r.stderr).toBe(0);
    const rep = r.json<any>();
    expect(rep).toMatchObject({ kind: 'downgrade', status: 'done', from: '3.6', to: '3.5' });
    expect(rep.finished).toMatch(/the downgrade finished/);
    expect(rep.run.steps.filter((x: any) => x.kind === 'snapshot' && x.status === 'done')).toHaveLength(3);
    for (const m of await versions(s)) expect(m).toMatchObject({ server: '3.5.35', cluster: '3.5.0' });
    for (let i = 0; i < 5; i++) expect((await s.kv('get', `d/${i}`)).stdout.trim()).toBe(`v${i}`);
    // the journal is a downgrade's: kv upgrade does not take it for its own
    expect(s.journal()).toMatchObject({ downgrade: true, source: '3.6', target: '3.5', status: 'done' });
  }, 180_000);

  it('a plan that promises "1 warning at the end of the plan" prints it there: --dry-run and the run (built binary), each warning once', async () => {
    const s = await up('3.6');
    const promised = (text: string) => Number(/to heed: .*?(\d+) warnings? at the end of the plan/.exec(text)?.[1] ?? 0);
    const warnings = (text: string) => text.split('\n').filter((l) => l.startsWith('  ! '));
    const dry = await runBin(['kv', 'downgrade', '--to', '3.5', '--dry-run', '--no-backup'], { env: s.env });
    expect(dry.exitCode, String(dry.stderr)).toBe(0);
    const plan = String(dry.stdout);
    expect(promised(plan)).toBe(1);
    expect(warnings(plan)).toEqual([
      '  ! --no-backup: the data dirs are not backed up before each start (only the v3 snapshot is taken, and v2 data is not in it)',
    ]);
    // they end the plan, before the dry run's last line
    expect(plan.trimEnd().split('\n').slice(-2)[0]).toMatch(/^ {2}! --no-backup/);
    // without --no-backup: no promise, no warning
    const plain = await runBin(['kv', 'downgrade', '--to', '3.5', '--dry-run'], { env: s.env });
    expect([promised(String(plain.stdout)), warnings(String(plain.stdout))]).toEqual([0, []]);
    // the run shows the same plan on stderr before anything is enabled: the promise and the warning once
    // (the executor's own plan after the enable repeats its steps and warnings: a later block, no promise)
    const r = await runBin(['kv', 'downgrade', '--to', '3.5', '--yes', '--no-backup', ...FAST], { env: s.env, timeout: 170_000 });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const before = String(r.stderr).split('downgrade: validate 3.5')[0]!;
    expect(promised(before)).toBe(1);
    expect(warnings(before)).toHaveLength(1);
  }, 180_000);

  it('Ctrl-C while the leader has not yet ended the downgrade: exit 130 saying every member runs 3.5 and the command that waits for it; the same command then confirms the end', async () => {
    const s = await up('3.6');
    s.fault({ downgradeLingers: true });
    const run = inProcess(['kv', 'downgrade', '--to', '3.5', '--yes', ...FAST], s.env);
    await until(() => run.said().includes('waiting for the leader to end the downgrade'), 120_000, 'the last wait of the downgrade');
    run.interrupt();
    expect(await run.exited, run.said()).toBe(130);
    const said = run.said();
    expect(said).toMatch(/kv downgrade interrupted: every member runs 3\.5; the leader had not yet ended the downgrade/);
    expect(said).toContain('opsctl kv downgrade --to 3.5');
    for (const m of await versions(s)) expect(m.server).toBe('3.5.35');
    s.fault({});
    const again = await s.kv('downgrade', '--to', '3.5', '--yes', '--json', ...FAST);
    expect(again.code, again.stderr).toBe(0);
    for (const m of await versions(s)) expect(m).toMatchObject({ server: '3.5.35', cluster: '3.5.0' });
  }, 180_000);

  it('opsctl killed (SIGKILL) in the second member of a downgrade: the re-run resumes there (the downgrade not enabled again) and finishes', async () => {
    const s = await up('3.6');
    expect((await s.kv('put', 'before', 'kill')).code).toBe(0);
    // the run blocks right after its second member start spawned the 3.5 process; SIGKILL lands there
    const child = execa(process.execPath, [PAUSED, 'kv', 'downgrade', '--to', '3.5', '--yes', ...FAST], {
      reject: false,
      env: { NO_COLOR: '1', ...s.env, OPSCTL_PAUSE: 'pause:after-spawn:#2' },
      extendEnv: true,
    });
    let err = '';
    child.stderr?.on('data', (d: Buffer) => (err += String(d)));
    await until(() => /opsctl-test: \S+ after-spawn/.test(err), 120_000, 'the second member start');
    child.kill('SIGKILL');
    await child;
    expect(s.journal()).toMatchObject({ downgrade: true, status: 'running' });
    // kv upgrade does not take the downgrade's journal for its own
    const up35 = await s.kv('upgrade', '--to', '3.5', '--yes', ...FAST);
    expect(up35.code).toBe(1);
    const r = await runBin(['kv', 'downgrade', '--to', '3.5', '--yes', '--json', ...FAST], { env: s.env });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const rep = JSON.parse(String(r.stdout));
    expect(rep).toMatchObject({ kind: 'downgrade', status: 'done', resumed: true });
    expect(rep.enable.join(' ')).not.toMatch(/enable 3\.5: ok/);
    for (const m of await versions(s)) expect(m).toMatchObject({ server: '3.5.35', cluster: '3.5.0' });
    expect((await s.kv('get', 'before')).stdout.trim()).toBe('kill');
  }, 240_000);
});

describe('kv upgrade --on-failure rollback on every hop of the ladder (simulated members)', () => {
  const HOPS: Array<[string, string, string]> = [
    ['3.2', '3.3', '3.2.32'],
    ['3.3', '3.4', '3.3.27'],
    ['3.4', '3.5', '3.4.23'],
    ['3.5', '3.6', '3.5.35'],
    ['3.6', '3.7', '3.6.16'],
  ];
  it.each(HOPS)(
    '%s → %s: a member never healthy on the target is put back with its data; exit 3, every member healthy on %s',
    async (from, to, release) => {
      const s = await up(from);
      for (let i = 0; i < 3; i++) expect((await s.kv('put', `rb/${i}`, `v${i}`)).code).toBe(0);
      s.fault({ neverHealthyOn: to });
      const r = await s.kv('upgrade', '--to', to, '--yes', ...FAST, '--healthy-timeout', '2s', '--on-failure', 'rollback');
      expect(r.code, r.stderr).toBe(3);
      expect(r.stderr).toMatch(new RegExp(`did not become healthy on ${to.replace('.', '\\.')}`));
      const first = s.journal().members.find((m: any) => m.action !== 'skip').name;
      expect(r.stderr).toContain(`--on-failure rollback: ${first} is back on ${from}`);
      for (const m of await versions(s)) expect(m).toMatchObject({ server: release, cluster: `${from}.0` });
      expect((await s.kv('health')).code).toBe(0);
      for (let i = 0; i < 3; i++) expect((await s.kv('get', `rb/${i}`)).stdout.trim()).toBe(`v${i}`);
    },
    120_000,
  );

  it('a ladder 3.4 → 3.6 whose 3.6 hop fails: the member is put back on 3.5, the ladder halts at that hop (exit 3), the earlier hop stays done', async () => {
    const s = await up('3.4');
    s.fault({ neverHealthyOn: '3.6' });
    const r = await s.kv('upgrade', '--to', '3.6', '--yes', '--json', ...FAST, '--healthy-timeout', '2s', '--on-failure', 'rollback');
    expect(r.code, r.stderr).toBe(3);
    const rep = r.json<any>();
    expect(rep).toMatchObject({ kind: 'ladder', status: 'halted' });
    expect(rep.hops.map((h: any) => `${h.from}>${h.to}:${h.status}`)).toEqual(['3.4>3.5:done', '3.5>3.6:halted']);
    expect(rep.halt.reason).toMatch(/--on-failure rollback: \S+ is back on 3\.5/);
    for (const m of await versions(s)) expect(m).toMatchObject({ server: '3.5.35', cluster: '3.5.0' });
  }, 180_000);
});

describe('kv downgrade --on-failure rollback (simulated members)', () => {
  it('a member never healthy on 3.5 is put back on 3.6: exit 3 naming kv rollback, the cluster healthy at cluster version 3.5', async () => {
    const s = await up('3.6');
    expect((await s.kv('put', 'k', 'v')).code).toBe(0);
    s.fault({ neverHealthyOn: '3.5' });
    const r = await s.kv('downgrade', '--to', '3.5', '--yes', ...FAST, '--healthy-timeout', '2s', '--on-failure', 'rollback');
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/did not become healthy on 3\.5/);
    expect(r.stderr).toMatch(/--on-failure rollback: \S+ is back on 3\.6/);
    expect(r.stderr).toContain('opsctl kv rollback');
    for (const m of await versions(s)) expect(m).toMatchObject({ server: '3.6.16', cluster: '3.5.0' });
    expect((await s.kv('health')).code).toBe(0);
    expect((await s.kv('get', 'k')).stdout.trim()).toBe('v');
  }, 120_000);
});
