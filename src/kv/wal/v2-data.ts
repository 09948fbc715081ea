/**
 * The v2 data a member's WAL holds, read from its files (member/wal/*.wal, or its own wal-dir), for --settle auto when
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
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { walRecords } from './wal-records.js';

/**
 * Where a member keeps its data, as its settings say: its data dir and, where it sets one (wal-dir: a flag,
 * ETCD_WAL_DIR or its config file's key), its WAL dir, which then holds what DATA_DIR/member/wal holds
 * otherwise. Every tool opsctl runs on a member's data is given both (etcdutl --wal-dir, this reader, the
 * copies and the restore).
 */
export interface MemberDirs {
  dataDir: string;
  walDir?: string;
}

/** The WAL dir of a member (`dirs`; a data dir alone: its member/wal). */
export function walDirOf(dirs: string | MemberDirs): string {
  const d = typeof dirs === 'string' ? { dataDir: dirs } : dirs;
  return d.walDir ?? join(d.dataDir, 'member', 'wal');
}

export const ENTRY_RECORD = 2;

/** Length-delimited and varint fields of one protobuf message (other wire types are skipped). */
export function fields(buf: Buffer): Map<number, Array<Buffer | bigint>> {
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

export const bytesOf = (f: Map<number, Array<Buffer | bigint>>, n: number): Buffer | undefined => {
  const v = f.get(n)?.[0];
  return Buffer.isBuffer(v) ? v : undefined;
};

const METHOD = /^(PUT|POST|DELETE|QGET|GET|HEAD|SYNC)$/;

/** The v2 request in an entry's data, if it is one: its method, its path, the bytes of its path and value. */
function v2Request(data: Buffer): { method: string; path: string; bytes: number } | undefined {
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
  const path = bytesOf(req, 3);
  return { method, path: path?.toString('utf8') ?? '', bytes: (path?.length ?? 0) + (bytesOf(req, 4)?.length ?? 0) };
}

export interface WalV2 {
  /** Bytes of v2 PUT/POST paths and values in the WAL: an upper bound of the v2 store. */
  bytes: number;
  /** v2 writes counted, WAL files read. */
  writes: number;
  files: number;
}

/** Every v2 request of a member's WAL files, in order (a torn tail ends a file); `why` when the WAL cannot be read. */
function walV2Requests(dirs: string | MemberDirs): { files: number; requests: Iterable<{ method: string; path: string; bytes: number }> } | { why: string } {
  const dir = walDirOf(dirs);
  if (!existsSync(dir)) return { why: `${dir} does not exist` };
  const names = readdirSync(dir)
    .filter((f) => f.endsWith('.wal'))
    .sort();
  // (the requests are few and small: collected here, so a file that cannot be read is a `why`, not a throw later)
  const out: Array<{ method: string; path: string; bytes: number }> = [];
  try {
    for (const record of walRecords(dir, names)) {
      let rec;
      try {
        rec = fields(record);
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
      if (v2) out.push(v2);
    }
  } catch (err) {
    return { why: (err as Error).message };
  }
  return { files: names.length, requests: out };
}

/** The v2 writes in a member's WAL (`dirs`: its data dir, or its data and WAL dirs); `why` when it has none or it cannot be read. */
export function walV2Bytes(dirs: string | MemberDirs, limit = Number.MAX_SAFE_INTEGER): WalV2 | { why: string } {
  const all = walV2Requests(dirs);
  if ('why' in all) return all;
  const out: WalV2 = { bytes: 0, writes: 0, files: all.files };
  for (const v2 of all.requests) {
    if (v2.method === 'PUT' || v2.method === 'POST') {
      out.bytes += v2.bytes;
      out.writes += 1;
      if (out.bytes > limit) return out;
    }
  }
  return out;
}

/** etcd's own v2 writes, which 3.6 replays: a member publishing its attributes, the cluster version (etcdutl's rule). */
const MEMBERSHIP = /^\/0\/members\/[0-9a-fA-F]{1,16}\/attributes$|^\/0\/version$/;

export interface WalV2Census {
  /** Every v2 request by method (PUT, QGET, SYNC …). */
  byMethod: Record<string, number>;
  /** Requests 3.6 refuses to replay ("custom v2 content", as etcdutl check v2store counts them): all but etcd's own PUTs. */
  custom: number;
  /** etcd's own PUTs of member attributes and the cluster version. */
  membership: number;
}

/**
 * The v2 requests of a WAL by kind, as etcdutl check v2store judges them: on 3.2-3.4 (and 3.5 with
 * the v2 API on) every /health is a QGET here; opsctl's own checks add none (a test counts them).
 */
export function walV2Census(dirs: string | MemberDirs): WalV2Census | { why: string } {
  const all = walV2Requests(dirs);
  if ('why' in all) return all;
  const out: WalV2Census = { byMethod: {}, custom: 0, membership: 0 };
  for (const r of all.requests) {
    out.byMethod[r.method] = (out.byMethod[r.method] ?? 0) + 1;
    if (r.method === 'PUT' && MEMBERSHIP.test(r.path)) out.membership += 1;
    else out.custom += 1;
  }
  return out;
}

const SNAPSHOT_RECORD = 5;

/** What 3.7 replays of a WAL: the v2 requests written as such (not wrapped in a v3 request) after its newest snapshot record. */
export interface WalV2Replay {
  /** The newest snapshot record's index (0: the WAL's first, none taken since). */
  snapshotIndex: number;
  /** v2 requests of their own (etcd's v2 PUTs of member attributes up to 3.5, 3.2's every request) after it, by method. */
  after: Record<string, number>;
  count: number;
  /** Of those, the ones 3.6 refuses to replay: all but etcd's own PUTs of member attributes and the cluster version. */
  custom: number;
}

/**
 * The v2 requests etcd 3.7 would replay from a member's WAL at its first 3.7 start. 3.7 reads every
 * normal entry after the newest snapshot record as a v3 request (etcd-io/etcd's apply.Apply) and
 * panics on a v2 Request written as such ("unmarshal should never fail (proto: cannot parse invalid
 * wire-format data)", measured on 3.7.3): every 3.5 start writes one (the member's attributes, a v2
 * PUT), so a member that took a snapshot on 3.5 and started on 3.5 after it carries them until it
 * takes a snapshot on 3.6 (snapshot-count entries later: 10,000 by default).
 */
export function walV2Replay(dirs: string | MemberDirs): WalV2Replay | { why: string } {
  const dir = walDirOf(dirs);
  if (!existsSync(dir)) return { why: `${dir} does not exist` };
  let snapshotIndex = 0;
  const direct: Array<{ index: number; method: string; path: string }> = [];
  const names = readdirSync(dir)
    .filter((f) => f.endsWith('.wal'))
    .sort();
  try {
    for (const record of walRecords(dir, names)) {
      try {
        const rec = fields(record);
        const type = rec.get(1)?.[0];
        const data = bytesOf(rec, 3);
        if (type === BigInt(SNAPSHOT_RECORD)) {
          const snap = data ? fields(data) : undefined;
          snapshotIndex = Math.max(snapshotIndex, Number(snap?.get(1)?.[0] ?? 0n));
        } else if (type === BigInt(ENTRY_RECORD) && data) {
          const ent = fields(data);
          if ((ent.get(1)?.[0] ?? 0n) !== 0n) continue; // not EntryNormal
          const payload = bytesOf(ent, 4);
          const req = payload?.length ? fields(payload) : undefined;
          const method = req ? bytesOf(req, 2)?.toString('latin1') : undefined;
          if (req && method && METHOD.test(method))
            direct.push({ index: Number(ent.get(3)?.[0] ?? 0n), method, path: bytesOf(req, 3)?.toString('utf8') ?? '' });
        }
      } catch {
        continue;
      }
    }
  } catch (err) {
    return { why: (err as Error).message };
  }
  const after: Record<string, number> = {};
  let custom = 0;
  for (const d of direct) {
    if (d.index <= snapshotIndex) continue;
    after[d.method] = (after[d.method] ?? 0) + 1;
    if (!(d.method === 'PUT' && MEMBERSHIP.test(d.path))) custom += 1;
  }
  return { snapshotIndex, after, count: Object.values(after).reduce((a, b) => a + b, 0), custom };
}
