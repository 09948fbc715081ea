import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { walRecords } from '../../src/kv/wal/wal-records.js';
import { walV2Census, walV2Replay } from '../../src/kv/wal/v2-data.js';
import { field, frame, v2Bare, v3Put } from '../helpers/wal-bytes.js';

const root = mkdtempSync(join(tmpdir(), 'opsctl-wal-records-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const MiB = 1024 * 1024;
const record = (index: number, payload: Buffer) =>
  Buffer.concat([field(1, 2), field(2, 0), field(3, Buffer.concat([field(1, 0), field(2, 1), field(3, index), field(4, payload)]))]);
const entry = (index: number, payload: Buffer) => frame(record(index, payload));

/** A WAL dir of one segment: the frames, then zeros up to `size` (etcd preallocates 64 MB). */
function segment(name: string, frames: Buffer[], size: number): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  const body = Buffer.concat(frames);
  writeFileSync(join(dir, '0000000000000000-0000000000000000.wal'), Buffer.concat([body, Buffer.alloc(Math.max(0, size - body.length))]));
  return dir;
}

describe("the WAL's records, read a chunk at a time up to the zero tail", () => {
  it('every record in order, one of them across the 1 MiB chunk boundary and one larger than a chunk', () => {
    const records = [
      record(1, v3Put(MiB - 200)),
      record(2, v2Bare('QGET', '/0/members')),
      record(3, v3Put(MiB + 5000)),
      record(4, v2Bare('QGET', '/0/members')),
    ];
    const dir = segment('boundary', records.map(frame), 8 * MiB);
    const seen = [...walRecords(dir, ['0000000000000000-0000000000000000.wal'])];
    expect(seen.map((r) => Buffer.compare(r, records[seen.indexOf(r)]!))).toEqual([0, 0, 0, 0]);
    expect(walV2Census({ dataDir: root, walDir: dir })).toEqual({ byMethod: { QGET: 2 }, custom: 2, membership: 0 });
  });

  it('a torn record at the end counts what came before it; a file that cannot be read is named', () => {
    const whole = Buffer.concat([entry(1, v2Bare('QGET', '/0/members')), entry(2, v2Bare('QGET', '/0/members'))]);
    const dir = join(root, 'torn');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, '0000000000000000-0000000000000000.wal'), whole.subarray(0, whole.length - 12));
    expect(walV2Replay({ dataDir: root, walDir: dir })).toMatchObject({ count: 1, custom: 1 });
    const gone = join(root, 'unreadable');
    mkdirSync(join(gone, '0000000000000000-0000000000000000.wal'), { recursive: true });
    expect(walV2Replay({ dataDir: root, walDir: gone })).toEqual({ why: expect.stringContaining(join(gone, '0000000000000000-0000000000000000.wal')) });
  });

  it('a length field naming more than the file still holds (2^50 bytes) ends the file like a torn tail: what came before counts, nothing that size is allocated', () => {
    const huge = Buffer.alloc(8);
    huge.writeBigUInt64LE(2n ** 50n);
    const dir = segment('huge-length', [entry(1, v2Bare('QGET', '/0/members')), huge, Buffer.alloc(64, 1)], 2 * MiB);
    expect([...walRecords(dir, ['0000000000000000-0000000000000000.wal'])]).toHaveLength(1);
    expect(walV2Replay({ dataDir: root, walDir: dir })).toMatchObject({ count: 1, custom: 1 });
  });

  it('a segment read up to its first zero frame, not to its end: a 3 GiB sparse one (more than one read of a whole file can hold) gives its 2 records', () => {
    const dir = segment('prealloc', [entry(1, v2Bare('QGET', '/0/members')), entry(2, v3Put(10))], 0);
    truncateSync(join(dir, '0000000000000000-0000000000000000.wal'), 3 * 1024 * MiB);
    expect([...walRecords(dir, ['0000000000000000-0000000000000000.wal'])]).toHaveLength(2);
    expect(walV2Replay({ dataDir: root, walDir: dir })).toMatchObject({ count: 1, custom: 1 });
  });
});
