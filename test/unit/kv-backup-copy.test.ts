import {
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { backupEstimate, copyMemberData, copyTree, onDiskBytes, restoreMemberData } from '../../src/kv/drivers/backup-copy.js';

const MiB = 1024 * 1024;
/** A WAL segment as etcd leaves it: `size` bytes allocated (zeros written, as fallocate reserves them), `data` at its start. */
function segment(path: string, size: number, data: Buffer): void {
  writeFileSync(path, Buffer.alloc(size));
  const fd = openSync(path, 'r+');
  writeSync(fd, data, 0, data.length, 0);
  closeSync(fd);
}

describe('a member data dir copied for its backup in proportion to its data (issue 47 item 4)', () => {
  const dirs: string[] = [];
  const tmp = () => {
    const d = mkdtempSync(join(tmpdir(), 'opsctl-backup-copy-'));
    dirs.push(d);
    return d;
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  function dataDir(): { dir: string; db: Buffer; walData: Buffer; older: Buffer } {
    const dir = join(tmp(), 'data');
    mkdirSync(join(dir, 'member', 'snap'), { recursive: true, mode: 0o700 });
    mkdirSync(join(dir, 'member', 'wal'), { mode: 0o700 });
    const db = randomBytes(200 * 1024);
    writeFileSync(join(dir, 'member', 'snap', 'db'), db, { mode: 0o600 });
    writeFileSync(join(dir, 'member', 'snap', '0000000000000002-0000000000000010.snap'), randomBytes(3000), { mode: 0o644 });
    const older = randomBytes(8 * MiB);
    writeFileSync(join(dir, 'member', 'wal', '0000000000000000-0000000000000000.wal'), older, { mode: 0o600 });
    const walData = randomBytes(20_000);
    segment(join(dir, 'member', 'wal', '0000000000000001-0000000000000020.wal'), 8 * MiB, walData);
    segment(join(dir, 'member', 'wal', '0.tmp'), 8 * MiB, Buffer.alloc(0));
    return { dir, db, walData, older };
  }

  it('leaves out the preallocated .tmp segment, makes holes of the zeros, and keeps every byte, mode and time that a restore needs', () => {
    const { dir, db, walData, older } = dataDir();
    const dest = join(tmp(), 'copy');
    const before = onDiskBytes(dir);
    const c = copyTree(dir, dest);
    expect(c).toMatchObject({ files: 4, skipped: 1 });
    // the data dir takes > 24 MiB (three segments allocated); the copy its data: the db, the snap, one full and one 20 kB segment
    expect(before).toBeGreaterThan(24 * MiB);
    expect(c.onDisk).toBeLessThan(8 * MiB + 200 * 1024 + 3000 + 20_000 + 64 * 1024);
    expect(onDiskBytes(dest)).toBeGreaterThanOrEqual(c.onDisk);
    expect(readFileSync(join(dest, 'member', 'snap', 'db')).equals(db)).toBe(true);
    expect(readFileSync(join(dest, 'member', 'wal', '0000000000000000-0000000000000000.wal')).equals(older)).toBe(true);
    // the newest segment reads as it was: its records, then zeros to its full size (etcd reads to the first zero frame)
    const tail = readFileSync(join(dest, 'member', 'wal', '0000000000000001-0000000000000020.wal'));
    expect(tail.length).toBe(8 * MiB);
    expect(tail.subarray(0, walData.length).equals(walData)).toBe(true);
    expect(tail.subarray(walData.length).every((b) => b === 0)).toBe(true);
    expect(lstatSync(join(dest, 'member', 'wal', '0.tmp'), { throwIfNoEntry: false })).toBeUndefined();
    for (const rel of ['member', 'member/wal', 'member/snap/db', 'member/snap/0000000000000002-0000000000000010.snap']) {
      const a = statSync(join(dir, rel));
      const b = statSync(join(dest, rel));
      expect(b.mode, rel).toBe(a.mode);
      // (times are set to the millisecond)
      expect(Math.abs(b.mtimeMs - a.mtimeMs), rel).toBeLessThanOrEqual(1);
    }
  });

  it('the estimate before the copy counts what the copy will hold, the newest segment aside (the margin covers it)', () => {
    const { dir } = dataDir();
    const est = backupEstimate(dir);
    const c = copyTree(dir, join(tmp(), 'copy'));
    // the db, the snap file and the older full segment: what the copy holds but the newest segment's records
    expect(est).toBeGreaterThanOrEqual(200 * 1024 + 3000 + 8 * MiB);
    expect(est).toBeLessThan(200 * 1024 + 3000 + 8 * MiB + 64 * 1024);
    expect(c.onDisk - est).toBeLessThan(64 * MiB);
    expect(backupEstimate(join(dir, 'gone'))).toBe(0);
  });

  it('a copy replaces an earlier one at the same place; links are copied as links; a put-back copy (nothing left out) holds the .tmp too', () => {
    const { dir } = dataDir();
    symlinkSync('member/snap', join(dir, 'snaplink'));
    const dest = join(tmp(), 'copy');
    mkdirSync(join(dest, 'stale'), { recursive: true });
    copyTree(dir, dest);
    expect(lstatSync(join(dest, 'stale'), { throwIfNoEntry: false })).toBeUndefined();
    expect(lstatSync(join(dest, 'snaplink')).isSymbolicLink()).toBe(true);
    const back = join(tmp(), 'back');
    const all = copyTree(dir, back, () => false);
    expect(all.skipped).toBe(0);
    expect(statSync(join(back, 'member', 'wal', '0.tmp')).size).toBe(8 * MiB);
  });

  it('a member with its own WAL dir (wal-dir): the copy holds that WAL as its member/wal, counted by the estimate; the put-back returns each part to its place', () => {
    const { dir, walData, older } = dataDir();
    // the member keeps its WAL elsewhere: DATA/member/wal is not where etcd reads it then
    const wal = join(tmp(), 'wal');
    renameSync(join(dir, 'member', 'wal'), wal);
    const est = backupEstimate(dir, wal);
    expect(est).toBeGreaterThanOrEqual(200 * 1024 + 3000 + 8 * MiB);
    expect(backupEstimate(dir)).toBeLessThan(8 * MiB);
    const dest = join(tmp(), 'copy');
    const c = copyMemberData({ dataDir: dir, walDir: wal }, dest);
    expect(c.skipped).toBe(1); // the WAL's .tmp
    expect(readdirSync(join(dest, 'member', 'wal')).sort()).toEqual(['0000000000000000-0000000000000000.wal', '0000000000000001-0000000000000020.wal']);
    expect(readFileSync(join(dest, 'member', 'wal', '0000000000000000-0000000000000000.wal')).equals(older)).toBe(true);
    // the put-back: the data dir without member/wal, the WAL in its own dir
    rmSync(dir, { recursive: true });
    rmSync(wal, { recursive: true });
    restoreMemberData(dest, { dataDir: dir, walDir: wal });
    expect(existsSync(join(dir, 'member', 'wal'))).toBe(false);
    expect(existsSync(join(dir, 'member', 'snap', 'db'))).toBe(true);
    expect(readFileSync(join(wal, '0000000000000001-0000000000000020.wal')).subarray(0, walData.length).equals(walData)).toBe(true);
  });
});
