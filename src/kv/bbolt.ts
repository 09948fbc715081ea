/**
 * A read-only walk over a bbolt database file (etcd's backend, and so an etcd snapshot): the meta
 * page with the highest transaction id gives the root bucket; branch and leaf pages, inline buckets
 * and overflow pages (contiguous, so read in place) are followed. Layout: go.etcd.io/bbolt page.go,
 * bucket.go, db.go (page header: id u64, flags u16, count u16, overflow u32; little-endian).
 */

const PAGE_HEADER = 16;
const BRANCH_PAGE = 0x01;
const LEAF_PAGE = 0x02;
const ELEMENT = 16;
const BUCKET_LEAF = 0x01;
const MAGIC = 0xed0cdaed;

export class BoltError extends Error {}

export interface BoltEntry {
  key: Buffer;
  value: Buffer;
  bucket: boolean;
}

export class BoltFile {
  private readonly pageSize: number;
  private readonly rootPage: bigint;
  /** The high-water page id: the database's size is pgid × page size (bbolt's Tx.Size). */
  readonly size: number;

  constructor(private readonly buf: Buffer) {
    if (buf.length < 2 * PAGE_HEADER + 64 || buf.readUInt32LE(PAGE_HEADER) !== MAGIC) throw new BoltError('not a bbolt database (no meta page magic)');
    this.pageSize = buf.readUInt32LE(PAGE_HEADER + 8);
    if (this.pageSize < 512 || this.pageSize > 65536 || buf.length < 2 * this.pageSize)
      throw new BoltError(`not a bbolt database (page size ${this.pageSize})`);
    // Meta: magic u32, version u32, pageSize u32, flags u32, root {pgid u64, seq u64}, freelist u64, pgid u64, txid u64.
    const meta = (page: number) => {
      const m = page * this.pageSize + PAGE_HEADER;
      return { magic: buf.readUInt32LE(m), root: buf.readBigUInt64LE(m + 16), pgid: buf.readBigUInt64LE(m + 40), txid: buf.readBigUInt64LE(m + 48) };
    };
    const metas = [meta(0), meta(1)].filter((m) => m.magic === MAGIC).sort((a, b) => (a.txid > b.txid ? -1 : 1));
    const [newest] = metas;
    if (!newest) throw new BoltError('not a bbolt database (no valid meta page)');
    this.rootPage = newest.root;
    this.size = Number(newest.pgid) * this.pageSize;
  }

  /** The top-level buckets, in key order (as bbolt's cursor gives them). */
  buckets(): BoltEntry[] {
    return this.entries(this.buf, Number(this.rootPage) * this.pageSize).filter((e) => e.bucket);
  }

  /** The entries of a bucket (top-level by name), in key order; undefined when there is no such bucket. */
  bucket(name: string): BoltEntry[] | undefined {
    const hit = this.buckets().find((e) => e.key.toString() === name);
    return hit ? this.contents(hit) : undefined;
  }

  /** The entries of a bucket entry of the root. */
  contents(hit: BoltEntry): BoltEntry[] {
    const root = hit.value.readBigUInt64LE(0);
    // An inline bucket: its page follows the 16-byte bucket header inside the value.
    return root === 0n ? this.entries(hit.value, 16) : this.entries(this.buf, Number(root) * this.pageSize);
  }

  private entries(buf: Buffer, off: number, depth = 0): BoltEntry[] {
    if (depth > 64 || off + PAGE_HEADER > buf.length) throw new BoltError('corrupt bbolt page reference');
    const flags = buf.readUInt16LE(off + 8);
    const count = buf.readUInt16LE(off + 10);
    const out: BoltEntry[] = [];
    for (let i = 0; i < count; i++) {
      const e = off + PAGE_HEADER + i * ELEMENT;
      if (flags & LEAF_PAGE) {
        const [f, pos, ksize, vsize] = [buf.readUInt32LE(e), buf.readUInt32LE(e + 4), buf.readUInt32LE(e + 8), buf.readUInt32LE(e + 12)];
        const k = e + pos;
        if (k + ksize + vsize > buf.length) throw new BoltError('corrupt bbolt leaf element');
        out.push({ key: buf.subarray(k, k + ksize), value: buf.subarray(k + ksize, k + ksize + vsize), bucket: Boolean(f & BUCKET_LEAF) });
      } else if (flags & BRANCH_PAGE) {
        const pgid = buf.readBigUInt64LE(e + 8);
        out.push(...this.entries(this.buf, Number(pgid) * this.pageSize, depth + 1));
      } else throw new BoltError(`unexpected bbolt page type ${flags}`);
    }
    return out;
  }
}

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
}

export function etcdDbFigures(buf: Buffer): EtcdDbFigures {
  const db = new BoltFile(buf);
  let hash = 0;
  let totalKey = 0;
  let revision = 0n;
  let liveKeys = 0;
  let clusterVersion: string | undefined;
  let members: EtcdDbFigures['members'] = [];
  for (const b of db.buckets()) {
    hash = crc32c(b.key, hash);
    const name = b.key.toString();
    const entries = db.contents(b);
    for (const e of entries) {
      hash = crc32c(e.value, crc32c(e.key, hash));
      totalKey++;
    }
    if (name === 'key') {
      const latest = new Map<string, boolean>();
      for (const e of entries) {
        // Key: 8-byte main revision, '_', 8-byte sub revision, and a 't' for a deletion (tombstone).
        if (e.key.length >= 8) revision = e.key.readBigUInt64BE(0);
        latest.set(protoKey(e.value).toString('latin1'), e.key.length === 18 && e.key[17] === 0x74);
      }
      liveKeys = [...latest.values()].filter((tomb) => !tomb).length;
    } else if (name === 'cluster') {
      clusterVersion = entries.find((e) => e.key.toString() === 'clusterVersion')?.value.toString();
    } else if (name === 'members') {
      members = entries.map((e) => {
        const m = JSON.parse(e.value.toString()) as { name?: string; peerURLs?: string[] };
        return { id: BigInt(`0x${e.key.toString()}`).toString(), name: m.name ?? '', peerURLs: m.peerURLs ?? [] };
      });
    }
  }
  return { hash, revision: revision.toString(), totalKey, totalSize: db.size, liveKeys, clusterVersion, members };
}

/** Field 1 (key, bytes) of an mvccpb.KeyValue. */
function protoKey(v: Buffer): Buffer {
  // A varint cut short by the end of the value reads its missing bytes as 0 (ending it), as it always has.
  const byteAt = (at: number) => v[at] ?? 0;
  let i = 0;
  while (i < v.length) {
    const tag = byteAt(i++);
    const field = tag >> 3;
    const wire = tag & 7;
    if (wire === 0) {
      while (byteAt(i++) & 0x80);
      continue;
    }
    if (wire !== 2) break;
    let len = 0;
    for (let shift = 0; ; shift += 7) {
      const b = byteAt(i++);
      len += (b & 0x7f) * 2 ** shift;
      if (!(b & 0x80)) break;
    }
    if (field === 1) return v.subarray(i, i + len);
    i += len;
  }
  throw new BoltError('an entry of the "key" bucket has no key');
}

const CRC32C_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32C (Castagnoli), continued from `crc` as Go's hash/crc32 Write does. */
export function crc32c(data: Buffer, crc = 0): number {
  let c = ~crc >>> 0;
  // (?? 0 is never taken: & 0xff is an index of the 256-entry table.)
  for (const b of data) c = (CRC32C_TABLE[(c ^ b) & 0xff] ?? 0) ^ (c >>> 8);
  return ~c >>> 0;
}
