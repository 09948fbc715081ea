/**
 * The v2 data a member's WAL holds, read from its files (member/wal/*.wal), for --settle auto when
 * nothing else can tell: a 3.4/3.5 member serves no v2 API unless --enable-v2, and before its first
 * v2 snapshot (member/snap/*.snap, written every snapshot-count entries: 100,000 by default) every
 * v2 write is in the WAL only. The figure is the bytes of every v2 PUT/POST (path and value) the
 * WAL holds: an upper bound of the v2 store (a deleted or overwritten key still counts), so a figure
 * under the guide's 50 MB really is under it. v3 requests are not counted (the guide exempts v3 data).
 *
 * The format (etcd's wal/encoder.go, walpb.Record, raftpb.Entry, etcdserverpb): each frame is a
 * little-endian uint64 whose low 56 bits are the record's length and whose top byte, when its high
 * bit is set, gives the padding after it; a zero frame ends the (preallocated) file. A record of type
 * 2 carries a raft entry; a normal entry's data is an InternalRaftRequest (its v2 request in field 2)
 * or, from 3.2 and earlier members, the v2 Request itself.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ENTRY_RECORD = 2;

/** Length-delimited and varint fields of one protobuf message (other wire types are skipped). */
function fields(buf: Buffer): Map<number, Array<Buffer | bigint>> {
  const out = new Map<number, Array<Buffer | bigint>>();
  let i = 0;
  const varint = (): bigint => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      if (i >= buf.length) throw new Error('truncated varint');
      const b = buf[i++]!;
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const key = varint();
    const field = Number(key >> 3n);
    const wire = Number(key & 7n);
    let value: Buffer | bigint;
    if (wire === 0) value = varint();
    else if (wire === 2) {
      const n = Number(varint());
      if (i + n > buf.length) throw new Error('truncated field');
      value = buf.subarray(i, i + n);
      i += n;
    } else if (wire === 1) {
      i += 8;
      continue;
    } else if (wire === 5) {
      i += 4;
      continue;
    } else throw new Error(`wire type ${wire}`);
    out.set(field, [...(out.get(field) ?? []), value]);
  }
  return out;
}

const bytesOf = (f: Map<number, Array<Buffer | bigint>>, n: number): Buffer | undefined => {
  const v = f.get(n)?.[0];
  return Buffer.isBuffer(v) ? v : undefined;
};

const METHOD = /^(PUT|POST|DELETE|QGET|GET|HEAD|SYNC)$/;

/** The v2 request in an entry's data, if it is one: {method, path, value bytes}. */
function v2Request(data: Buffer): { method: string; bytes: number } | undefined {
  let f;
  try {
    f = fields(data);
  } catch {
    return undefined;
  }
  const two = bytesOf(f, 2);
  if (!two) return undefined;
  // A v2 Request of its own (3.2 and earlier, and the v2 API of later members): field 2 is its method.
  const asText = two.toString('latin1');
  const direct = METHOD.test(asText) ? f : undefined;
  let req = direct;
  if (!req) {
    try {
      req = fields(two); // InternalRaftRequest.v2
    } catch {
      return undefined;
    }
  }
  const method = bytesOf(req, 2)?.toString('latin1') ?? '';
  if (!METHOD.test(method)) return undefined;
  return { method, bytes: (bytesOf(req, 3)?.length ?? 0) + (bytesOf(req, 4)?.length ?? 0) };
}

export interface WalV2 {
  /** Bytes of v2 PUT/POST paths and values in the WAL: an upper bound of the v2 store. */
  bytes: number;
  /** v2 writes counted, WAL files read. */
  writes: number;
  files: number;
}

/** The v2 writes in a data dir's WAL; undefined when it has no WAL (or it cannot be read: `why`). */
export function walV2Bytes(dataDir: string, limit = Number.MAX_SAFE_INTEGER): WalV2 | { why: string } {
  const dir = join(dataDir, 'member', 'wal');
  if (!existsSync(dir)) return { why: `${dir} does not exist` };
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.wal'))
    .sort();
  const out: WalV2 = { bytes: 0, writes: 0, files: files.length };
  for (const name of files) {
    let buf: Buffer;
    try {
      buf = readFileSync(join(dir, name));
    } catch (err) {
      return { why: `${join(dir, name)}: ${(err as Error).message}` };
    }
    let off = 0;
    while (off + 8 <= buf.length) {
      const lenField = buf.readBigUInt64LE(off);
      if (lenField === 0n) break;
      const len = Number(lenField & 0x00ffffffffffffffn);
      const top = Number(lenField >> 56n);
      const pad = top & 0x80 ? top & 0x7 : 0;
      const start = off + 8;
      if (start + len > buf.length) break; // a torn tail: what was read counts
      off = start + len + pad;
      let rec;
      try {
        rec = fields(buf.subarray(start, start + len));
      } catch {
        continue;
      }
      if (rec.get(1)?.[0] !== BigInt(ENTRY_RECORD)) continue;
      const data = bytesOf(rec, 3);
      if (!data) continue;
      let ent;
      try {
        ent = fields(data);
      } catch {
        continue;
      }
      if ((ent.get(1)?.[0] ?? 0n) !== 0n) continue; // not EntryNormal
      const payload = bytesOf(ent, 4);
      if (!payload?.length) continue;
      const v2 = v2Request(payload);
      if (v2 && (v2.method === 'PUT' || v2.method === 'POST')) {
        out.bytes += v2.bytes;
        out.writes += 1;
        if (out.bytes > limit) return out;
      }
    }
  }
  return out;
}
