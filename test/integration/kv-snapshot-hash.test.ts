import { execa } from 'execa';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hashWhileWritten } from '../../src/kv/snapshot/save.js';
import { checkTrailerOfFile, TrailerHasher } from '../../src/kv/snapshot/file.js';

const dir = mkdtempSync(join(tmpdir(), 'opsctl-snaphash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
/** A snapshot-like file: a body and the SHA-256 of it as the trailer (or a wrong one). */
const snapshot = (n: number, good = true) => {
  const body = randomBytes(n);
  return Buffer.concat([body, good ? createHash('sha256').update(body).digest() : randomBytes(32)]);
};

describe('snapshot hashing in one pass (the whole file and the trailer from one SHA-256 of the body)', () => {
  it('the file read from disk and the stream give the whole file hash and the trailer verdict, at every size around 32 bytes and beyond a chunk', async () => {
    for (const n of [0, 1, 31, 32, 33, 64, 1000, (1 << 20) + 17, 3 << 20]) {
      for (const file of n >= 32 ? [snapshot(n - 32), snapshot(n - 32, false)] : [randomBytes(n)]) {
        const f = join(dir, `f-${n}`);
        writeFileSync(f, file);
        const good = file.length > 32 && sha(file.subarray(0, file.length - 32)) === file.subarray(file.length - 32).toString('hex');
        const disk = await checkTrailerOfFile(f);
        expect(disk, `${n} bytes`).toMatchObject({ size: file.length, sha256: sha(file), ok: good });
        const h = new TrailerHasher();
        for (let i = 0; i < file.length; i += 7777) h.update(file.subarray(i, i + 7777));
        expect(h.finish(), `${n} bytes streamed`).toEqual(disk);
      }
    }
  });
});

describe('a snapshot hashed while etcdctl writes it (hashWhileWritten)', () => {
  it('follows the part file as it grows in pieces and is renamed at the end: the same figures as reading the finished file', async () => {
    const file = snapshot(5 << 20);
    const src = join(dir, 'src.db');
    writeFileSync(src, file);
    const out = join(dir, 'snap.db');
    const part = `${out}.part`;
    // etcdctl's way: O_TRUNC the part file, write it in pieces (here with pauses), then rename it.
    const writer = execa('sh', [
      '-c',
      `sleep 0.1; for i in 0 1 2 3 4 5; do dd if="$1" of="$2" bs=1M skip=$i seek=$i count=1 conv=notrunc status=none; sleep 0.05; done; mv "$2" "$3"`,
      'sh',
      src,
      part,
      out,
    ]);
    const got = await hashWhileWritten(part, writer);
    await writer;
    expect(got?.trailer).toEqual(await checkTrailerOfFile(out));
    expect(got?.trailer).toMatchObject({ ok: true, size: file.length, sha256: sha(file) });
  });

  it('a writer that never writes the file: undefined (the caller reads the finished file instead)', async () => {
    const writer = execa('sh', ['-c', 'sleep 0.1; exit 1'], { reject: false });
    expect(await hashWhileWritten(join(dir, 'never.part'), writer)).toBeUndefined();
  });
});
