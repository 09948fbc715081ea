import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { copyVerdict, walMark, type WalMark } from '../../src/kv/wal/wal-mark.js';
import { field, frame, v3Put } from '../helpers/wal-bytes.js';

const root = mkdtempSync(join(tmpdir(), 'opsctl-wal-mark-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** walpb.Record of an entry (type 2: raftpb.Entry with its term and index) or of a hard state (type 3: term, vote, commit). */
const entry = (term: number, index: number) =>
  frame(Buffer.concat([field(1, 2), field(3, Buffer.concat([field(2, term), field(3, index), field(4, v3Put(8))]))]));
const state = (term: number, commit: number) => frame(Buffer.concat([field(1, 3), field(3, Buffer.concat([field(1, term), field(2, 1), field(3, commit)]))]));

/** A data dir whose WAL holds these frames, then `zeros` preallocated bytes (etcd preallocates 64 MB). */
function dataDir(name: string, frames: Buffer[], zeros = 4096): { dataDir: string } {
  const wal = join(root, name, 'member', 'wal');
  mkdirSync(wal, { recursive: true });
  writeFileSync(join(wal, '0000000000000000-0000000000000000.wal'), Buffer.concat([...frames, Buffer.alloc(zeros)]));
  return { dataDir: join(root, name) };
}

const base = [state(2, 0), entry(2, 1), entry(2, 2), state(2, 2)];

describe("a member's WAL mark (the put-back's guard: kv/wal/wal-mark.ts)", () => {
  it('counts and hashes the records up to the zero tail, with the last entry index and term; the preallocated tail does not count', () => {
    const a = walMark(dataDir('a', base)) as WalMark;
    expect(a).toEqual({ digest: expect.stringMatching(/^[0-9a-f]{32}$/), text: '4 records, raft index 2 at term 2' });
    expect(walMark(dataDir('a-longer-tail', base, 1 << 20))).toEqual(a);
    const b = walMark(dataDir('b', [...base, entry(3, 3), state(3, 3)])) as WalMark;
    expect(b.text).toBe('6 records, raft index 3 at term 3');
    expect(b.digest).not.toBe(a.digest);
    expect(walMark({ dataDir: join(root, 'none') })).toEqual({ why: expect.stringContaining(join(root, 'none', 'member', 'wal')) });
  });

  it('the copy goes back only over a WAL the start left record for record as it was; otherwise, or when it cannot be told, the data stays', () => {
    const before = walMark(dataDir('before', base)) as WalMark;
    expect(copyVerdict('3.6', before, walMark(dataDir('same', base)))).toEqual({
      putBack: true,
      why: 'its WAL as before its start on 3.6 (4 records, raft index 2 at term 2)',
    });
    // the same count of records, one of them another (a hard state with a vote of another term): not the same
    const other = copyVerdict('3.6', before, walMark(dataDir('other', [state(2, 0), entry(2, 1), entry(2, 2), state(3, 2)])));
    expect(other.putBack).toBe(false);
    const moved = copyVerdict('3.6', before, walMark(dataDir('moved', [...base, entry(2, 3), entry(2, 4), state(2, 4)])));
    expect(moved).toEqual({
      putBack: false,
      why: expect.stringMatching(
        /^its WAL was written after the copy \(4 records, raft index 2 at term 2 before its start, 7 records, raft index 4 at term 2 now\): .*tocommit/,
      ),
    });
    expect(copyVerdict('3.6', undefined, before)).toEqual({ putBack: false, why: expect.stringContaining('no mark of its WAL was taken before its start') });
    expect(copyVerdict('3.6', { why: 'kv1 was running already' }, before)).toEqual({
      putBack: false,
      why: expect.stringContaining('(kv1 was running already)'),
    });
    expect(copyVerdict('3.6', before, { why: 'gone' })).toEqual({ putBack: false, why: expect.stringContaining('its WAL cannot be read now (gone)') });
  });
});
