import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { crc32 } from 'node:zlib';

/**
 * The checksums an S3 store may give for an object (HEAD with x-amz-checksum-mode: ENABLED), read as
 * values: the S3 API's algorithms, each a base64 digest, for a multipart object either COMPOSITE (the
 * digest of the parts' digests, AWS writing `-<parts>` after it; moto and others leave it off) or
 * FULL_OBJECT (the digest of every byte). The store decides the form; opsctl compares the value it can
 * compute for that form, and leaves the rest to a read-back.
 */
export type ChecksumAlgorithm = 'CRC32' | 'CRC32C' | 'SHA1' | 'SHA256' | 'CRC64NVME';

/** Digest length per algorithm: a value of another length is not one of them. */
const DIGEST_BYTES: Record<ChecksumAlgorithm, number> = { CRC32: 4, CRC32C: 4, SHA1: 20, SHA256: 32, CRC64NVME: 8 };
/** Those opsctl computes (CRC64NVME is left to the read-back). */
export const COMPUTED: readonly ChecksumAlgorithm[] = ['SHA256', 'SHA1', 'CRC32', 'CRC32C'];

/** One checksum as the store gave it. */
export interface StoreChecksum {
  algorithm: ChecksumAlgorithm;
  /** The header's text as given (suffix included): what a later look compares with, whatever its form. */
  raw: string;
  digest: Buffer;
  /** The `-<parts>` suffix, when the store wrote one. */
  parts?: number;
  /** x-amz-checksum-type, when the store said. */
  type?: 'COMPOSITE' | 'FULL_OBJECT';
}

/** The checksum fields of a HEAD or CompleteMultipartUpload answer (the SDK's names). */
export interface ChecksumFields {
  ChecksumCRC32?: string;
  ChecksumCRC32C?: string;
  ChecksumSHA1?: string;
  ChecksumSHA256?: string;
  ChecksumCRC64NVME?: string;
  ChecksumType?: string;
}

const FIELD: Record<ChecksumAlgorithm, keyof ChecksumFields> = {
  SHA256: 'ChecksumSHA256',
  SHA1: 'ChecksumSHA1',
  CRC32C: 'ChecksumCRC32C',
  CRC32: 'ChecksumCRC32',
  CRC64NVME: 'ChecksumCRC64NVME',
};

/**
 * The checksum an answer carries (the strongest, when it gives several): undefined when it gives none,
 * `{ unreadable }` when the value is not a digest of its algorithm (a form this code does not know).
 */
export function readChecksum(h: ChecksumFields): StoreChecksum | { unreadable: string } | undefined {
  for (const algorithm of Object.keys(FIELD) as ChecksumAlgorithm[]) {
    const raw = h[FIELD[algorithm]];
    if (raw === undefined || raw === '') continue;
    const m = /^([A-Za-z0-9+/]+={0,2})(?:-(\d{1,5}))?$/.exec(raw.trim());
    const digest = m ? Buffer.from(m[1]!, 'base64') : Buffer.alloc(0);
    if (!m || digest.length !== DIGEST_BYTES[algorithm]) return { unreadable: `${algorithm} "${raw.slice(0, 80)}"` };
    const type = h.ChecksumType === 'COMPOSITE' || h.ChecksumType === 'FULL_OBJECT' ? h.ChecksumType : undefined;
    return { algorithm, raw: raw.trim(), digest, ...(m[2] !== undefined ? { parts: Number(m[2]) } : {}), ...(type ? { type } : {}) };
  }
  return undefined;
}

/** What one upload's bytes hash to in one algorithm: each part's digest, and every byte's. */
export interface Digests {
  parts: Buffer[];
  full: Buffer;
}

/** The composite value of those part digests: the algorithm over their concatenation. */
export function composite(algorithm: ChecksumAlgorithm, parts: Buffer[]): Buffer {
  return hasher(algorithm).update(Buffer.concat(parts)).digest();
}

/**
 * The store's checksum compared as a value with what was sent: 'match' names the form that matched,
 * 'differs' says how, and 'unknown' an algorithm whose digests are not at hand (a read-back decides).
 */
export function compareChecksum(
  got: StoreChecksum,
  sent: Partial<Record<ChecksumAlgorithm, Digests>>,
): { verdict: 'match'; form: 'COMPOSITE' | 'FULL_OBJECT' } | { verdict: 'differs'; why: string } | { verdict: 'unknown'; why: string } {
  const d = sent[got.algorithm];
  if (!d) return { verdict: 'unknown', why: `the store gives a ${got.algorithm} checksum, which opsctl does not compute` };
  const forms: Array<'COMPOSITE' | 'FULL_OBJECT'> = got.type ? [got.type] : got.parts !== undefined ? ['COMPOSITE'] : ['COMPOSITE', 'FULL_OBJECT'];
  if (got.parts !== undefined && got.parts !== d.parts.length)
    return { verdict: 'differs', why: `the store's ${got.algorithm} checksum counts ${got.parts} parts, ${d.parts.length} were sent` };
  for (const form of forms) {
    const want = form === 'COMPOSITE' ? composite(got.algorithm, d.parts) : d.full;
    if (want.equals(got.digest)) return { verdict: 'match', form };
  }
  return {
    verdict: 'differs',
    why: `the store's ${got.algorithm} checksum ${got.raw} is not the ${forms.join(' or ').toLowerCase().replace('_', '-')} value of the bytes sent`,
  };
}

/** A hash of one algorithm, incremental (CRCs as 4 big-endian bytes, as S3 writes them). */
export interface Hasher {
  update(b: Buffer): Hasher;
  digest(): Buffer;
}

export function hasher(algorithm: ChecksumAlgorithm): Hasher {
  if (algorithm === 'SHA256' || algorithm === 'SHA1') return createHash(algorithm === 'SHA256' ? 'sha256' : 'sha1');
  if (algorithm === 'CRC32') return crcHasher((b, v) => crc32(b, v));
  if (algorithm === 'CRC32C') return crcHasher(crc32c);
  throw new Error(`no ${algorithm} here`);
}

function crcHasher(f: (b: Buffer, v: number) => number): Hasher {
  let v = 0;
  const h: Hasher = {
    update: (b) => ((v = f(b, v)), h),
    digest: () => {
      const out = Buffer.alloc(4);
      out.writeUInt32BE(v >>> 0);
      return out;
    },
  };
  return h;
}

/** CRC-32C (Castagnoli, reflected 0x82F63B78): Node has CRC-32 only. Used when a store answers in it. */
let table: Uint32Array | undefined;
export function crc32c(b: Buffer, prev = 0): number {
  if (!table) {
    table = new Uint32Array(256);
    for (let i = 0; i < 256; i++) {
      let c = i;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
      table[i] = c >>> 0;
    }
  }
  const t = table;
  let c = ~prev >>> 0;
  for (let i = 0; i < b.length; i++) c = t[(c ^ b[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}

/**
 * FILE's digests in ALGORITHM, cut in parts of PART_BYTES as the upload cut it (a store that answers in
 * an algorithm other than the one sent): one read of the local file, not a download.
 */
export async function fileDigests(file: string, algorithm: ChecksumAlgorithm, partBytes: number, signal?: AbortSignal): Promise<Digests> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(1024 * 1024);
    const full = hasher(algorithm);
    const parts: Buffer[] = [];
    let part = hasher(algorithm);
    let inPart = 0;
    for (;;) {
      signal?.throwIfAborted();
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (!bytesRead) break;
      let at = 0;
      while (at < bytesRead) {
        const n = Math.min(bytesRead - at, partBytes - inPart);
        const piece = buf.subarray(at, at + n);
        full.update(piece);
        part.update(piece);
        inPart += n;
        at += n;
        if (inPart === partBytes) {
          parts.push(part.digest());
          part = hasher(algorithm);
          inPart = 0;
        }
      }
    }
    // the last part, however small (an empty file: one empty part, as the upload sends it)
    if (inPart > 0 || parts.length === 0) parts.push(part.digest());
    return { parts, full: full.digest() };
  } finally {
    await fh.close();
  }
}
