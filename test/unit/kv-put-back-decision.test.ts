import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { MemberSpec } from '../../src/kv/cluster/cluster-file.js';
import type { MemberDriver } from '../../src/kv/drivers/driver.js';
import type { Journal, JournalStep } from '../../src/kv/journal/journal.js';
import type { StepEnv } from '../../src/kv/upgrade/options.js';
import { copyDecision } from '../../src/kv/upgrade/on-failure.js';
import { walMark } from '../../src/kv/wal/wal-mark.js';
import { field, frame } from '../helpers/wal-bytes.js';

const root = mkdtempSync(join(tmpdir(), 'opsctl-put-back-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const m: MemberSpec = { name: 'kv1', endpoint: 'http://127.0.0.1:2379' };
const entry = (index: number) => frame(Buffer.concat([field(1, 2), field(3, Buffer.concat([field(2, 2), field(3, index)]))]));
function wal(frames: Buffer[]): string {
  const dir = mkdtempSync(join(root, 'd-'));
  mkdirSync(join(dir, 'member', 'wal'), { recursive: true });
  writeFileSync(join(dir, 'member', 'wal', '0000000000000000-0000000000000000.wal'), Buffer.concat([...frames, Buffer.alloc(512)]));
  return dir;
}
const env = (driver: Partial<MemberDriver>): StepEnv<never> => ({
  driver: driver as MemberDriver,
  journal: { target: '3.6' } as Journal,
  membership: [],
  real: true,
  o: {},
  checkpoint: async () => undefined,
});
const steps = (start: Partial<JournalStep>): JournalStep[] => [{ id: 'kv1/start', member: 'kv1', kind: 'start', status: 'failed', ...start }];

describe('--on-failure rollback: whether the copy goes back (upgrade/on-failure.ts copyDecision)', () => {
  const before = wal([entry(1), entry(2)]);
  const mark = walMark({ dataDir: before }) as { digest: string; text: string };

  it('the same WAL as before the start: put back; written since: kept; a driver that reads nothing: kept, saying so', async () => {
    expect(await copyDecision(env({ dataDirs: async () => ({ dataDir: before }) }), m, steps({ walBefore: mark }))).toMatchObject({ putBack: true });
    const after = wal([entry(1), entry(2), entry(3)]);
    const moved = await copyDecision(env({ dataDirs: async () => ({ dataDir: after }) }), m, steps({ walBefore: mark }));
    expect(moved).toEqual({
      putBack: false,
      why: expect.stringContaining('(2 records, raft index 2 at term 0 before its start, 3 records, raft index 3 at term 0 now)'),
    });
    const blind = await copyDecision(env({}), m, steps({ walBefore: mark }));
    expect(blind).toEqual({ putBack: false, why: expect.stringContaining("kv1's WAL is read neither on this machine nor on its host by its driver") });
    // a mark taken on its host (the trial template): compared as it is
    const host = { digest: 'a/b/1/2', text: '1 WAL files, the newest 0.wal with checksum 1 (on its host)' };
    expect(await copyDecision(env({ hostWalMark: async () => host }), m, steps({ walBefore: host }))).toMatchObject({ putBack: true });
    expect(await copyDecision(env({ hostWalMark: async () => ({ ...host, digest: 'a/b/9/2' }) }), m, steps({ walBefore: host }))).toMatchObject({
      putBack: false,
    });
  });

  it('never started on the target, or simulated members (no raft log): put back', async () => {
    expect(await copyDecision(env({}), m, steps({ status: 'pending' }))).toEqual({ putBack: true, why: 'etcd 3.6 was never started on it' });
    const sim = env({ capabilities: { etcdData: false, askVersion: false, what: 'simulated' } });
    expect(await copyDecision(sim, m, steps({}))).toEqual({ putBack: true, why: 'simulated members keep no raft log: the copy catches up from the leader' });
  });
});
