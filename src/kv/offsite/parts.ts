import { createHash } from 'node:crypto';
import type { CompletedPart } from '@aws-sdk/client-s3';
import { OpsError } from '../../core/errors.js';
import type { Deadline, Requests } from './requests.js';

type Sdk = typeof import('@aws-sdk/client-s3');

/**
 * Part size: S3's floor (all parts but the last) and its ceiling of 10,000 parts let 5 MiB parts carry
 * up to 48 GiB, six times etcd's largest supported backend (8 GiB quota).
 */
export const PART_BYTES = 5 * 1024 * 1024;
const MAX_PARTS = 10_000;

export interface PartWriterOptions {
  partBytes?: number;
  /** Parts sent at once; memory is (inFlight + 1) × partBytes whatever the object's size. */
  inFlight?: number;
  /** The command's interruption (Ctrl-C): cancels the parts in flight. */
  signal?: AbortSignal;
  /** Every request of the upload ends by then (--snapshot-timeout); each is bounded by the request limit too. */
  deadline?: Deadline;
}

/** What a clean-up request did: done, or not confirmed and why (the store did not answer, refused…). */
export type Confirmed = { done: true } | { done: false; why: string };

/**
 * One multipart upload fed as a stream of chunks of unknown total length: bytes are copied into a
 * small pool of part buffers (reused: no garbage for the collector to fall behind on), each full part
 * sent with its SHA-256 (x-amz-checksum-sha256: the store checks it against the bytes it received and
 * refuses the part on a mismatch), at most `inFlight` at a time while the next one fills; `add` waits
 * while they are all in flight (back-pressure). Memory stays (inFlight + 1) parts whatever the size.
 * Nothing is visible in the bucket until `complete`; `abort` drops every part sent.
 */
export class PartWriter {
  private readonly partBytes: number;
  private readonly inFlight: number;
  private readonly free: Buffer[] = [];
  private buffers = 0;
  private current: Buffer | undefined;
  private filled = 0;
  private readonly sending = new Set<Promise<void>>();
  private readonly done: CompletedPart[] = [];
  /** Each part's SHA-256, in part order. */
  readonly digests: Buffer[] = [];
  private failure: Error | undefined;
  private aborted = false;
  /** A CompleteMultipartUpload went out: the object may exist even if no answer came back. */
  completionSent = false;
  /** Cancels the parts in flight when the upload is abandoned (Ctrl-C, a failed snapshot). */
  private readonly cancel = new AbortController();
  bytes = 0;

  private readonly deadline: Deadline | undefined;

  private constructor(
    private readonly sdk: Sdk,
    private readonly requests: Requests,
    readonly bucket: string,
    readonly key: string,
    readonly uploadId: string,
    opts: PartWriterOptions,
  ) {
    this.deadline = opts.deadline;
    this.partBytes = opts.partBytes ?? PART_BYTES;
    this.inFlight = opts.inFlight ?? 1;
    // Ctrl-C: the parts in flight are cancelled at once (a write waiting for one of them ends too)
    if (opts.signal?.aborted) this.cancel.abort();
    else opts.signal?.addEventListener('abort', () => this.cancel.abort(), { once: true });
  }

  get parts(): number {
    return this.done.length + this.sending.size;
  }

  static async begin(sdk: Sdk, requests: Requests, bucket: string, key: string, opts: PartWriterOptions = {}): Promise<PartWriter> {
    const r = await requests.send(
      new sdk.CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ContentType: 'application/octet-stream', ChecksumAlgorithm: 'SHA256' }),
      'CreateMultipartUpload',
      { signal: opts.signal, deadline: opts.deadline },
    );
    if (!r.UploadId) throw new OpsError(`s3://${bucket}/${key}: the store started a multipart upload without an upload id`);
    return new PartWriter(sdk, requests, bucket, key, r.UploadId, opts);
  }

  /** CHUNK appended: copied before this returns, so the caller may reuse it. */
  async add(chunk: Buffer): Promise<void> {
    let at = 0;
    while (at < chunk.length) {
      this.check();
      if (!this.current) {
        this.current = await this.takeBuffer();
        this.filled = 0;
      }
      const n = Math.min(chunk.length - at, this.partBytes - this.filled);
      chunk.copy(this.current, this.filled, at, at + n);
      this.filled += n;
      at += n;
      this.bytes += n;
      if (this.filled === this.partBytes) this.sendCurrent();
    }
  }

  /** The last part sent and every part acknowledged: the parts (their SHA-256 digests are `digests`). */
  async end(): Promise<CompletedPart[]> {
    this.check();
    // the rest, however small, is the last part (an empty stream: one empty part)
    if (this.current || this.done.length + this.sending.size === 0) {
      this.current ??= Buffer.alloc(0);
      this.sendCurrent();
    }
    while (this.sending.size) await Promise.race(this.sending);
    this.check();
    return [...this.done].sort((a, b) => (a.PartNumber ?? 0) - (b.PartNumber ?? 0));
  }

  /**
   * The upload made one object from its parts (after `end`). A retry answered NoSuchUpload means an
   * earlier attempt completed it without its answer reaching here: the object is looked at to tell.
   */
  async complete(parts: CompletedPart[], bytes: number): Promise<void> {
    this.completionSent = true;
    try {
      await this.requests.send(
        new this.sdk.CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: this.key, UploadId: this.uploadId, MultipartUpload: { Parts: parts } }),
        'CompleteMultipartUpload',
        { deadline: this.deadline, signal: this.cancel.signal },
      );
    } catch (err) {
      if ((err as { name?: string }).name !== 'NoSuchUpload') throw err;
      const head = await this.requests
        .send(new this.sdk.HeadObjectCommand({ Bucket: this.bucket, Key: this.key }), 'HeadObject', { deadline: this.deadline, signal: this.cancel.signal })
        .catch(() => undefined);
      if (head?.ContentLength !== bytes) throw err;
    }
  }

  /**
   * Every part dropped on the store: the parts in flight cancelled and waited for first (a part landing
   * after the abort would linger), then the abort, bounded by DEADLINE. Whether it was confirmed is
   * returned, never assumed: an abort the store did not answer leaves the parts there.
   */
  async abort(deadline?: Deadline): Promise<Confirmed> {
    this.aborted = true;
    this.cancel.abort();
    await Promise.allSettled([...this.sending]);
    try {
      await this.requests.send(
        new this.sdk.AbortMultipartUploadCommand({ Bucket: this.bucket, Key: this.key, UploadId: this.uploadId }),
        'AbortMultipartUpload',
        {
          deadline,
        },
      );
      return { done: true };
    } catch (err) {
      // no such upload: completed (the object is dealt with apart) or aborted already
      if ((err as { name?: string }).name === 'NoSuchUpload') return { done: true };
      return { done: false, why: (err as Error).message };
    }
  }

  private check(): void {
    if (this.failure) throw this.failure;
    if (this.aborted) throw new OpsError(`s3://${this.bucket}/${this.key}: the upload was aborted`);
  }

  /** A free part buffer: one from the pool, a new one while the pool is not full, else the first freed by a part sent. */
  private async takeBuffer(): Promise<Buffer> {
    for (;;) {
      const b = this.free.pop();
      if (b) return b;
      if (this.buffers < this.inFlight + 1) {
        this.buffers++;
        return Buffer.allocUnsafe(this.partBytes);
      }
      await Promise.race(this.sending);
      this.check();
    }
  }

  private sendCurrent(): void {
    const buf = this.current!;
    const body = buf.subarray(0, this.filled);
    const length = this.filled;
    this.current = undefined;
    this.filled = 0;
    const number = this.done.length + this.sending.size + 1;
    if (number > MAX_PARTS) {
      this.failure = new OpsError(`s3://${this.bucket}/${this.key}: more than ${MAX_PARTS} parts of ${this.partBytes} bytes (S3's limit)`);
      throw this.failure;
    }
    const digest = createHash('sha256').update(body).digest();
    this.digests[number - 1] = digest;
    const command = new this.sdk.UploadPartCommand({
      Bucket: this.bucket,
      Key: this.key,
      UploadId: this.uploadId,
      PartNumber: number,
      Body: body,
      ContentLength: length,
      ChecksumSHA256: digest.toString('base64'),
    });
    // The part's SHA-256 is a signed header the store checks: the payload is not hashed a second time to sign it.
    command.middlewareStack.add(
      (next) => (args) => {
        (args.request as { headers: Record<string, string> }).headers['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD';
        return next(args);
      },
      { step: 'build', name: 'opsctlUnsignedPartPayload' },
    );
    const p: Promise<void> = this.requests
      .send(command, `UploadPart (part ${number})`, { deadline: this.deadline, signal: this.cancel.signal })
      .then(
        (r) => {
          this.done.push({ PartNumber: number, ETag: r.ETag, ChecksumSHA256: r.ChecksumSHA256 ?? digest.toString('base64') });
        },
        (err: unknown) => {
          this.failure ??= err instanceof Error ? err : new Error(String(err));
        },
      )
      .finally(() => {
        this.sending.delete(p);
        if (buf.length === this.partBytes) this.free.push(buf);
      });
    this.sending.add(p);
  }
}
