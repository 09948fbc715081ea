/**
 * A member's WAL written byte for byte as etcd writes one (wal/encoder.go framing, walpb.Record, raftpb.Entry,
 * etcdserverpb.Request and InternalRaftRequest), enough for opsctl's WAL readers (kv/wal/v2-data.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Protobuf encoding enough for a WAL (etcd's wal/encoder.go framing, walpb.Record, raftpb.Entry). */
export const varint = (n: number): Buffer => {
  const out: number[] = [];
  while (n > 127) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Buffer.from(out);
};
export const field = (n: number, v: Buffer | number): Buffer =>
  typeof v === 'number' ? Buffer.concat([varint(n << 3), varint(v)]) : Buffer.concat([varint((n << 3) | 2), varint(v.length), v]);
/** A v2 PUT: in an InternalRaftRequest (field 2), or bare as 3.2 wrote it. */
export const v2Put = (path: string, bytes: number, wrapped: boolean): Buffer => {
  const req = Buffer.concat([field(1, 7), field(2, Buffer.from('PUT')), field(3, Buffer.from(path)), field(4, Buffer.alloc(bytes, 0x61))]);
  return wrapped ? Buffer.concat([field(1, 7), field(2, req)]) : req;
};
/** A v3 put (InternalRaftRequest field 4): not v2 data. */
export const v3Put = (bytes: number): Buffer =>
  Buffer.concat([field(1, 9), field(4, Buffer.concat([field(1, Buffer.from('k')), field(2, Buffer.alloc(bytes, 0x62))]))]);
/** A v2 request of another method (DELETE, QGET): not a write the store keeps. */
export const v2Other = (method: string, path: string): Buffer =>
  Buffer.concat([field(1, 7), field(2, Buffer.concat([field(1, 7), field(2, Buffer.from(method)), field(3, Buffer.from(path))]))]);
/** One WAL frame as etcd's encoder writes it: the length, its padding to 8 bytes said in the top byte. */
export function frame(rec: Buffer): Buffer {
  const pad = (8 - (rec.length % 8)) % 8;
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(rec.length) | (pad ? BigInt(0x80 | pad) << 56n : 0n));
  return Buffer.concat([len, rec, Buffer.alloc(pad)]);
}
/** A data dir whose member/wal holds one WAL file with these entries (no member/snap); `tail` after them (a torn record). */
export function walDir(root: string, name: string, payloads: Buffer[], tail: Buffer = Buffer.alloc(64)): string {
  const dir = join(root, name, 'member', 'wal');
  mkdirSync(dir, { recursive: true });
  const frames = payloads.map((p, i) =>
    frame(Buffer.concat([field(1, 2), field(2, 0), field(3, Buffer.concat([field(1, 0), field(2, 1), field(3, i + 1), field(4, p)]))])),
  );
  writeFileSync(join(dir, '0000000000000000-0000000000000000.wal'), Buffer.concat([...frames, tail]));
  return join(root, name);
}

/** A v2 request written bare (not in an InternalRaftRequest), as 3.2 wrote every one and 3.3 to 3.5 their own: method and path. */
export const v2Bare = (method: string, path: string): Buffer => Buffer.concat([field(1, 7), field(2, Buffer.from(method)), field(3, Buffer.from(path))]);

/** A WAL of records in order: entries (their raft index and payload) and snapshot records (the index they cover). */
export function walOf(root: string, name: string, records: Array<{ entry: number; payload: Buffer } | { snapshot: number }>): string {
  const dir = join(root, name, 'member', 'wal');
  mkdirSync(dir, { recursive: true });
  const frames = records.map((r) =>
    'snapshot' in r
      ? frame(Buffer.concat([field(1, 5), field(2, 0), field(3, Buffer.concat([field(1, r.snapshot), field(2, 1)]))]))
      : frame(Buffer.concat([field(1, 2), field(2, 0), field(3, Buffer.concat([field(1, 0), field(2, 1), field(3, r.entry), field(4, r.payload)]))])),
  );
  writeFileSync(join(dir, '0000000000000000-0000000000000000.wal'), Buffer.concat([...frames, Buffer.alloc(64)]));
  return join(root, name);
}
