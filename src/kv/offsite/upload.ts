import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { posix } from 'node:path';
import type { CompletedPart } from '@aws-sdk/client-s3';
import { OpsError } from '../../core/errors.js';
import { PART_BYTES, PartWriter, type Confirmed } from './parts.js';
import { MANIFEST_SUFFIX, type OffsiteManifest } from './manifest.js';
import { COMPUTED, compareChecksum, fileDigests, readChecksum, type ChecksumAlgorithm, type Digests } from './checksum.js';
import { Deadline, fmt, type Requests } from './requests.js';

type Sdk = typeof import('@aws-sdk/client-s3');

/** The errors whose message already says what became of the upload. */
const told = new WeakSet<Error>();

/** What the snapshot's own check found: its size and SHA-256, with the facts the manifest records. */
export type SnapshotFacts = Omit<OffsiteManifest, 'kind' | 'key' | 'createdAt' | 'storeChecksum' | 'verifiedBy'>;

/** How the store's copy was verified, for the message and --json. */
export type VerifiedBy = 'store-checksum' | 'read-back';

export interface Finished {
  manifest: OffsiteManifest;
  verifiedBy: VerifiedBy;
  /** Why the store's checksum did not settle it (none given, an algorithm not computed here, a value that differed). */
  readBackWhy?: string;
}

/** The overall limit of one upload and the flag that sets it (--snapshot-timeout). */
export interface UploadLimit {
  ms: number;
  flag: string;
}

/**
 * One snapshot on its way to the store: its bytes written as they come (`write`), and once the
 * snapshot itself is verified, `finish` completes the upload, checks the store's copy and writes the
 * manifest last (a snapshot without one is never listed). Every request ends within the upload's
 * deadline (LIMIT), the clean-up of a failure included: a part of it is kept for the abort. A failure
 * says what became of the upload: aborted, or not confirmed with the key and the command that removes it.
 */
export class SnapshotUpload {
  private constructor(
    private readonly sdk: Sdk,
    private readonly requests: Requests,
    private readonly parts: PartWriter,
    readonly url: string,
    /** An SDK failure explained (what failed, where the credentials came from, the fix). */
    private readonly explain: (err: unknown, what: string) => OpsError,
    /** When the work must end, and when the clean-up must (the overall deadline). */
    private readonly deadline: { work: Deadline; end: Deadline },
  ) {}

  /** Starts the upload to `bucket`/`key` within `limit` (`explain`: an SDK failure explained; `signal`: Ctrl-C). */
  static async begin(
    sdk: Sdk,
    requests: Requests,
    {
      bucket,
      key,
      explain,
      limit,
      signal,
    }: { bucket: string; key: string; explain: (err: unknown, what: string) => OpsError; limit: UploadLimit; signal?: AbortSignal },
  ): Promise<SnapshotUpload> {
    const url = `s3://${bucket}/${key}`;
    // the last quarter (at most one request's limit) is kept for the clean-up of a failure
    const reserve = Math.min(requests.patience.requestMs, Math.floor(limit.ms / 4));
    const end = Deadline.after(limit.ms, `${fmt(limit.ms)} (${limit.flag})`);
    // the work's own limit named as it is: "not done within 90s (--snapshot-timeout 2m, less the 30s kept to clean up)"
    const work = new Deadline(
      end.at - reserve,
      `${fmt(limit.ms - reserve)} (${limit.flag} ${fmt(limit.ms)}, less the ${fmt(reserve)} kept to clean up)`,
      end.since,
    );
    try {
      const parts = await PartWriter.begin(sdk, requests, bucket, key, { signal, deadline: work });
      return new SnapshotUpload(sdk, requests, parts, url, explain, { work, end });
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

  private ended: Promise<CompletedPart[]> | undefined;

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
   * locally): the byte count, and the store's checksum of what it received compared as a value (see
   * checksum.ts; another algorithm than the one sent is computed from LOCAL_FILE when given). A store
   * that gives none, one not computed here, or one that differs, has the object read back and hashed:
   * the bytes decide, so a correct upload is never refused over a checksum's form. Then the manifest.
   * Any failure removes the object and its parts (or says it could not).
   */
  async finish(facts: SnapshotFacts, localFile?: string): Promise<Finished> {
    const { bucket, key } = this.parts;
    const o = { deadline: this.deadline.work };
    try {
      if (this.parts.bytes !== facts.bytes)
        throw new OpsError(`${this.url}: ${this.parts.bytes} bytes were sent, but the snapshot holds ${facts.bytes}`, 1, { code: 's3_mismatch' });
      this.ended ??= this.parts.end();
      const parts = await this.ended;
      await this.parts.complete(parts, facts.bytes);
      const head = await this.requests.send(new this.sdk.HeadObjectCommand({ Bucket: bucket, Key: key, ChecksumMode: 'ENABLED' }), 'HeadObject', o);
      const got = readChecksum(head);
      let readBackWhy: string | undefined;
      if (head.ContentLength !== facts.bytes) readBackWhy = `the store says ${head.ContentLength ?? '?'} bytes, not ${facts.bytes}`;
      else if (!got) readBackWhy = 'the store gives no checksum';
      else if ('unreadable' in got) readBackWhy = `the store's checksum ${got.unreadable} is not a form opsctl reads`;
      else {
        const sent: Partial<Record<ChecksumAlgorithm, Digests>> = {
          SHA256: { parts: this.parts.digests, full: Buffer.from(facts.sha256, 'hex') },
        };
        if (got.algorithm !== 'SHA256' && COMPUTED.includes(got.algorithm) && localFile)
          sent[got.algorithm] = await fileDigests(localFile, got.algorithm, PART_BYTES);
        const verdict = compareChecksum(got, sent);
        if (verdict.verdict !== 'match') readBackWhy = verdict.why;
      }
      if (readBackWhy) {
        const back = await readHash(this.requests, this.sdk, bucket, key, this.deadline.work);
        if (back.bytes !== facts.bytes || back.sha256 !== facts.sha256)
          throw new OpsError(
            `${this.url}: read back, ${back.bytes} bytes hash to ${back.sha256.slice(0, 12)}…, ` +
              `not ${facts.bytes} bytes of ${facts.sha256.slice(0, 12)}… (${readBackWhy})`,
            1,
            { code: 's3_mismatch' },
          );
      }
      const verifiedBy: VerifiedBy = readBackWhy ? 'read-back' : 'store-checksum';
      const manifest: OffsiteManifest = {
        kind: 'opsctl-kv-snapshot',
        key,
        createdAt: new Date().toISOString(),
        ...facts,
        ...(got && !('unreadable' in got) ? { storeChecksum: { algorithm: got.algorithm, value: got.raw } } : {}),
        verifiedBy,
      };
      await this.requests.send(
        new this.sdk.PutObjectCommand({ Bucket: bucket, Key: key + MANIFEST_SUFFIX, Body: JSON.stringify(manifest, null, 2), ContentType: 'application/json' }),
        'PutObject (the manifest)',
        o,
      );
      return { manifest, verifiedBy, ...(readBackWhy ? { readBackWhy } : {}) };
    } catch (err) {
      throw await this.failed(err);
    }
  }

  /** A failure of the upload itself was thrown, its outcome in its message. */
  reported = false;

  /** The upload abandoned (Ctrl-C, a snapshot that failed): what became of it, in words. */
  async abort(): Promise<string> {
    return this.cleanup();
  }

  private cleaned: Promise<string> | undefined;

  /**
   * The multipart upload aborted and, once its completion was sent, the object deleted (it may exist
   * without its manifest), in parallel, within what is left of the deadline (at least the share kept for
   * it): the words say what is known, and for what is not, the key and the command that removes it.
   */
  private cleanup(): Promise<string> {
    this.cleaned ??= (async () => {
      const { bucket, key, uploadId } = this.parts;
      // what is left of the whole limit, or (less than one request's worth left) the least time a clean-up gets, named as such
      const now = Date.now();
      const least = now + Math.min(this.requests.patience.requestMs, 5000);
      const bound =
        least > this.deadline.end.at
          ? new Deadline(least, `${fmt(least - now)} (the clean-up's least time, past the ${this.deadline.end.text} of the upload)`)
          : new Deadline(this.deadline.end.at, this.deadline.end.text, this.deadline.end.since);
      const [aborted, deleted] = await Promise.all([
        this.parts.abort(bound),
        this.parts.completionSent
          ? this.requests.send(new this.sdk.DeleteObjectCommand({ Bucket: bucket, Key: key }), 'DeleteObject', { deadline: bound }).then(
              (): Confirmed => ({ done: true }),
              (err: unknown): Confirmed => ({ done: false, why: (err as Error).message }),
            )
          : { done: true as const },
      ]);
      const prune = `opsctl kv backups prune --from s3://${bucket}/${posix.dirname(key) === '.' ? '' : posix.dirname(key)} --stale-after 0s`;
      const said: string[] = [];
      if (!aborted.done)
        said.push(
          `the abort of its multipart upload was not confirmed (${aborted.why}): its parts may stay on the store until removed with ` +
            `${prune} or aws s3api abort-multipart-upload --bucket ${bucket} --key ${key} --upload-id ${uploadId}`,
        );
      if (!deleted.done)
        said.push(
          `its completion was sent and the delete of the object was not confirmed (${deleted.why}): s3://${bucket}/${key} may exist ` +
            `without a manifest (never listed as a backup) until removed with ${prune} or aws s3 rm s3://${bucket}/${key}`,
        );
      if (said.length) return `nothing listed; ${said.join('; ')}`;
      return this.parts.completionSent ? 'multipart upload aborted and the object deleted, nothing listed' : 'multipart upload aborted, nothing listed';
    })();
    return this.cleaned;
  }

  private async failed(err: unknown): Promise<OpsError> {
    const outcome = await this.cleanup();
    const e = this.explain(err, `upload of ${this.url} failed (${outcome})`);
    told.add(e);
    this.reported = true;
    return e;
  }
}

/**
 * FILE uploaded through UPLOAD, read 1 MiB at a time (constant memory) and hashed on the way; it must
 * still be the snapshot FACTS describe (size and SHA-256) or nothing is kept.
 */
export async function uploadFile(upload: SnapshotUpload, file: string, facts: SnapshotFacts, signal?: AbortSignal): Promise<Finished> {
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
    const outcome = await upload.abort();
    if (err instanceof OpsError && !told.has(err)) throw new OpsError(`${err.message} (${outcome})`, err.exitCode, { code: err.code, hint: err.hint });
    throw err;
  }
  return upload.finish(facts, file);
}

/** An object read through and hashed, never held in memory; each wait for bytes bounded (and the whole by DEADLINE). */
export async function readHash(requests: Requests, sdk: Sdk, bucket: string, key: string, deadline?: Deadline): Promise<{ bytes: number; sha256: string }> {
  const h = createHash('sha256');
  let n = 0;
  await requests.read(
    new sdk.GetObjectCommand({ Bucket: bucket, Key: key }),
    'GetObject',
    (chunk) => {
      h.update(chunk);
      n += chunk.length;
    },
    { deadline },
  );
  return { bytes: n, sha256: h.digest('hex') };
}
