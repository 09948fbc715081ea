import type { Requests } from './requests.js';
import { readChecksum } from './checksum.js';
import type { OffsiteManifest } from './manifest.js';

type Sdk = typeof import('@aws-sdk/client-s3');

/**
 * A listed backup held against its object on the store, without reading the object: `ok` when it is
 * there with the manifest's size (and the checksum the store gave at the upload, where it gave one);
 * `mismatch` or `missing` say how it is not. Only a download's SHA-256 proves the bytes (kv restore).
 */
export interface BackupCheck {
  status: 'ok' | 'mismatch' | 'missing';
  /** What was compared: 'size', and 'checksum' when the store gives the one recorded at the upload. */
  checked: Array<'size' | 'checksum'>;
  problem?: string;
}

/**
 * M's object on the store compared with M. LISTED_BYTES: the object's size as the listing gave it
 * (undefined: not listed). A store error (not a verdict) is thrown.
 */
export async function checkBackup(requests: Requests, sdk: Sdk, bucket: string, m: OffsiteManifest, listedBytes: number | undefined): Promise<BackupCheck> {
  if (listedBytes === undefined) return { status: 'missing', checked: [], problem: 'the manifest is there but the snapshot object is not' };
  if (listedBytes !== m.bytes) return { status: 'mismatch', checked: ['size'], problem: `the object holds ${listedBytes} bytes, its manifest says ${m.bytes}` };
  let head;
  try {
    head = await requests.send(new sdk.HeadObjectCommand({ Bucket: bucket, Key: m.key, ChecksumMode: 'ENABLED' }), `HeadObject ${m.key}`);
  } catch (err) {
    const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
    if (e.name === 'NotFound' || e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404)
      return { status: 'missing', checked: [], problem: 'the snapshot object is gone (deleted since the listing)' };
    throw err;
  }
  if (head.ContentLength !== undefined && head.ContentLength !== m.bytes)
    return { status: 'mismatch', checked: ['size'], problem: `the object holds ${head.ContentLength} bytes, its manifest says ${m.bytes}` };
  const got = readChecksum(head);
  const was = m.storeChecksum;
  if (!got || 'unreadable' in got) return { status: 'ok', checked: ['size'] };
  if (was) {
    if (got.algorithm !== was.algorithm)
      return {
        status: 'mismatch',
        checked: ['size', 'checksum'],
        problem: `the store now gives a ${got.algorithm} checksum; it gave ${was.algorithm} when the backup was uploaded (the object was written again)`,
      };
    if (got.raw !== was.value)
      return {
        status: 'mismatch',
        checked: ['size', 'checksum'],
        problem: `the store's ${got.algorithm} checksum is ${got.raw}, not ${was.value} as when the backup was uploaded`,
      };
    return { status: 'ok', checked: ['size', 'checksum'] };
  }
  // an older manifest, or a store that kept none then: a full-object SHA-256 still says something
  if (got.algorithm === 'SHA256' && got.type === 'FULL_OBJECT') {
    if (got.digest.toString('hex') !== m.sha256)
      return {
        status: 'mismatch',
        checked: ['size', 'checksum'],
        problem: `the store's SHA-256 of the object is not the manifest's ${m.sha256.slice(0, 12)}…`,
      };
    return { status: 'ok', checked: ['size', 'checksum'] };
  }
  return { status: 'ok', checked: ['size'] };
}

/** Runs F over ITEMS, at most LIMIT at a time, results in order. */
export async function mapLimit<T, R>(items: T[], limit: number, f: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await f(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
