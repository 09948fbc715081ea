/**
 * The records of a member's WAL files, in order, each file read a chunk at a time up to its end: a WAL
 * segment is preallocated (64 MB) and a zero frame ends what was written, so a member that wrote 20 KB
 * costs 1 MiB of reads, not 64 MiB per segment (the just-in-time check runs between a member's stop and
 * its start, while the cluster is one member short). A torn tail (a record past the file's end) ends the
 * file: what was read before it counts.
 *
 * The framing (etcd's wal/encoder.go): a little-endian uint64 whose low 56 bits are the record's length
 * and whose top byte, when its high bit is set, gives the padding after it.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';

const CHUNK = 1024 * 1024;

/** Each record's bytes (a walpb.Record) of the files `names` of `dir`, in order; throws naming the file it could not read. */
export function* walRecords(dir: string, names: readonly string[]): Generator<Buffer> {
  for (const name of names) {
    const file = join(dir, name);
    let fd: number;
    try {
      fd = openSync(file, 'r');
    } catch (err) {
      throw new Error(`${file}: ${(err as Error).message}`);
    }
    try {
      yield* fileRecords(fd, file);
    } finally {
      closeSync(fd);
    }
  }
}

/** A frame's length word: the record's length (its low 56 bits) and the padding after it (its top byte, when its high bit is set). */
function frameOf(lenField: bigint): { len: number; pad: number } {
  const top = Number(lenField >> 56n);
  return { len: Number(lenField & 0x00ffffffffffffffn), pad: top & 0x80 ? top & 0x7 : 0 };
}

function* fileRecords(fd: number, file: string): Generator<Buffer> {
  // (`buf` holds the unread bytes from `off`; more is read, and the read part dropped, only when a frame needs it)
  let buf = Buffer.alloc(0);
  let off = 0;
  let pos = 0;
  let eof = false;
  const fileSize = fstatSync(fd).size;
  const have = (n: number): boolean => {
    if (off + n <= buf.length) return true;
    // (a frame longer than what the file still holds: a torn tail, or a length no record has; nothing allocated for it)
    if (n - (buf.length - off) > fileSize - pos) return false;
    // one new buffer for the unread rest and what is read next: the rest copied once, the file read straight into it
    // (a record larger than a chunk gets a buffer of its size; the old buffer is never written: records are views of it)
    const next = Buffer.allocUnsafe(Math.max(CHUNK, n));
    let size = buf.copy(next, 0, off);
    while (size < n && !eof) {
      let got: number;
      try {
        got = readSync(fd, next, size, next.length - size, pos);
      } catch (err) {
        throw new Error(`${file}: ${(err as Error).message}`);
      }
      if (got === 0) eof = true;
      pos += got;
      size += got;
    }
    buf = next.subarray(0, size);
    off = 0;
    return n <= size;
  };
  while (have(8)) {
    const lenField = buf.readBigUInt64LE(off);
    if (lenField === 0n) return;
    const { len, pad } = frameOf(lenField);
    if (!have(8 + len)) return;
    const start = off + 8;
    // (a view: a later read makes a new buffer, never writes this one)
    yield buf.subarray(start, start + len);
    off = start + len;
    if (pad && !have(pad)) return;
    off += pad;
  }
}

/**
 * Where the records of a WAL segment end: the offset of its zero frame (etcd preallocates the rest), the
 * file's size when a record fills it to the end, or undefined where its frames do not end inside it (a torn
 * tail, a length no record has: then every byte of it counts). Reads a chunk from each frame's header as
 * needed: a segment's records, never its preallocated zeros.
 */
export function recordsEnd(fd: number, size: number): number | undefined {
  const buf = Buffer.allocUnsafe(CHUNK);
  // (buf holds `have` bytes of the file from `at`)
  let at = 0;
  let have = 0;
  let off = 0;
  while (off + 8 <= size) {
    if (off + 8 > at + have) {
      at = off;
      have = readSync(fd, buf, 0, Math.min(CHUNK, size - off), off);
      if (have < 8) return undefined;
    }
    const lenField = buf.readBigUInt64LE(off - at);
    if (lenField === 0n) return off;
    const { len, pad } = frameOf(lenField);
    off += 8 + len + pad;
  }
  return off === size ? size : undefined;
}
