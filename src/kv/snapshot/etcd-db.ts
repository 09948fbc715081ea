import { closeSync, fstatSync, openSync } from 'node:fs';
import { BoltError, BoltReader, crc32c, type BoltWalkStats } from './bbolt.js';

/**
 * etcd's backend database (a snapshot without its SHA-256 trailer) read and verified page by page
 * from disk (src/kv/snapshot/bbolt.ts): the buckets etcd reads on start and restore must be there and whole,
 * every entry of the "key" bucket must be a well-formed revision with a KeyValue that agrees with it,
 * and the figures `etcdctl snapshot status` prints are computed on the way (tested equal to etcdctl's).
 */

/** What `etcdctl snapshot status` computes (etcdctl/ctlv3/command/snapshot_command.go), and more. */
export interface EtcdDbFigures {
  /** CRC-32C over each bucket's name, then each key and value, in order (uint32). */
  hash: number;
  /** The main revision of the last entry of the "key" bucket. */
  revision: string;
  /** Entries in every bucket. */
  totalKey: number;
  /** Pages in use × page size. */
  totalSize: number;
  /** Keys alive at that revision (the latest revision of each key is not a deletion). */
  liveKeys: number;
  /** The "cluster" bucket's clusterVersion, when set. */
  clusterVersion?: string;
  members: Array<{ id: string; name: string; peerURLs: string[] }>;
  /** The last completed compaction (the "meta" bucket's finishedCompactRev), "0" when none. */
  compactRevision: string;
  pages: BoltWalkStats;
}

/** The buckets etcd opens on start (mvcc and membership): without them a restore is not this data. */
export const REQUIRED_BUCKETS = ['key', 'meta', 'members', 'cluster'] as const;

/**
 * Reads and verifies the etcd database in the first `dbBytes` bytes of `file` (default: all of it).
 * `hash: false` skips etcdctl's CRC-32C (half the walk's CPU on a large file): `hash` is then 0.
 */
export function etcdDbFiguresOfFile(file: string, dbBytes?: number, o: { hash?: boolean } = {}): EtcdDbFigures {
  const fd = openSync(file, 'r');
  try {
    return etcdDbFigures(fd, dbBytes ?? fstatSync(fd).size, o);
  } finally {
    closeSync(fd);
  }
}

interface KeyValue {
  key?: Buffer;
  create: number;
  mod: number;
  version: number;
}

export function etcdDbFigures(fd: number, dbBytes: number, o: { hash?: boolean } = {}): EtcdDbFigures {
  const db = new BoltReader(fd, dbBytes);
  const crc = o.hash === false ? (_: Buffer, h: number) => h : crc32c;
  const meta = db.peek('meta');
  if (!meta) throw new BoltError('the "meta" bucket is missing (etcd keeps its consistent index and compaction revision there)');
  const compactOf = (name: string): bigint => {
    const e = meta.find((x) => x.key.toString('latin1') === name);
    if (!e) return 0n;
    if (e.value.length < 8) throw new BoltError(`"meta" bucket: ${name} is ${e.value.length} bytes, not a revision`);
    return e.value.readBigUInt64BE(0);
  };
  const finished = compactOf('finishedCompactRev');
  const scheduled = compactOf('scheduledCompactRev');
  // A compaction under way when the snapshot was taken: some old revisions are gone, some not yet, so
  // live keys are counted key by key (memory per key); otherwise from the revisions alone (constant).
  const exact = scheduled > finished ? new Map<string, boolean>() : undefined;

  let hash = 0;
  let totalKey = 0;
  let revision = 0n;
  let lastRev = -1n;
  let starts = 0;
  let tombstones = 0;
  let clusterVersion: string | undefined;
  const members: EtcdDbFigures['members'] = [];
  const seen = new Set<string>();
  const stats = db.walk((nameBuf) => {
    const name = nameBuf.toString('latin1');
    seen.add(name);
    hash = crc(nameBuf, hash);
    const count = (k: Buffer, v: Buffer) => {
      hash = crc(v, crc(k, hash));
      totalKey++;
    };
    if (name === 'key')
      return (k, v, kind) => {
        count(k, v);
        if (kind === 'bucket') throw new BoltError('"key" bucket: holds a nested bucket');
        const where = `"key" bucket, revision key ${k.toString('hex')}`;
        // Key: 8-byte main revision, '_', 8-byte sub revision, and a 't' for a deletion (tombstone).
        if ((k.length !== 17 && k.length !== 18) || k[8] !== 0x5f || (k.length === 18 && k[17] !== 0x74)) throw new BoltError(`${where}: not a revision`);
        const main = k.readBigUInt64BE(0);
        if (main < 1n || main > BigInt(Number.MAX_SAFE_INTEGER)) throw new BoltError(`${where}: revision ${main} out of range`);
        if (main < lastRev) throw new BoltError(`${where}: revisions out of order`);
        lastRev = main;
        revision = main;
        const tomb = k.length === 18;
        const kv = parseKeyValue(v, where);
        if (!kv.key?.length) throw new BoltError(`${where}: its KeyValue has no key`);
        if (tomb) {
          tombstones++;
        } else {
          if (kv.mod !== Number(main)) throw new BoltError(`${where}: its KeyValue says mod_revision ${kv.mod}`);
          if (kv.version < 1 || kv.create < 1 || kv.create > kv.mod)
            throw new BoltError(`${where}: create_revision ${kv.create}, version ${kv.version} are impossible`);
          if ((kv.version === 1) !== (kv.create === kv.mod)) throw new BoltError(`${where}: version ${kv.version} disagrees with create_revision ${kv.create}`);
          // A key's life (generation) starts at its version 1, or, compacted away, at the one
          // revision compaction keeps (at or below the compaction revision); a tombstone ends one.
          if (kv.version === 1 || BigInt(kv.mod) <= finished) starts++;
        }
        exact?.set(kv.key.toString('latin1'), tomb);
      };
    if (name === 'cluster')
      return (k, v) => {
        count(k, v);
        if (k.toString('latin1') === 'clusterVersion') {
          clusterVersion = v.toString();
          if (!/^\d+\.\d+\.\d+$/.test(clusterVersion))
            throw new BoltError(`"cluster" bucket: clusterVersion ${JSON.stringify(clusterVersion.slice(0, 40))} is not a version`);
        }
      };
    if (name === 'members')
      return (k, v) => {
        count(k, v);
        const id = k.toString('latin1');
        if (!/^[0-9a-f]{1,16}$/.test(id)) throw new BoltError(`"members" bucket: ${JSON.stringify(id.slice(0, 40))} is not a member id`);
        let m: { name?: unknown; peerURLs?: unknown };
        try {
          m = JSON.parse(v.toString()) as typeof m;
        } catch {
          throw new BoltError(`"members" bucket: member ${id}'s entry is not JSON`);
        }
        const peerURLs = Array.isArray(m.peerURLs) ? m.peerURLs.map(String) : [];
        members.push({ id: BigInt(`0x${id}`).toString(), name: typeof m.name === 'string' ? m.name : '', peerURLs });
      };
    return count;
  });
  const missing = REQUIRED_BUCKETS.filter((b) => !seen.has(b));
  if (missing.length) throw new BoltError(`the ${missing.map((b) => `"${b}"`).join(', ')} bucket${missing.length > 1 ? 's are' : ' is'} missing`);
  if (finished > revision && revision > 0n) throw new BoltError(`"meta" bucket: compacted at revision ${finished}, beyond the last revision ${revision}`);
  const liveKeys = exact ? [...exact.values()].filter((tomb) => !tomb).length : starts - tombstones;
  if (liveKeys < 0) throw new BoltError(`"key" bucket: ${tombstones} deletions of ${starts} keys`);
  return {
    hash,
    revision: revision.toString(),
    totalKey,
    totalSize: db.meta.pgid * db.meta.pageSize,
    liveKeys,
    clusterVersion,
    members,
    compactRevision: finished.toString(),
    pages: stats,
  };
}

/** mvccpb.KeyValue: 1 key, 2 create_revision, 3 mod_revision, 4 version, 5 value, 6 lease. Strict. */
function parseKeyValue(v: Buffer, where: string): KeyValue {
  const out: KeyValue = { create: 0, mod: 0, version: 0 };
  let i = 0;
  const varint = (): number => {
    let n = 0;
    for (let shift = 0; shift < 64; shift += 7) {
      if (i >= v.length) throw new BoltError(`${where}: its KeyValue ends inside a number`);
      const b = v[i++] ?? 0;
      n += (b & 0x7f) * 2 ** shift;
      if (!(b & 0x80)) return n;
    }
    throw new BoltError(`${where}: its KeyValue has a number longer than 10 bytes`);
  };
  while (i < v.length) {
    const tag = varint();
    const field = Math.floor(tag / 8);
    const wire = tag & 7;
    if (wire === 0) {
      const n = varint();
      if (field === 2) out.create = n;
      else if (field === 3) out.mod = n;
      else if (field === 4) out.version = n;
      else if (field !== 6) throw new BoltError(`${where}: its KeyValue has an unknown number field ${field}`);
    } else if (wire === 2) {
      const len = varint();
      if (i + len > v.length) throw new BoltError(`${where}: its KeyValue's field ${field} runs past the value`);
      if (field === 1) out.key = v.subarray(i, i + len);
      else if (field !== 5) throw new BoltError(`${where}: its KeyValue has an unknown field ${field}`);
      i += len;
    } else throw new BoltError(`${where}: its KeyValue has wire type ${wire} (field ${field})`);
  }
  return out;
}
