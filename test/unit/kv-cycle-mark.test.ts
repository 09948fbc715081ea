import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { MemberSpec } from '../../src/kv/cluster/cluster-file.js';
import type { MemberDriver } from '../../src/kv/drivers/driver.js';
import type { JournalStep } from '../../src/kv/journal/journal.js';
import { runCycle, type CycleEnv } from '../../src/kv/upgrade/cycle.js';
import { field, frame } from '../helpers/wal-bytes.js';

const root = mkdtempSync(join(tmpdir(), 'opsctl-cycle-mark-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const m: MemberSpec = { name: 'kv1', endpoint: 'http://127.0.0.1:1' };
const dataDir = join(root, 'kv1');
mkdirSync(join(dataDir, 'member', 'wal'), { recursive: true });
const entry = (index: number) => frame(Buffer.concat([field(1, 2), field(3, Buffer.concat([field(2, 2), field(3, index)]))]));
writeFileSync(join(dataDir, 'member', 'wal', '0000000000000000-0000000000000000.wal'), Buffer.concat([entry(1), entry(2), Buffer.alloc(512)]));

/** A member already stopped and gone (a cycle resumed after its wait): what runs is the copy's step, the start and the wait back. */
function stopped(backup: JournalStep['status']): JournalStep[] {
  return [
    { id: 'kv1/stop', member: 'kv1', kind: 'stop', status: 'done' },
    { id: 'kv1/wait-stopped', member: 'kv1', kind: 'wait-stopped', status: 'done' },
    { id: 'kv1/backup-data', member: 'kv1', kind: 'backup-data', status: backup },
    { id: 'kv1/start', member: 'kv1', kind: 'start', status: 'pending' },
    { id: 'kv1/wait-healthy', member: 'kv1', kind: 'wait-healthy', status: 'pending' },
  ];
}

function cycleEnv() {
  const reads: string[] = [];
  const driver: Partial<MemberDriver> = {
    type: 'local',
    isRunning: async () => false,
    start: async () => void reads.push('start'),
    dataDirs: async () => (reads.push('dataDirs'), { dataDir }),
  };
  const step = { update: () => undefined, done: () => undefined, fail: () => undefined };
  const env = {
    driver: driver as MemberDriver,
    journal: { id: 'r1', source: '3.4', target: '3.5', snapshots: [] },
    membership: [],
    real: true,
    o: { reporter: { begin: () => step, note: () => undefined }, timeouts: { pollMs: 10, stopMs: 1000 }, now: () => 0 },
    checkpoint: async () => undefined,
  } as unknown as CycleEnv['env'];
  return { reads, x: { env, save: async () => undefined } satisfies CycleEnv };
}

describe("a cycle's WAL mark before its start (the put-back's guard, upgrade/cycle.ts)", () => {
  it('taken where the data dir was copied while the member was down: the copy a failed start may put back', async () => {
    const { reads, x } = cycleEnv();
    const steps = stopped('pending');
    await runCycle(x, { member: m, steps, target: { version: '3.5' }, whileDown: async () => 'copied', waitBack: async () => 'back' });
    expect(steps.find((s) => s.kind === 'start')?.walBefore).toEqual({
      digest: expect.stringMatching(/^[0-9a-f]{32}$/),
      text: '2 records, raft index 2 at term 0',
    });
    expect(reads).toEqual(['dataDirs', 'start']);
  });

  it('not taken (its WAL not read while the member is down) where nothing was copied: --no-backup, a driver with no backup', async () => {
    const { reads, x } = cycleEnv();
    const steps = stopped('skipped');
    await runCycle(x, { member: m, steps, target: { version: '3.5' }, whileDown: async () => 'copied', waitBack: async () => 'back' });
    expect(steps.find((s) => s.kind === 'start')?.walBefore).toBeUndefined();
    expect(steps.map((s) => s.status)).toEqual(['done', 'done', 'skipped', 'done', 'done']);
    expect(reads).toEqual(['start']);
  });
});
