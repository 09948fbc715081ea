import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OpsError } from '../../src/core/errors.js';
import { journalPath, type Journal, type JournalStep } from '../../src/kv/journal/journal.js';
import { runRollback, type RollbackOptions } from '../../src/kv/restore/rollback.js';
import { FakeCluster, fakeClock, recordingReporter } from '../helpers/fake-cluster.js';

/**
 * kv rollback's domain piece (src/kv/restore/rollback.ts) on fake members (test/helpers/fake-cluster.ts):
 * no process, no socket. An upgrade 3.4 → 3.5 of kv1, kv2, kv3 is recorded; each test says how far it got.
 */
const TIMEOUTS = { requestMs: 1000, stopMs: 1000, healthyMs: 2000, clusterVersionMs: 1000, snapshotMs: 1000, pollMs: 5 };
const KINDS = ['stop', 'wait-stopped', 'start', 'wait-healthy'] as const;

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(`${tmpdir()}/opsctl-rollback-`);
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

/** A member's upgrade steps: the first `done` of them done, the next one `next` (pending by default). */
function stepsOf(member: string, done: number, next: JournalStep['status'] = 'pending'): JournalStep[] {
  return KINDS.map((kind, i) => ({ id: `${member}/${kind}`, member, kind, status: i < done ? 'done' : i === done ? next : 'pending' }));
}

/** The upgrade's journal as it was left: kv1 upgraded, kv2 stopped and halted before its start, kv3 not reached (by default). */
function recordUpgrade(c: FakeCluster, steps = [...stepsOf('kv1', 4), ...stepsOf('kv2', 2, 'failed'), ...stepsOf('kv3', 0)]): string {
  const file = journalPath(dataDir, c.spec().key);
  const at = new Date(Date.UTC(2026, 0, 1)).toISOString();
  const j: Journal = {
    version: 1,
    id: '20260101T000000-abcdef',
    cluster: c.spec().key,
    source: '3.4',
    target: '3.5',
    allowSameVersion: false,
    status: 'halted',
    createdAt: at,
    updatedAt: at,
    owner: { pid: 1, host: 'elsewhere' },
    members: c.members.map((m, i) => ({
      name: m.name,
      id: m.id,
      endpoint: `http://${m.name}.fake:2379`,
      fromVersion: '3.4.9',
      action: 'upgrade',
      reason: 'on 3.4',
      wasLeader: i === 0,
    })),
    previous: Object.fromEntries(c.members.map((m) => [m.name, { version: '3.4' }])),
    steps,
    snapshots: [],
  };
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(j, null, 2)}\n`);
  return file;
}

const readBack = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Journal;

function options(c: FakeCluster, extra: Partial<RollbackOptions> = {}): RollbackOptions {
  return {
    cluster: c.spec(),
    session: c.session(),
    driver: c.driver(),
    dataDir,
    timeouts: TIMEOUTS,
    now: fakeClock(),
    reporter: recordingReporter(),
    lockStaleMs: 60_000,
    ...extra,
  };
}

/** What runRollback threw. */
async function refusal(p: Promise<unknown>): Promise<OpsError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpsError);
  return err as OpsError;
}

/** kv1 upgraded (3.5, running), kv2 stopped by the upgrade (down), kv3 still on 3.4. */
const halfway = () =>
  new FakeCluster({
    members: [
      { name: 'kv1', version: '3.5' },
      { name: 'kv2', version: '3.4', running: false },
      { name: 'kv3', version: '3.4' },
    ],
  });

describe('kv rollback (restore/rollback.ts) on fake members', () => {
  it('the member the upgrade left down first (started, no stop), then the one on the target (stopped, started on 3.4); the journal says rolled-back', async () => {
    const c = halfway();
    const file = recordUpgrade(c);
    const o = options(c);
    const r = await runRollback(o);
    expect(c.log).toEqual(['start kv2 3.4', 'stop kv1', 'start kv1 3.4']);
    expect(r.status).toBe('rolled-back');
    expect(r.members.map((m) => [m.name, m.from, m.to])).toEqual([
      ['kv2', '3.5', '3.4'],
      ['kv1', '3.5', '3.4'],
    ]);
    expect(c.members.map((m) => [m.name, m.version, m.running])).toEqual([
      ['kv1', '3.4', true],
      ['kv2', '3.4', true],
      ['kv3', '3.4', true],
    ]);
    const j = readBack(file);
    expect(j.status).toBe('rolled-back');
    expect(j.rollback?.map((x) => [x.member, x.to])).toEqual([
      ['kv2', '3.4'],
      ['kv1', '3.4'],
    ]);
    // every cycle step done, planned in the order run, each member's in the order of the cycle; kv2 was found down: its stop says so
    expect(j.rollbackSteps?.map((s) => `${s.id} ${s.status}`)).toEqual(
      ['kv2', 'kv1'].flatMap((m) => ['stop', 'wait-stopped', 'start', 'wait-healthy'].map((k) => `rollback/${m}/${k} done`)),
    );
    expect(j.rollbackSteps?.find((s) => s.id === 'rollback/kv2/stop')?.detail).toBe('not running');
    // the upgrade's failed step is pending again (a new kv upgrade plans it anew)
    expect(j.steps.find((s) => s.id === 'kv2/start')?.status).toBe('pending');
    expect(c.unexpected).toEqual([]);
  });

  it('refuses before any change once the cluster version is the target: no member touched, the journal as it was, the way back named', async () => {
    const c = new FakeCluster({ members: ['kv1', 'kv2', 'kv3'].map((name) => ({ name, version: '3.5' })) });
    const file = recordUpgrade(c, [...stepsOf('kv1', 4), ...stepsOf('kv2', 4), ...stepsOf('kv3', 4)]);
    const before = readFileSync(file, 'utf8');
    const err = await refusal(runRollback(options(c)));
    expect(err.code).toBe('rollback_refused');
    expect(err.message).toContain('the cluster version is already 3.5.0');
    expect(err.hint).toContain('opsctl kv restore --snapshot FILE --to-version 3.4');
    expect(c.log).toEqual([]);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('refuses with nothing recorded (no journal), and never touches a member', async () => {
    const c = halfway();
    const err = await refusal(runRollback(options(c)));
    expect(err.code).toBe('no_journal');
    expect(c.log).toEqual([]);
  });

  it('--dry-run: the plan in order with why each, nothing changed (no driver call, the journal byte for byte)', async () => {
    const c = halfway();
    const file = recordUpgrade(c);
    const before = readFileSync(file, 'utf8');
    const r = await runRollback(options(c, { dryRun: true }));
    expect(r.status).toBe('planned');
    expect(r.plan).toEqual([
      { name: 'kv2', to: '3.4', why: 'down: the upgrade stopped it; back on the version it last ran healthy' },
      { name: 'kv1', to: '3.4', why: 'runs 3.5.9' },
    ]);
    expect(c.log).toEqual([]);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('never two down: a healthy member on the target is not stopped while another is down that the upgrade never stopped', async () => {
    const c = new FakeCluster({
      members: [
        { name: 'kv1', version: '3.5' },
        { name: 'kv2', version: '3.4' },
        { name: 'kv3', version: '3.4', running: false },
      ],
    });
    const file = recordUpgrade(c, [...stepsOf('kv1', 4), ...stepsOf('kv2', 0), ...stepsOf('kv3', 0)]);
    const err = await refusal(runRollback(options(c)));
    expect(err.code).toBe('rollback_unsafe');
    expect(err.message).toMatch(/^not stopping kv1: kv3 is not healthy/);
    expect(err.exitCode).toBe(1);
    expect(c.log).toEqual([]);
    // the cycle of kv1 is recorded as refused at its stop, nothing after it begun
    expect(readBack(file).rollbackSteps?.map((s) => `${s.id} ${s.status}`)).toEqual([
      'rollback/kv1/stop failed',
      'rollback/kv1/wait-stopped pending',
      'rollback/kv1/start pending',
      'rollback/kv1/wait-healthy pending',
    ]);
  });

  it('a member whose process exits after its start halts the roll-back there (exit 1, the next member untouched); the same command finishes once it starts', async () => {
    const c = halfway();
    const file = recordUpgrade(c);
    c.exitsOnStart.add('kv2');
    const err = await refusal(runRollback(options(c)));
    expect(err.code).toBe('rollback_failed');
    expect(err.message).toContain("roll-back of kv2 to 3.4 failed: kv2's process exited after its start");
    expect(err.exitCode).toBe(1);
    // kv1 was never stopped: kv2 was down, a second member down would lose the quorum
    expect(c.log).toEqual(['start kv2 3.4']);
    const j = readBack(file);
    expect(j.status).toBe('rolling-back');
    expect(j.rollbackSteps?.find((s) => s.id === 'rollback/kv2/wait-healthy')?.status).toBe('failed');
    // the operator fixed kv2's start and started it by hand; the same command resumes: kv2 is waited for, kv1 rolled back
    c.exitsOnStart.clear();
    c.member('kv2').running = true;
    c.log.length = 0;
    const r = await runRollback(options(c));
    expect(c.log).toEqual(['stop kv1', 'start kv1 3.4']);
    expect(r.members.map((m) => m.name)).toEqual(['kv2', 'kv1']);
    expect(readBack(file).status).toBe('rolled-back');
  });

  it('resumes a roll-back killed right before a stop: the journal written ahead names the member; nothing done twice', async () => {
    const c = halfway();
    const file = recordUpgrade(c);
    // opsctl killed as it calls the driver to stop kv1: the journal on disk is what the kill leaves
    let left: string | undefined;
    c.onCall = (call) => {
      if (call === 'stop kv1' && left === undefined) {
        left = readFileSync(file, 'utf8');
        throw new Error('killed');
      }
    };
    await refusal(runRollback(options(c)));
    writeFileSync(file, left!);
    expect((JSON.parse(left!) as Journal).rollbackSteps?.find((s) => s.id === 'rollback/kv1/stop')?.status).toBe('running');
    c.onCall = undefined;
    c.log.length = 0;
    const r = await runRollback(options(c));
    // kv2 was back before the kill: not started again; kv1's stop, begun, is done again (it still runs), then its start
    expect(c.log).toEqual(['stop kv1', 'start kv1 3.4']);
    expect(r.status).toBe('rolled-back');
    expect(r.members.map((m) => m.name)).toEqual(['kv1']);
    expect(readBack(file).rollback?.map((x) => x.member)).toEqual(['kv2', 'kv1']);
  });
});
