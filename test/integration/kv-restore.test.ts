import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { MemberStore } from '@opsctl/etcd-sim/store.js';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startCluster, type KvSandbox } from '../framework/index.js';

// Short polls, generous deadlines: never speed-dependent.
const FAST = ['--poll-interval', '50ms', '--healthy-timeout', '30s', '--stop-timeout', '20s'];

let sb: KvSandbox;
beforeEach(async () => {
  sb = (await startCluster({ members: 'simulated', size: 3, version: '3.2' })).sandbox;
  for (let i = 0; i < 8; i++) expect((await sb.kv('put', `before/${i}`, `v${i}`)).code).toBe(0);
});
afterEach(async () => {
  await sb.down();
});

const pids = () => sb.spec().members.map((m) => readFileSync(m.pidFile, 'utf8').trim());
const versions = async () => (await sb.kv('version', '--json')).json<Array<{ server: string; cluster: string }>>();

/** A finished 3.2 → 3.3 upgrade, one write after it; the journal's restore point. */
async function upgraded(): Promise<{ file: string; revision: string; liveKeys: number; sha256: string }> {
  const r = await sb.kv('upgrade', '--to', '3.3', '--yes', ...FAST, '--settle', '0s', '--json');
  expect(r.code, r.stderr).toBe(0);
  expect((await sb.kv('put', 'after/upgrade', 'lost on restore')).code).toBe(0);
  const rp = sb.journal().restorePoint;
  expect(rp).toBeDefined();
  return rp;
}

describe('kv restore on the simulated sandbox (the way back after the cluster version moved)', () => {
  it('the journal keeps the restore point; kv status shows it; kv rollback names kv restore; snapshot status reads it', async () => {
    const rp = await upgraded();
    // The first snapshot, taken before the first stop, with the keys live at its revision.
    expect(rp.file).toBe(sb.journal().snapshots[0].file);
    expect(rp.liveKeys).toBe(8);
    expect(rp.sha256).toBe(createHash('sha256').update(readFileSync(rp.file)).digest('hex'));

    const st = await sb.kv('status', '--json');
    expect(st.json<any[]>().every((row) => row.restorePoint?.file === rp.file)).toBe(true);
    const human = await sb.kv('status');
    expect(human.stderr).toContain(`restore point: ${rp.file} (revision ${rp.revision}`);

    const rb = await sb.kv('rollback', ...FAST);
    expect(rb.code).toBe(1);
    expect(rb.stderr).toContain('cluster version is already 3.3.0');
    expect(rb.stderr).toContain(`opsctl kv restore --snapshot ${rp.file} --to-version 3.2`);

    const ss = await sb.kv('snapshot', 'status', rp.file, '--json');
    expect(ss.code, ss.stderr).toBe(0);
    expect(ss.json()).toMatchObject({ revision: rp.revision, totalKey: 8, sha256: rp.sha256, kind: 'simulated' });
    const piped = await sb.kv('snapshot', 'status', rp.file);
    expect(piped.stdout).toMatch(new RegExp(`^REVISION\\t${rp.revision}$`, 'm'));
    expect(piped.stdout).toMatch(/^TOTAL KEYS\t8$/m);
  }, 60_000);

  it('--dry-run and a missing --yes off a terminal change nothing; with --yes every member is back on 3.2 with the snapshot keys, old data kept', async () => {
    const rp = await upgraded();
    const before = pids();
    const dry = await sb.kv('restore', '--snapshot', rp.file, '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/every write after the snapshot's revision \d+ is lost/);
    expect(dry.stdout).toContain("(the last upgrade's restore point)");
    const noYes = await sb.kv('restore', '--snapshot', rp.file);
    expect(noYes.code).toBe(2);
    expect(noYes.stderr).toMatch(/--yes/);
    expect(pids()).toEqual(before);
    for (const m of sb.spec().members) expect(readdirSync(dirname(m.dataDir)).filter((f) => f.includes('restore'))).toEqual([]);

    const r = await sb.kv('restore', '--snapshot', rp.file, '--to-version', '3.2', ...FAST, '--yes', '--json');
    expect(r.code, r.stderr).toBe(0);
    const report = r.json();
    expect(report).toMatchObject({ status: 'restored', version: '3.2', revision: rp.revision, keys: 8, expectedKeys: 8 });
    expect(report.token).toMatch(/^opsctl-restore-/);
    expect(typeof report.healthyMs).toBe('number');
    expect((await versions()).map((v) => v.server)).toEqual(['3.2.32', '3.2.32', '3.2.32']);
    // kv restore returns only once every member reports the cluster version (a kv upgrade right after would refuse "not decided")
    expect(report.clusterVersion).toBe('3.2.0');
    expect((await versions()).map((v) => v.cluster)).toEqual(['3.2.0', '3.2.0', '3.2.0']);
    expect((await sb.kv('get', 'before/3')).stdout.trim()).toBe('v3');
    expect((await sb.kv('get', 'after/upgrade', '--require')).code).toBe(1);
    // The old data dirs are kept, renamed, with the write made after the snapshot still in them.
    for (const m of sb.spec().members) {
      const kept = readdirSync(dirname(m.dataDir)).filter((f) => f.startsWith('data.before-restore-'));
      expect(kept).toHaveLength(1);
      // (the member's state as it loads it: kv.json and its change log)
      expect(JSON.stringify(new MemberStore(join(dirname(m.dataDir), kept[0]!, 'member')).load().state)).toContain(
        Buffer.from('after/upgrade').toString('base64'),
      );
    }
    // A new cluster: the members' config files carry the new token.
    for (const m of sb.spec().members)
      expect(readFileSync(join(dirname(m.dataDir), `${m.name}.conf.yml`), 'utf8')).toContain(`initial-cluster-token: ${report.token}`);

    // The same command again (an operator unsure it finished): nothing restored twice over the writes served since.
    expect((await sb.kv('put', 'after/restore', 'served')).code).toBe(0);
    const twice = await sb.kv('restore', '--snapshot', rp.file, '--to-version', '3.2', ...FAST, '--yes', '--json');
    expect(twice.code, twice.stderr).toBe(0);
    expect(twice.json()).toMatchObject({
      status: 'already-restored',
      run: report.token.replace('opsctl-restore-', ''),
      version: '3.2',
      revision: rp.revision,
      keys: 8,
    });
    expect(twice.json().restoredAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect((await sb.kv('get', 'after/restore')).stdout.trim()).toBe('served');
    // --again restores it again (the write since is lost; a second old data dir kept beside the first)
    const again = await sb.kv('restore', '--snapshot', rp.file, '--to-version', '3.2', ...FAST, '--yes', '--again', '--json');
    expect(again.code, again.stderr).toBe(0);
    expect(again.json()).toMatchObject({ status: 'restored', revision: rp.revision, keys: 8 });
    expect(again.stderr).toMatch(/--again: \S+ was restored already \(run \S+, .*\); restored again, every write since lost/);
    expect((await sb.kv('get', 'after/restore', '--require')).code).toBe(1);
    for (const m of sb.spec().members) expect(readdirSync(dirname(m.dataDir)).filter((f) => f.startsWith('data.before-restore-'))).toHaveLength(2);
  }, 60_000);

  it('bad input is refused before any member is stopped: a snapshot failing its hash, a snapshot of another cluster, a missing data dir, an unreachable host', async () => {
    const rp = await upgraded();
    const before = pids();
    const data = readFileSync(rp.file);

    const corrupt = join(sb.dir, 'corrupt.db');
    const bad = Buffer.from(data);
    bad[20]! ^= 0xff;
    writeFileSync(corrupt, bad);
    const c = await sb.kv('restore', '--snapshot', corrupt, '--yes');
    expect(c.code).toBe(1);
    expect(c.stderr).toContain(`snapshot ${corrupt} fails its hash check: SHA-256 trailer mismatch`);
    expect(c.stderr).toMatch(/use another copy, or take a new one with opsctl kv snapshot save/);
    const cs = await sb.kv('snapshot', 'status', corrupt);
    expect(cs.code).toBe(1);
    expect(cs.stderr).toContain(corrupt);

    // A file with a valid trailer that is no database at all.
    const junk = join(sb.dir, 'junk.db');
    const body = Buffer.alloc(8192, 7);
    writeFileSync(junk, Buffer.concat([body, createHash('sha256').update(body).digest()]));
    const j = await sb.kv('snapshot', 'status', junk);
    expect(j.code).toBe(1);
    expect(j.stderr).toContain(`snapshot ${junk} is not an etcd database: not a bbolt database`);

    // Another cluster's snapshot: a higher revision than this cluster ever reached, from a member it lacks.
    const other = join(sb.dir, 'other.db');
    const payload = Buffer.from(JSON.stringify({ kvsnapshot: 1, member: 'db9', revision: 999, clusterVersion: '3.2', kvs: {} }).padEnd(512, ' '));
    writeFileSync(other, Buffer.concat([payload, createHash('sha256').update(payload).digest()]));
    const o = await sb.kv('restore', '--snapshot', other, '--yes');
    expect(o.code).toBe(1);
    expect(o.stderr).toMatch(new RegExp(`holds revision 999, beyond this cluster's revision \\d+: it was not taken from this cluster`));
    expect(o.stderr).toContain(rp.file); // the fix names the restore point

    const missing = await sb.kv('restore', '--snapshot', join(sb.dir, 'nope.db'), '--yes');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`snapshot ${join(sb.dir, 'nope.db')}: no such file`);

    expect(pids()).toEqual(before);

    // A missing data dir (the member exits when its data dir goes: down, as on a broken host).
    const m2 = sb.spec().members[1]!;
    renameSync(m2.dataDir, `${m2.dataDir}.moved`);
    const md = await sb.kv('restore', '--snapshot', rp.file, '--yes');
    expect(md.code).toBe(1);
    expect(md.stderr).toContain(`member ${m2.name}: its data directory ${m2.dataDir} does not exist`);
    expect(md.stderr).toMatch(/nothing was stopped/);
    for (const [i, m] of sb.spec().members.entries()) if (i !== 1) expect(readFileSync(m.pidFile, 'utf8').trim()).toBe(before[i]);
    expect(sb.spec().members.every((m) => !existsSync(`${m.dataDir}.restore-`))).toBe(true);
    renameSync(`${m2.dataDir}.moved`, m2.dataDir);

    // No driver that can restore (endpoints alone, or templates without a restore one): exit 2.
    const noDriver = await sb.kv(
      'restore',
      '--snapshot',
      rp.file,
      '--endpoints',
      sb
        .spec()
        .members.map((m) => m.endpoint)
        .join(','),
      '--yes',
    );
    expect(noDriver.code).toBe(2);
    expect(noDriver.stderr).toMatch(/no way to stop, restore and start the members[\s\S]*--restore-cmd/);

    // An unreachable host: the command driver's check runs real ssh to a port nothing listens on.
    const eps = sb
      .spec()
      .members.map((m) => m.endpoint)
      .join(',');
    const ssh = 'ssh -o BatchMode=yes -o ConnectTimeout=5 -o StrictHostKeyChecking=no -p 1 {host} true';
    const u = await sb.kv(
      'restore',
      '--snapshot',
      rp.file,
      '--endpoints',
      eps,
      '--stop-cmd',
      'false',
      '--start-cmd',
      'false',
      '--running-cmd',
      'false',
      '--restore-cmd',
      'false',
      '--restore-check-cmd',
      ssh,
      '--yes',
    );
    expect(u.code).toBe(1);
    expect(u.stderr).toMatch(/ssh -o BatchMode=yes .* 127\.0\.0\.1 true` failed \(exit 255\): ssh: connect to host 127\.0\.0\.1 port 1: Connection refused/);
    expect(u.stderr).toMatch(/nothing was stopped/);
  }, 90_000);
});

describe('kv upgrade --on-failure rollback and kv rollback --dry-run (simulated sandbox)', () => {
  it('a member that never becomes healthy on 3.3 is put back on 3.2 with its backed-up data: exit 3, the cluster healthy on 3.2 as before', async () => {
    sb.fault({ neverHealthyOn: '3.3' });
    const bad = await sb.kv('upgrade', '--to', '3.3', '--yes', ...FAST, '--on-failure', 'sometimes');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--on-failure: "sometimes" is not one of halt, rollback');

    const r = await sb.kv('upgrade', '--to', '3.3', '--yes', ...FAST, '--healthy-timeout', '2s', '--on-failure', 'rollback');
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/did not become healthy on 3\.3/);
    const first = sb.journal().members.find((m: any) => m.action !== 'skip').name;
    expect(r.stderr).toContain(`--on-failure rollback: ${first} is back on 3.2 (data dir restored from `);
    const v = await versions();
    expect(v.map((x) => x.server)).toEqual(['3.2.32', '3.2.32', '3.2.32']);
    expect(v.every((x) => x.cluster === '3.2.0')).toBe(true);
    expect((await sb.kv('health')).code).toBe(0);
    expect((await sb.kv('get', 'before/5')).stdout.trim()).toBe('v5');
    // The data dir 3.3 ran on is kept beside the restored one; the journal lets a re-run start over at the gate.
    const m = sb.spec().members.find((x) => x.name === first)!;
    expect(readdirSync(dirname(m.dataDir)).filter((f) => f.startsWith('data.failed-'))).toHaveLength(1);
    const j = sb.journal();
    expect(j.status).toBe('halted');
    expect(j.steps.filter((s: any) => s.member === first && s.kind !== 'snapshot').every((s: any) => s.status === 'pending')).toBe(true);

    // Nothing is on 3.3: the roll-back has nothing to do, and says so in a dry run.
    const dry = await sb.kv('rollback', '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/nothing to roll back \(--dry-run: nothing was changed\)/);
  }, 60_000);

  it('kv rollback --dry-run after a halt names the member it would bring back and changes nothing', async () => {
    sb.fault({ neverHealthyOn: '3.3' });
    const r = await sb.kv('upgrade', '--to', '3.3', '--yes', ...FAST, '--healthy-timeout', '2s');
    expect(r.code).toBe(3);
    const journalBefore = JSON.stringify(sb.journal());
    const before = pids();
    const dry = await sb.kv('rollback', '--dry-run', '--json');
    expect(dry.code, dry.stderr).toBe(0);
    const plan = dry.json();
    expect(plan.status).toBe('planned');
    expect(plan.plan).toHaveLength(1);
    expect(plan.plan[0]).toMatchObject({ to: '3.2', why: 'runs 3.3.27' });
    const text = await sb.kv('rollback', '--dry-run');
    expect(text.stdout).toContain(`1. ${plan.plan[0].name}: stop, start on 3.2`);
    expect(pids()).toEqual(before);
    expect(JSON.stringify(sb.journal())).toBe(journalBefore);
    expect((await versions()).filter((x) => x.server.startsWith('3.3'))).toHaveLength(1);
  }, 60_000);
});
