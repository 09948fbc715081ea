import { readSync } from 'node:fs';

/**
 * A read-only, verifying walk over a bbolt database file (etcd's backend, and so an etcd snapshot),
 * reading pages from disk by offset: constant memory (a file descriptor, one page buffer, one bit
 * per page), any size. It checks what bbolt's own `Tx.Check` checks, before any figure is trusted:
 * both meta pages (magic, version, page size, FNV-64a checksum), the freelist (ids in range, sorted,
 * none twice), every branch and leaf page reachable from the newest meta (page id in its header,
 * type, element bounds, keys in order within and across pages, ids in range, no page reached twice),
 * inline buckets, and that every page is either reachable, free or a meta/freelist page.
 * Layout: go.etcd.io/bbolt page.go, bucket.go, db.go, freelist.go (little-endian).
 */

const PAGE_HEADER = 16;
const BRANCH_PAGE = 0x01;
const LEAF_PAGE = 0x02;
const META_PAGE = 0x04;
const FREELIST_PAGE = 0x10;
const ELEMENT = 16;
const BUCKET_LEAF = 0x01;
const MAGIC = 0xed0cdaed;
const VERSION = 2;
/** bbolt's pgidNoFreelist: the freelist is not stored (NoFreelistSync) and rebuilt by a scan. */
const NO_FREELIST = 0xffffffffffffffffn;
const MAX_DEPTH = 64;
/** A leaf page (with its overflow) larger than this is read an element at a time. */
const WINDOW = 64 * 1024;

export class BoltError extends Error {}

export interface BoltMeta {
  pageSize: number;
  root: bigint;
  freelist: bigint;
  /** The high-water page id: the database is pgid × pageSize bytes (bbolt's Tx.Size). */
  pgid: number;
  txid: bigint;
}

/** Called for each entry of a bucket, in key order (`kind`: a nested bucket or a value). The buffers are valid only during the call. */
export type EntryVisitor = (key: Buffer, value: Buffer, kind: 'bucket' | 'value') => void;

/** What the walk reached: page counts by kind (for the report and tests). */
export interface BoltWalkStats {
  pages: number;
  branch: number;
  leaf: number;
  overflow: number;
  free: number;
}

/** A bucket as its parent's leaf stores it: its root page, or its inline page (a copy). */
interface BucketRef {
  name: Buffer;
  root: bigint;
  inline?: Buffer;
}

/** One bucket's walk: the last key seen (keys only rise), how deep the bucket is nested, and who is told each entry. */
interface BucketWalk {
  order: { prev?: Buffer };
  bucketDepth: number;
  visit: EntryVisitor | undefined;
}

/** A leaf page on a bucket's walk: its name in errors, its branch's lower bound, and the nested buckets found on it. */
interface LeafPage {
  what: string;
  lower: Buffer | undefined;
  nested: BucketRef[];
}

const fnv64a = (buf: Buffer): bigint => {
  let h = 0xcbf29ce484222325n;
  for (const b of buf) h = BigInt.asUintN(64, (h ^ BigInt(b)) * 0x100000001b3n);
  return h;
};

/**
 * One database file read through `fd`: `dbBytes` is where the database ends (a snapshot's SHA-256
 * trailer follows it). The constructor checks the meta pages; `walk` checks everything else.
 */
export class BoltReader {
  readonly meta: BoltMeta;
  private buf = Buffer.alloc(4096);
  private visited: Uint8Array;
  readonly stats: BoltWalkStats = { pages: 0, branch: 0, leaf: 0, overflow: 0, free: 0 };

  constructor(
    private readonly fd: number,
    private readonly dbBytes: number,
  ) {
    if (dbBytes < 1024) throw new BoltError(`not a bbolt database (only ${dbBytes} bytes)`);
    const first = this.read(0, Math.min(dbBytes, 4096));
    if (first.readUInt32LE(PAGE_HEADER) !== MAGIC) throw new BoltError('not a bbolt database (no meta page magic at offset 16)');
    const pageSize = first.readUInt32LE(PAGE_HEADER + 8);
    if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) throw new BoltError(`not a bbolt database (page size ${pageSize})`);
    if (dbBytes < 2 * pageSize) throw new BoltError(`truncated: ${dbBytes} bytes cannot hold the two ${pageSize}-byte meta pages`);
    const metas = [0, 1].map((id) => this.readMeta(id, pageSize));
    const [a, b] = metas as [BoltMeta, BoltMeta];
    this.meta = a.txid >= b.txid ? a : b;
    const size = this.meta.pgid * pageSize;
    if (size > dbBytes) throw new BoltError(`truncated: the meta page's high-water mark is page ${this.meta.pgid} (${size} bytes), the file holds ${dbBytes}`);
    if (size < dbBytes) throw new BoltError(`${dbBytes - size} bytes follow the database's last page (${this.meta.pgid} pages of ${pageSize} bytes)`);
    this.visited = new Uint8Array(Math.ceil(this.meta.pgid / 8));
  }

  /** Reads `length` bytes at `offset` into the shared buffer (valid until the next read). */
  private read(offset: number, length: number): Buffer {
    if (offset + length > this.dbBytes) throw new BoltError(`a read of ${length} bytes at offset ${offset} runs past the database's end (${this.dbBytes})`);
    // grown to the largest read (a page, or one element of a large page), in 64 KiB steps
    if (this.buf.length < length) this.buf = Buffer.alloc(Math.ceil(length / 65536) * 65536);
    let got = 0;
    while (got < length) {
      const n = readSync(this.fd, this.buf, got, length - got, offset + got);
      if (n === 0) throw new BoltError(`the file ended at offset ${offset + got}, before the database did`);
      got += n;
    }
    return this.buf.subarray(0, length);
  }

  private readMeta(id: number, pageSize: number): BoltMeta {
    const p = this.read(id * pageSize, PAGE_HEADER + 64);
    const where = `meta page ${id}`;
    if (p.readBigUInt64LE(0) !== BigInt(id)) throw new BoltError(`${where}: its header names page ${p.readBigUInt64LE(0)}`);
    if (p.readUInt16LE(8) !== META_PAGE) throw new BoltError(`${where}: page type 0x${p.readUInt16LE(8).toString(16)}, not meta`);
    const m = p.subarray(PAGE_HEADER);
    if (m.readUInt32LE(0) !== MAGIC) throw new BoltError(`${where}: bad magic 0x${m.readUInt32LE(0).toString(16)}`);
    if (m.readUInt32LE(4) !== VERSION) throw new BoltError(`${where}: format version ${m.readUInt32LE(4)}, not ${VERSION}`);
    if (m.readUInt32LE(8) !== pageSize) throw new BoltError(`${where}: page size ${m.readUInt32LE(8)}, meta page 0 says ${pageSize}`);
    const sum = fnv64a(m.subarray(0, 56));
    if (sum !== m.readBigUInt64LE(56))
      throw new BoltError(`${where}: checksum mismatch (stored ${m.readBigUInt64LE(56).toString(16)}, computed ${sum.toString(16)})`);
    const pgid = m.readBigUInt64LE(40);
    if (pgid < 3n || pgid > BigInt(Math.floor(this.dbBytes / pageSize)) + 1n)
      throw new BoltError(`${where}: high-water mark ${pgid} is out of range for the file`);
    return { pageSize, root: m.readBigUInt64LE(16), freelist: m.readBigUInt64LE(32), pgid: Number(pgid), txid: m.readBigUInt64LE(48) };
  }

  /** Marks pages [id, id + count) as reached; a page reached twice or beyond the high-water mark is corruption. */
  private mark(id: number, count: number, what: string): void {
    if (!Number.isSafeInteger(id) || id < 2 || id + count > this.meta.pgid)
      throw new BoltError(`${what}: page ${id}${count > 1 ? `+${count - 1}` : ''} is outside the database (pages 2…${this.meta.pgid - 1})`);
    for (let p = id; p < id + count; p++) {
      const bit = 1 << (p & 7);
      const i = p >> 3;
      if ((this.visited[i] ?? 0) & bit) throw new BoltError(`${what}: page ${p} is reached twice`);
      this.visited[i] = (this.visited[i] ?? 0) | bit;
    }
    this.stats.pages += count;
  }

  /**
   * Checks page `id`'s header and marks it with its overflow pages as reached; returns its offset,
   * type and length in bytes. Nothing else of it is read.
   */
  private pageHead(id: bigint, what: string, types: number): { offset: number; flags: number; length: number } {
    if (id < 2n || id >= BigInt(this.meta.pgid)) throw new BoltError(`${what}: page ${id} is outside the database (pages 2…${this.meta.pgid - 1})`);
    const n = Number(id);
    const ps = this.meta.pageSize;
    const head = this.read(n * ps, PAGE_HEADER);
    if (head.readBigUInt64LE(0) !== id) throw new BoltError(`${what}: page ${id}'s header names page ${head.readBigUInt64LE(0)}`);
    const flags = head.readUInt16LE(8);
    if (!(flags & types) || flags & ~types) throw new BoltError(`${what}: page ${id} has type 0x${flags.toString(16)}, expected ${typeName(types)}`);
    const overflow = head.readUInt32LE(12);
    this.mark(n, overflow + 1, what);
    if (overflow) this.stats.overflow += overflow;
    return { offset: n * ps, flags, length: (overflow + 1) * ps };
  }

  /**
   * Walks the whole database: the freelist, then the root bucket's buckets in key order; `onBucket`
   * names each top-level bucket and returns the visitor of its entries (undefined: walked, not shown).
   * Ends with the check that every page is meta, freelist, free or reachable.
   */
  walk(onBucket: (name: Buffer) => EntryVisitor | undefined): BoltWalkStats {
    this.visited.fill(0);
    this.visited[0] = 0b11;
    const freelist = this.meta.freelist !== NO_FREELIST;
    if (freelist) this.walkFreelist();
    for (const b of this.buckets({ name: Buffer.from('(root)'), root: this.meta.root })) {
      const visit = onBucket(b.name);
      this.walkBucket(b, 1, visit);
    }
    // Without a stored freelist (NoFreelistSync), bbolt rebuilds it from the unreached pages.
    if (freelist) {
      for (let p = 2; p < this.meta.pgid; p++) {
        if (!((this.visited[p >> 3] ?? 0) & (1 << (p & 7)))) throw new BoltError(`page ${p} is neither reachable nor free (bbolt: unreachable unfreed)`);
      }
    }
    return this.stats;
  }

  /** The top-level buckets of the root bucket, in key order (copies). */
  private buckets(root: BucketRef): BucketRef[] {
    const out: BucketRef[] = [];
    this.walkBucket(root, 0, (key, value, kind) => {
      if (kind !== 'bucket') throw new BoltError(`the root bucket holds a plain key ${JSON.stringify(key.toString('latin1'))}: etcd keeps only buckets there`);
      out.push(bucketRef(Buffer.from(key), value, 'the root bucket'));
    });
    return out;
  }

  /**
   * Reads the entries of one bucket without marking its pages (a small bucket read ahead of the walk,
   * such as etcd's "meta" for its compaction revision). Copies; at most `limit` entries.
   */
  peek(name: string, limit = 1000): Array<{ key: Buffer; value: Buffer }> | undefined {
    const saved = this.visited;
    const savedStats = { ...this.stats };
    this.visited = new Uint8Array(saved.length);
    this.visited[0] = 0b11;
    try {
      const b = this.buckets({ name: Buffer.from('(root)'), root: this.meta.root }).find((x) => x.name.toString('latin1') === name);
      if (!b) return undefined;
      const out: Array<{ key: Buffer; value: Buffer }> = [];
      this.walkBucket(b, 1, (key, value) => {
        if (out.length >= limit) throw new BoltError(`bucket "${name}" holds more than ${limit} entries`);
        out.push({ key: Buffer.from(key), value: Buffer.from(value) });
      });
      return out;
    } finally {
      this.visited = saved;
      Object.assign(this.stats, savedStats);
    }
  }

  private walkFreelist(): void {
    const what = 'the freelist';
    const ps = this.meta.pageSize;
    const id = this.meta.freelist;
    if (id < 2n || id >= BigInt(this.meta.pgid)) throw new BoltError(`${what}: page ${id} is outside the database (pages 2…${this.meta.pgid - 1})`);
    const head = this.read(Number(id) * ps, PAGE_HEADER + 8);
    if (head.readBigUInt64LE(0) !== id) throw new BoltError(`${what}: page ${id}'s header names page ${head.readBigUInt64LE(0)}`);
    if (head.readUInt16LE(8) !== FREELIST_PAGE) throw new BoltError(`${what}: page ${id} has type 0x${head.readUInt16LE(8).toString(16)}, not freelist`);
    const overflow = head.readUInt32LE(12);
    let count = head.readUInt16LE(10);
    let at = Number(id) * ps + PAGE_HEADER;
    if (count === 0xffff) {
      const big = head.readBigUInt64LE(PAGE_HEADER);
      if (big > BigInt(this.meta.pgid)) throw new BoltError(`${what}: it claims ${big} free pages, the database has ${this.meta.pgid}`);
      count = Number(big);
      at += 8;
    }
    const end = (Number(id) + overflow + 1) * ps;
    if (at + count * 8 > end) throw new BoltError(`${what}: ${count} ids do not fit its ${overflow + 1} page(s)`);
    this.mark(Number(id), overflow + 1, what);
    // Read in chunks: a large database's freelist can span megabytes.
    let prev = 1;
    const chunk = 8192;
    for (let i = 0; i < count; i += chunk) {
      const n = Math.min(chunk, count - i);
      const ids = this.read(at + i * 8, n * 8);
      for (let k = 0; k < n; k++) {
        const big = ids.readBigUInt64LE(k * 8);
        if (big >= BigInt(this.meta.pgid) || big < 2n) throw new BoltError(`${what}: free page ${big} is outside the database (pages 2…${this.meta.pgid - 1})`);
        const p = Number(big);
        if (p <= prev) throw new BoltError(`${what}: free page ${p} is out of order or listed twice`);
        prev = p;
        this.mark(p, 1, `${what} (free page ${p})`);
        this.stats.free++;
      }
    }
  }

  /** Walks one bucket's pages (or inline page) in key order, calling `visit` for each leaf entry. */
  private walkBucket(b: BucketRef, depth: number, visit: EntryVisitor | undefined): void {
    const what = `bucket ${JSON.stringify(b.name.toString('latin1'))}`;
    const walk: BucketWalk = { order: { prev: undefined }, bucketDepth: depth, visit };
    if (b.inline) {
      const inline = b.inline;
      if (inline.length < PAGE_HEADER) throw new BoltError(`${what}: inline bucket of ${inline.length} bytes`);
      if (inline.readUInt16LE(8) !== LEAF_PAGE) throw new BoltError(`${what}: inline page type 0x${inline.readUInt16LE(8).toString(16)}, not leaf`);
      this.leaf(inline, what, undefined, walk);
      return;
    }
    this.walkPage(b.root, what, undefined, walk, 0);
  }

  /** A page of a bucket's tree (`lower`: its branch's bound on its keys; `depth`: how far below the bucket's root). */
  private walkPage(id: bigint, what: string, lower: Buffer | undefined, walk: BucketWalk, depth: number): void {
    if (depth > MAX_DEPTH) throw new BoltError(`${what}: the page tree is deeper than ${MAX_DEPTH} (a cycle)`);
    const at = this.pageHead(id, what, BRANCH_PAGE | LEAF_PAGE);
    if (at.flags === LEAF_PAGE) {
      this.stats.leaf++;
      // A page of large values (with its overflow, megabytes) is read an element at a time.
      if (at.length > WINDOW) this.largeLeaf(at.offset, at.length, `${what}, page ${id}`, lower, walk);
      else this.leaf(this.read(at.offset, at.length), `${what}, page ${id}`, lower, walk);
      return;
    }
    this.stats.branch++;
    const p = this.read(at.offset, at.length);
    const count = p.readUInt16LE(10);
    if (count === 0) throw new BoltError(`${what}: branch page ${id} is empty`);
    if (PAGE_HEADER + count * ELEMENT > p.length) throw new BoltError(`${what}: branch page ${id}: ${count} elements do not fit`);
    // Copied out before descending: the page buffer is reused by the children.
    const children: Array<{ key: Buffer; pgid: bigint }> = [];
    for (let i = 0; i < count; i++) {
      const e = PAGE_HEADER + i * ELEMENT;
      const pos = p.readUInt32LE(e);
      const ksize = p.readUInt32LE(e + 4);
      if (e + pos + ksize > p.length) throw new BoltError(`${what}: branch page ${id}, element ${i} points past the page`);
      const key = Buffer.from(p.subarray(e + pos, e + pos + ksize));
      const prev = children.at(-1)?.key ?? lower;
      if (prev && Buffer.compare(key, prev) < 0) throw new BoltError(`${what}: branch page ${id}, element ${i}: keys out of order`);
      children.push({ key, pgid: p.readBigUInt64LE(e + 8) });
    }
    for (const c of children) this.walkPage(c.pgid, what, c.key, walk, depth + 1);
  }

  /**
   * A leaf page read from disk an element at a time: its element table, then each element's key and
   * value (the shared buffer grows to the largest element, not the page). Same checks as `leaf`.
   */
  private largeLeaf(offset: number, length: number, what: string, lower: Buffer | undefined, walk: BucketWalk): void {
    const count = this.read(offset, PAGE_HEADER).readUInt16LE(10);
    if (PAGE_HEADER + count * ELEMENT > length) throw new BoltError(`${what}: ${count} elements do not fit the page`);
    // copied: the shared buffer is reused for each element
    const table = Buffer.from(this.read(offset + PAGE_HEADER, count * ELEMENT));
    const page: LeafPage = { what, lower, nested: [] };
    for (let i = 0; i < count; i++) {
      const e = PAGE_HEADER + i * ELEMENT;
      const t = i * ELEMENT;
      const [flags, pos, ksize, vsize] = [table.readUInt32LE(t), table.readUInt32LE(t + 4), table.readUInt32LE(t + 8), table.readUInt32LE(t + 12)];
      if (flags & ~BUCKET_LEAF) throw new BoltError(`${what}, element ${i}: unknown flags 0x${flags.toString(16)}`);
      if (e + pos + ksize + vsize > length) throw new BoltError(`${what}, element ${i} points past the page`);
      const kv = this.read(offset + e + pos, ksize + vsize);
      this.entry(kv.subarray(0, ksize), kv.subarray(ksize), flags, i, page, walk);
    }
    this.walkNested(page.nested, what, walk.bucketDepth);
  }

  private leaf(p: Buffer, what: string, lower: Buffer | undefined, walk: BucketWalk): void {
    const count = p.readUInt16LE(10);
    if (PAGE_HEADER + count * ELEMENT > p.length) throw new BoltError(`${what}: ${count} elements do not fit the page`);
    const page: LeafPage = { what, lower, nested: [] };
    for (let i = 0; i < count; i++) {
      const e = PAGE_HEADER + i * ELEMENT;
      const flags = p.readUInt32LE(e);
      const pos = p.readUInt32LE(e + 4);
      const ksize = p.readUInt32LE(e + 8);
      const vsize = p.readUInt32LE(e + 12);
      if (flags & ~BUCKET_LEAF) throw new BoltError(`${what}, element ${i}: unknown flags 0x${flags.toString(16)}`);
      if (e + pos + ksize + vsize > p.length) throw new BoltError(`${what}, element ${i} points past the page`);
      this.entry(p.subarray(e + pos, e + pos + ksize), p.subarray(e + pos + ksize, e + pos + ksize + vsize), flags, i, page, walk);
    }
    this.walkNested(page.nested, what, walk.bucketDepth);
  }

  /**
   * Leaf element `i` of a page (its `flags` say whether it is a nested bucket): its key in order and within its
   * branch's bound, visited; a nested bucket kept for after the page.
   */
  private entry(key: Buffer, value: Buffer, flags: number, i: number, page: LeafPage, walk: BucketWalk): void {
    const { what, lower } = page;
    const { order } = walk;
    const bucket = Boolean(flags & BUCKET_LEAF);
    if (order.prev && Buffer.compare(key, order.prev) <= 0) throw new BoltError(`${what}, element ${i}: keys out of order or repeated`);
    if (lower && Buffer.compare(key, lower) < 0) throw new BoltError(`${what}, element ${i}: a key below its branch's bound`);
    order.prev = Buffer.from(key);
    walk.visit?.(key, value, bucket ? 'bucket' : 'value');
    // Nested buckets (etcd has none below the top level) are walked too, after this page.
    if (bucket && walk.bucketDepth > 0) page.nested.push(bucketRef(Buffer.from(key), value, what));
  }

  private walkNested(nested: BucketRef[], what: string, bucketDepth: number): void {
    for (const b of nested) {
      if (bucketDepth >= MAX_DEPTH) throw new BoltError(`${what}: buckets nested deeper than ${MAX_DEPTH}`);
      this.walkBucket(b, bucketDepth + 1, undefined);
    }
  }
}

function bucketRef(name: Buffer, value: Buffer, what: string): BucketRef {
  if (value.length < 16) throw new BoltError(`${what}: bucket ${JSON.stringify(name.toString('latin1'))} has a ${value.length}-byte header`);
  const root = value.readBigUInt64LE(0);
  return root === 0n ? { name, root, inline: Buffer.from(value.subarray(16)) } : { name, root };
}

function typeName(types: number): string {
  const names: string[] = [];
  if (types & BRANCH_PAGE) names.push('branch');
  if (types & LEAF_PAGE) names.push('leaf');
  if (types & META_PAGE) names.push('meta');
  if (types & FREELIST_PAGE) names.push('freelist');
  return names.join(' or ');
}

/** CRC-32C tables for slicing by 8 (table k at k × 256): 8 bytes per step, ~5x the byte-wise loop. */
const CRC32C_TABLE = (() => {
  const t = new Uint32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  for (let k = 1; k < 8; k++) {
    for (let n = 0; n < 256; n++) {
      const prev = t[(k - 1) * 256 + n] ?? 0;
      t[k * 256 + n] = ((prev >>> 8) ^ (t[prev & 0xff] ?? 0)) >>> 0;
    }
  }
  return t;
})();

/** CRC-32C (Castagnoli), continued from `crc` as Go's hash/crc32 Write does. */
export function crc32c(data: Buffer, crc = 0): number {
  const t = CRC32C_TABLE;
  let c = ~crc >>> 0;
  let i = 0;
  const n = data.length;
  // (The ?? 0 are never taken: every index is within the tables and the buffer.)
  for (; i + 8 <= n; i += 8) {
    const a = (c ^ ((data[i] ?? 0) | ((data[i + 1] ?? 0) << 8) | ((data[i + 2] ?? 0) << 16) | ((data[i + 3] ?? 0) << 24))) >>> 0;
    c =
      (t[1792 + (a & 0xff)] ?? 0) ^
      (t[1536 + ((a >>> 8) & 0xff)] ?? 0) ^
      (t[1280 + ((a >>> 16) & 0xff)] ?? 0) ^
      (t[1024 + (a >>> 24)] ?? 0) ^
      (t[768 + (data[i + 4] ?? 0)] ?? 0) ^
      (t[512 + (data[i + 5] ?? 0)] ?? 0) ^
      (t[256 + (data[i + 6] ?? 0)] ?? 0) ^
      (t[data[i + 7] ?? 0] ?? 0);
  }
  for (; i < n; i++) c = (t[(c ^ (data[i] ?? 0)) & 0xff] ?? 0) ^ (c >>> 8);
  return ~c >>> 0;
}
