import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { compareChecksum, composite, crc32c, fileDigests, hasher, readChecksum, type ChecksumAlgorithm, type Digests } from '../../src/kv/offsite/checksum.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest();
const b64 = (b: Buffer) => b.toString('base64');

/** Two parts of 5 and 3 bytes, digested as an upload would. */
function sent(algorithm: ChecksumAlgorithm, parts: Buffer[]): Digests {
  return { parts: parts.map((p) => hasher(algorithm).update(p).digest()), full: hasher(algorithm).update(Buffer.concat(parts)).digest() };
}

describe("a store's checksum read and compared as a value (composite with or without -N, full-object; SHA-256, SHA-1, CRC32, CRC32C)", () => {
  const parts = [Buffer.from('hello'), Buffer.from('abc')];
  const digests = { SHA256: sent('SHA256', parts) };
  const comp = composite('SHA256', digests.SHA256.parts);

  it('CRC-32C is the Castagnoli CRC (RFC 3720 test vectors); CRC-32 is zlib’s', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
    expect(crc32c(Buffer.alloc(32))).toBe(0x8a9136aa);
    expect(crc32c(Buffer.alloc(32, 0xff))).toBe(0x62a8ab43);
    // incremental: the same value whatever the cut
    expect(crc32c(Buffer.from('56789'), crc32c(Buffer.from('1234')))).toBe(0xe3069283);
    expect(hasher('CRC32').update(Buffer.from('hello')).digest().readUInt32BE()).toBe(crc32('hello'));
  });

  it('AWS form: the composite with its -N suffix matches', () => {
    const got = readChecksum({ ChecksumSHA256: `${b64(comp)}-2`, ChecksumType: 'COMPOSITE' });
    expect(got).toMatchObject({ algorithm: 'SHA256', parts: 2, type: 'COMPOSITE' });
    expect(compareChecksum(got as never, digests)).toEqual({ verdict: 'match', form: 'COMPOSITE' });
  });

  it("moto's form: the same composite without the suffix matches (it was refused as a string)", () => {
    const got = readChecksum({ ChecksumSHA256: b64(comp) });
    expect(compareChecksum(got as never, digests)).toEqual({ verdict: 'match', form: 'COMPOSITE' });
  });

  it('a full-object value matches, said or not', () => {
    expect(compareChecksum(readChecksum({ ChecksumSHA256: b64(sha(Buffer.from('helloabc'))), ChecksumType: 'FULL_OBJECT' }) as never, digests)).toEqual({
      verdict: 'match',
      form: 'FULL_OBJECT',
    });
    expect(compareChecksum(readChecksum({ ChecksumSHA256: b64(sha(Buffer.from('helloabc'))) }) as never, digests)).toEqual({
      verdict: 'match',
      form: 'FULL_OBJECT',
    });
  });

  it('another value, or another part count, differs (and says how)', () => {
    const other = readChecksum({ ChecksumSHA256: `${b64(sha(Buffer.from('x')))}-2` });
    expect(compareChecksum(other as never, digests)).toMatchObject({
      verdict: 'differs',
      why: expect.stringContaining('is not the composite value') as unknown,
    });
    expect(compareChecksum(readChecksum({ ChecksumSHA256: `${b64(comp)}-3` }) as never, digests)).toMatchObject({
      verdict: 'differs',
      why: "the store's SHA256 checksum counts 3 parts, 2 were sent",
    });
    // a composite value claimed to be a full-object one is not taken
    expect(compareChecksum(readChecksum({ ChecksumSHA256: b64(comp), ChecksumType: 'FULL_OBJECT' }) as never, digests).verdict).toBe('differs');
  });

  it.each(['CRC32', 'CRC32C', 'SHA1'] as const)('%s: composite and full-object values compared once its digests are computed', (algorithm) => {
    const d = sent(algorithm, parts);
    const field = { CRC32: 'ChecksumCRC32', CRC32C: 'ChecksumCRC32C', SHA1: 'ChecksumSHA1' }[algorithm];
    const c = readChecksum({ [field]: `${b64(composite(algorithm, d.parts))}-2` });
    expect(compareChecksum(c as never, { [algorithm]: d })).toEqual({ verdict: 'match', form: 'COMPOSITE' });
    const f = readChecksum({ [field]: b64(d.full), ChecksumType: 'FULL_OBJECT' });
    expect(compareChecksum(f as never, { [algorithm]: d })).toEqual({ verdict: 'match', form: 'FULL_OBJECT' });
    // not computed: unknown, for the read-back to decide (never a refusal)
    expect(compareChecksum(c as never, digests).verdict).toBe('unknown');
  });

  it('none, an algorithm not computed here, and forms that are not digests', () => {
    expect(readChecksum({})).toBeUndefined();
    expect(readChecksum({ ChecksumCRC64NVME: b64(Buffer.alloc(8, 1)) })).toMatchObject({ algorithm: 'CRC64NVME' });
    expect(compareChecksum(readChecksum({ ChecksumCRC64NVME: b64(Buffer.alloc(8, 1)) }) as never, digests).verdict).toBe('unknown');
    expect(readChecksum({ ChecksumSHA256: 'not base64!' })).toEqual({ unreadable: 'SHA256 "not base64!"' });
    expect(readChecksum({ ChecksumSHA256: b64(Buffer.alloc(20)) })).toMatchObject({ unreadable: expect.stringContaining('SHA256') as unknown });
    expect(readChecksum({ ChecksumCRC32: `${b64(Buffer.alloc(4))}-x` })).toMatchObject({ unreadable: expect.stringContaining('CRC32') as unknown });
  });

  const dir = mkdtempSync(join(tmpdir(), 'opsctl-checksum-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['two parts and a bit', 2 * 1024 * 1024 + 7],
    ['exactly two parts', 2 * 1024 * 1024],
    ['nothing', 0],
  ])('from the local file, cut as the upload cut it: %s', async (_name, size) => {
    const data = randomBytes(size);
    const file = join(dir, `f-${size}`);
    writeFileSync(file, data);
    const partBytes = 1024 * 1024;
    const cuts: Buffer[] = [];
    for (let at = 0; at < size; at += partBytes) cuts.push(data.subarray(at, at + partBytes));
    if (!cuts.length) cuts.push(Buffer.alloc(0));
    for (const algorithm of ['CRC32C', 'SHA1'] as const) {
      const d = await fileDigests(file, algorithm, partBytes);
      expect(d).toEqual(sent(algorithm, cuts));
    }
  });
});
