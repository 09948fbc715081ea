import { varint } from '../helpers/wal-bytes.js';
import { createHash } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { requireProgram } from '../helpers/e2e.js';

/**
 * A generated etcd database of 2.5 GiB (sparse: a freelist of 655k pages, the "key" bucket's leaf at
 * the very end, past 2 GiB) with its SHA-256 trailer: `kv snapshot status` (the built binary) reads
 * it from disk page by page. The old reader read whole files into memory and failed on any file over
 * 2 GiB ("File size … is greater than 2 GiB"); the bar is a peak RSS under 100 MB.
 */
const PAGE = 4096;
const SIZE = 2.5 * 1024 ** 3;
const N = SIZE / PAGE;
const hasTime = requireProgram('GNU time (Debian: time), for the peak RSS', '/usr/bin/time');

const fnv64a = (buf: Buffer): bigint => {
  let h = 0xcbf29ce484222325n;
  for (const b of buf) h = BigInt.asUintN(64, (h ^ BigInt(b)) * 0x100000001b3n);
  return h;
};

/** A varint-tagged mvccpb.KeyValue. */
function keyValue(key: string, create: number, mod: number, version: number, value?: string): Buffer {
  const parts = [Buffer.from([0x0a]), varint(key.length), Buffer.from(key)];
  if (version) parts.push(Buffer.from([0x10]), varint(create), Buffer.from([0x18]), varint(mod), Buffer.from([0x20]), varint(version));
  if (value !== undefined) parts.push(Buffer.from([0x2a]), varint(value.length), Buffer.from(value));
  return Buffer.concat(parts);
}

/** A leaf page (id, entries in key order; flags 1 = a bucket). */
function leaf(id: number, entries: Array<{ k: Buffer; v: Buffer; bucket?: boolean }>, size = PAGE): Buffer {
  const p = Buffer.alloc(PAGE);
  p.writeBigUInt64LE(BigInt(id), 0);
  p.writeUInt16LE(0x02, 8);
  p.writeUInt16LE(entries.length, 10);
  let data = 16 + entries.length * 16;
  entries.forEach((e, i) => {
    const el = 16 + i * 16;
    p.writeUInt32LE(e.bucket ? 1 : 0, el);
    p.writeUInt32LE(data - el, el + 4);
    p.writeUInt32LE(e.k.length, el + 8);
    p.writeUInt32LE(e.v.length, el + 12);
    e.k.copy(p, data);
    e.v.copy(p, data + e.k.length);
    data += e.k.length + e.v.length;
  });
  return p.subarray(0, size === PAGE ? PAGE : data);
}

/** An inline bucket's value: a 16-byte header (root 0) and its leaf page. */
const inline = (entries: Array<{ k: Buffer; v: Buffer }>) => Buffer.concat([Buffer.alloc(16), leaf(0, entries, 0)]);

function rev(main: number, tomb = false): Buffer {
  const b = Buffer.alloc(tomb ? 18 : 17);
  b.writeBigUInt64BE(BigInt(main), 0);
  b[8] = 0x5f;
  if (tomb) b[17] = 0x74;
  return b;
}

/** Writes the database and its trailer; returns the figures it holds. */
function generate(file: string): void {
  const fd = openSync(file, 'w+');
  try {
    // Free pages: all but the metas, the freelist's own pages, the root leaf and the key leaf (the last page).
    let fp = 1;
    for (;;) {
      const free = N - 2 - fp - 2;
      const need = Math.ceil((24 + 8 * free) / PAGE);
      if (need === fp) break;
      fp = need;
    }
    const root = 2 + fp;
    const keyPage = N - 1;
    const free = N - 2 - fp - 2;
    const fl = Buffer.alloc(fp * PAGE);
    fl.writeBigUInt64LE(2n, 0);
    fl.writeUInt16LE(0x10, 8);
    fl.writeUInt16LE(0xffff, 10);
    fl.writeUInt32LE(fp - 1, 12);
    fl.writeBigUInt64LE(BigInt(free), 16);
    for (let i = 0; i < free; i++) fl.writeBigUInt64LE(BigInt(root + 1 + i), 24 + i * 8);
    writeSync(fd, fl, 0, fl.length, 2 * PAGE);
    const bucketHeader = (pg: number) => {
      const b = Buffer.alloc(16);
      b.writeBigUInt64LE(BigInt(pg), 0);
      return b;
    };
    const rootLeaf = leaf(root, [
      { k: Buffer.from('cluster'), v: inline([{ k: Buffer.from('clusterVersion'), v: Buffer.from('3.3.0') }]), bucket: true },
      { k: Buffer.from('key'), v: bucketHeader(keyPage), bucket: true },
      {
        k: Buffer.from('members'),
        v: inline([{ k: Buffer.from('1'), v: Buffer.from('{"id":1,"peerURLs":["http://127.0.0.1:2380"],"name":"n1"}') }]),
        bucket: true,
      },
      { k: Buffer.from('meta'), v: inline([{ k: Buffer.from('consistent_index'), v: Buffer.alloc(8, 0) }]), bucket: true },
    ]);
    writeSync(fd, rootLeaf, 0, PAGE, root * PAGE);
    const keys = leaf(keyPage, [
      { k: rev(2), v: keyValue('a', 2, 2, 1, 'x') },
      { k: rev(3), v: keyValue('b', 3, 3, 1, 'y') },
      { k: rev(4), v: keyValue('a', 2, 4, 2, 'z') },
      { k: rev(5, true), v: keyValue('b', 0, 0, 0) },
    ]);
    writeSync(fd, keys, 0, PAGE, keyPage * PAGE);
    for (const [id, txid] of [
      [0, 1],
      [1, 2],
    ] as const) {
      const p = Buffer.alloc(PAGE);
      p.writeBigUInt64LE(BigInt(id), 0);
      p.writeUInt16LE(0x04, 8);
      const m = p.subarray(16);
      m.writeUInt32LE(0xed0cdaed, 0);
      m.writeUInt32LE(2, 4);
      m.writeUInt32LE(PAGE, 8);
      m.writeBigUInt64LE(BigInt(root), 16);
      m.writeBigUInt64LE(2n, 32);
      m.writeBigUInt64LE(BigInt(N), 40);
      m.writeBigUInt64LE(BigInt(txid), 48);
      m.writeBigUInt64LE(fnv64a(m.subarray(0, 56)), 56);
      writeSync(fd, p, 0, PAGE, id * PAGE);
    }
    // The trailer: SHA-256 of the whole database, read back in 1 MiB steps (the holes read as zeros).
    const h = createHash('sha256');
    const buf = Buffer.alloc(1 << 20);
    for (let pos = 0; pos < SIZE; pos += buf.length) h.update(buf.subarray(0, readSync(fd, buf, 0, buf.length, pos)));
    writeSync(fd, h.digest(), 0, 32, SIZE);
  } finally {
    closeSync(fd);
  }
}

describe.runIf(hasTime)('kv snapshot status on a 2.5 GiB database (generated, sparse)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'opsctl-snap-large-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads it from disk page by page: right figures, the key leaf past 2 GiB reached, peak RSS under 100 MB; a flipped byte there is found', async () => {
    const file = join(dir, 'large.db');
    generate(file);
    const run = () =>
      execa('/usr/bin/time', ['-f', 'maxrss_kb=%M', process.execPath, BIN, 'kv', 'snapshot', 'status', file, '--no-etcdctl', '--json'], {
        reject: false,
        env: { NO_COLOR: '1', OPSCTL_CONFIG_DIR: join(dir, 'cfg') },
        timeout: 600_000,
      });
    const r = await run();
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const s = JSON.parse(String(r.stdout));
    expect(s).toMatchObject({ revision: '5', liveKeys: 1, totalKey: 7, totalSize: SIZE, clusterVersion: '3.3.0', kind: 'etcd' });
    expect(s.members).toEqual([{ id: '1', name: 'n1', peerURLs: ['http://127.0.0.1:2380'] }]);
    const rss = Number(/maxrss_kb=(\d+)/.exec(String(r.stderr))?.[1]);
    process.stderr.write(`kv snapshot status of a ${SIZE} byte database: peak RSS ${Math.round(rss / 1024)} MB\n`);
    expect(rss).toBeGreaterThan(0);
    expect(rss).toBeLessThan(100 * 1024);

    // The version of "a" at revision 4 rewritten as 1: the revisions disagree; the trailer recomputed.
    const fd = openSync(file, 'r+');
    const page = Buffer.alloc(PAGE);
    readSync(fd, page, 0, PAGE, SIZE - PAGE);
    const at = page.indexOf(Buffer.from([0x20, 0x02]));
    page[at + 1] = 0x01;
    writeSync(fd, page, 0, PAGE, SIZE - PAGE);
    const h = createHash('sha256');
    const buf = Buffer.alloc(1 << 20);
    for (let pos = 0; pos < SIZE; pos += buf.length) h.update(buf.subarray(0, readSync(fd, buf, 0, buf.length, pos)));
    writeSync(fd, h.digest(), 0, 32, SIZE);
    closeSync(fd);
    const bad = await run();
    expect(bad.exitCode).toBe(1);
    expect(String(bad.stderr)).toMatch(/is not an etcd database: .{0,2}key.{0,2} bucket, revision key 0+45f0+: version 1 disagrees with create_revision 2/);
  }, 600_000);
});
