import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { CompletedPart, S3Client } from '@aws-sdk/client-s3';
import { OpsError } from '../../core/errors.js';
import { PartWriter } from './parts.js';
import { MANIFEST_SUFFIX, type OffsiteManifest } from './manifest.js';

type Sdk = typeof import('@aws-sdk/client-s3');

/** What the snapshot's own check found: its size and SHA-256, with the facts the manifest records. */
export type SnapshotFacts = Omit<OffsiteManifest, 'kind' | 'key' | 'createdAt'>;

/** How the store's copy was verified, for the message and --json. */
export type VerifiedBy = 'store-checksum' | 'read-back';

/**
 * One snapshot on its way to the store: its bytes written as they come (`write`), and once the
 * snapshot itself is verified, `finish` completes the upload, checks the store's copy and writes the
 * manifest last (a snapshot without one is never listed). `abort` leaves nothing behind.
 */
export class SnapshotUpload {
  private constructor(
    private readonly sdk: Sdk,
    private readonly client: S3Client,
    private readonly parts: PartWriter,
    readonly url: string,
    /** An SDK failure explained (what failed, where the credentials came from, the fix). */
    private readonly explain: (err: unknown, what: string) => OpsError,
  ) {}

  static async begin(sdk: Sdk, client: S3Client, bucket: string, key: string, explain: (err: unknown, what: string) => OpsError, signal?: AbortSignal) {
    const url = `s3://${bucket}/${key}`;
    try {
      return new SnapshotUpload(sdk, client, await PartWriter.begin(sdk, client, bucket, key, { signal }), url, explain);
    } catch (err) {
      throw explain(err, `upload of ${url} failed (nothing was written)`);
    }
  }

  get key(): string {
    return this.parts.key;
  }

  get bytes(): number {
    return this.parts.bytes;
  }

  /** The snapshot's next bytes (copied: the caller may reuse CHUNK). */
  async write(chunk: Buffer): Promise<void> {
    try {
      await this.parts.add(chunk);
    } catch (err) {
      throw await this.failed(err);
    }
  }

  private ended: Promise<{ parts: CompletedPart[]; composite: string }> | undefined;

  /** Every byte sent and acknowledged (the store has all parts; nothing listed yet). `finish` does it too. */
  async end(): Promise<void> {
    this.ended ??= this.parts.end();
    try {
      await this.ended;
    } catch (err) {
      throw await this.failed(err);
    }
  }

  /**
   * The upload completed and its copy on the store checked against FACTS (the snapshot as verified
   * locally): the byte count and the SHA-256 of every part, which the store computed from what it
   * received (its composite checksum, from HEAD); a store that keeps no checksums has the object read
   * back and hashed instead. Then the manifest. Any failure removes the object and its parts.
   */
  async finish(facts: SnapshotFacts): Promise<{ manifest: OffsiteManifest; verifiedBy: VerifiedBy }> {
    const { bucket, key } = this.parts;
    let completed = false;
    try {
      if (this.parts.bytes !== facts.bytes)
        throw new OpsError(`${this.url}: ${this.parts.bytes} bytes were sent, but the snapshot holds ${facts.bytes}`, 1, { code: 's3_mismatch' });
      this.ended ??= this.parts.end();
      const { parts, composite } = await this.ended;
      await this.parts.complete(parts);
      completed = true;
      const head = await this.client.send(new this.sdk.HeadObjectCommand({ Bucket: bucket, Key: key, ChecksumMode: 'ENABLED' }));
      if (head.ContentLength !== facts.bytes)
        throw new OpsError(`${this.url}: the store holds ${head.ContentLength ?? '?'} bytes, not the ${facts.bytes} bytes sent`, 1, { code: 's3_mismatch' });
      let verifiedBy: VerifiedBy = 'store-checksum';
      if (head.ChecksumSHA256) {
        if (head.ChecksumSHA256 !== composite)
          throw new OpsError(`${this.url}: the store's SHA-256 of the parts is ${head.ChecksumSHA256}, not ${composite} as sent`, 1, { code: 's3_mismatch' });
      } else {
        verifiedBy = 'read-back';
        const back = await readHash(this.sdk, this.client, bucket, key);
        if (back.bytes !== facts.bytes || back.sha256 !== facts.sha256)
          throw new OpsError(
            `${this.url}: read back, ${back.bytes} bytes hash to ${back.sha256.slice(0, 12)}…, not ${facts.bytes} bytes of ${facts.sha256.slice(0, 12)}…`,
            1,
            { code: 's3_mismatch' },
          );
      }
      const manifest: OffsiteManifest = { kind: 'opsctl-kv-snapshot', key, createdAt: new Date().toISOString(), ...facts };
      await this.client.send(
        new this.sdk.PutObjectCommand({ Bucket: bucket, Key: key + MANIFEST_SUFFIX, Body: JSON.stringify(manifest, null, 2), ContentType: 'application/json' }),
      );
      return { manifest, verifiedBy };
    } catch (err) {
      if (completed) await this.client.send(new this.sdk.DeleteObjectCommand({ Bucket: bucket, Key: key })).catch(() => undefined);
      throw await this.failed(err);
    }
  }

  /** The multipart upload aborted: none of its parts stays on the store. */
  async abort(): Promise<void> {
    await this.parts.abort();
  }

  private async failed(err: unknown): Promise<OpsError> {
    await this.parts.abort();
    return this.explain(err, `upload of ${this.url} failed (multipart upload aborted, nothing listed)`);
  }
}

/**
 * FILE uploaded through UPLOAD, read 1 MiB at a time (constant memory) and hashed on the way; it must
 * still be the snapshot FACTS describe (size and SHA-256) or nothing is kept.
 */
export async function uploadFile(
  upload: SnapshotUpload,
  file: string,
  facts: SnapshotFacts,
  signal?: AbortSignal,
): Promise<{ manifest: OffsiteManifest; verifiedBy: VerifiedBy }> {
  const hash = createHash('sha256');
  try {
    const fh = await open(file, 'r');
    try {
      const buf = Buffer.allocUnsafe(1024 * 1024);
      for (;;) {
        signal?.throwIfAborted();
        const { bytesRead } = await fh.read(buf, 0, buf.length, null);
        if (!bytesRead) break;
        const chunk = buf.subarray(0, bytesRead);
        hash.update(chunk);
        await upload.write(chunk);
      }
      await upload.end();
    } finally {
      await fh.close();
    }
    const sent = hash.digest('hex');
    if (sent !== facts.sha256 || upload.bytes !== facts.bytes)
      throw new OpsError(
        `${upload.url}: ${file} changed while it was uploaded (${upload.bytes} bytes, SHA-256 ${sent.slice(0, 12)}…; expected ${facts.bytes} bytes, ${facts.sha256.slice(0, 12)}…)`,
      );
  } catch (err) {
    await upload.abort();
    throw err;
  }
  return upload.finish(facts);
}

/** An object read through and hashed, never held in memory. */
export async function readHash(sdk: Sdk, client: S3Client, bucket: string, key: string): Promise<{ bytes: number; sha256: string }> {
  const r = await client.send(new sdk.GetObjectCommand({ Bucket: bucket, Key: key }));
  const h = createHash('sha256');
  let n = 0;
  for await (const chunk of r.Body as Readable) {
    h.update(chunk as Buffer);
    n += (chunk as Buffer).length;
  }
  return { bytes: n, sha256: h.digest('hex') };
}
