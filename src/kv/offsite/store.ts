import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import type { S3Client } from '@aws-sdk/client-s3';
import { OpsError } from '../../core/errors.js';
import { keyOf, urlOf, type S3Settings, type S3Target } from './target.js';
import { MANIFEST_SUFFIX, parseManifest, type OffsiteManifest } from './manifest.js';
import { SnapshotUpload, uploadFile, type Finished, type SnapshotFacts, type UploadLimit } from './upload.js';
import { Requests, StoreTimeout } from './requests.js';
import { checkBackup, mapLimit, type BackupCheck } from './verify.js';

type Sdk = typeof import('@aws-sdk/client-s3');

/** One request's limit (--s3-timeout) and one upload's (--snapshot-timeout), when the verb sets none. */
export const DEFAULT_REQUEST_MS = 30_000;
export const DEFAULT_UPLOAD_MS = 120_000;

/**
 * What an interrupted save left under a target (OffsiteStore.scan): a multipart upload never completed
 * or aborted (a store that died mid-upload), or a snapshot object without a manifest (one that died
 * between the two). Never listed as a backup; it only takes space. A recent one may be a save under way.
 */
export type OffsiteLeftover = { kind: 'upload'; key: string; uploadId: string; since: string } | { kind: 'object'; key: string; bytes: number; since: string };

/**
 * The endpoint_url the shared config file gives the profile (its own, or its `services` section's for s3),
 * read with the SDK's own loader; unset when the file says none or cannot be read (the SDK then says why).
 */
async function profileEndpoint(profile = 'default'): Promise<string | undefined> {
  const { loadSharedConfigFiles } = await import('@smithy/core/config');
  const files = await loadSharedConfigFiles({ ignoreCache: true }).catch(() => undefined);
  const configFile: Record<string, Record<string, string | undefined> | undefined> = files?.configFile ?? {};
  const p = Object.hasOwn(configFile, profile) ? configFile[profile] : undefined;
  const services = p?.services && Object.hasOwn(configFile, `services.${p.services}`) ? configFile[`services.${p.services}`] : undefined;
  return services?.['s3.endpoint_url'] || p?.endpoint_url || undefined;
}

/**
 * One S3-compatible store, reached as the AWS CLI would: credentials from the environment, the shared
 * config and credentials files, `--aws-profile` (or AWS_PROFILE); the endpoint from `--endpoint-url`,
 * AWS_ENDPOINT_URL(_S3) or the profile's endpoint_url. The SDK loads only here (an s3:// target given).
 */
export class OffsiteStore {
  /** Every request to the store, each bounded (--s3-timeout) and retried with back-off. */
  readonly requests: Requests;

  private constructor(
    private readonly sdk: Sdk,
    readonly client: S3Client,
    private readonly settings: S3Settings,
  ) {
    this.requests = new Requests(client, { requestMs: settings.requestMs ?? DEFAULT_REQUEST_MS, requestFlag: '--s3-timeout' });
  }

  static async open(settings: S3Settings): Promise<OffsiteStore> {
    const sdk = cjs(await import('@aws-sdk/client-s3'), 'S3Client');
    // --aws-profile is the AWS CLI's --profile: the client's `profile` gives credentials and region; the
    // SDK would read the configured endpoint (endpoint_url) only through AWS_PROFILE, so it is read here
    // with the SDK's own loader and handed over, as every other setting (no process-wide state changed)
    const endpoint =
      settings.endpointUrl ||
      process.env.AWS_ENDPOINT_URL_S3 ||
      process.env.AWS_ENDPOINT_URL ||
      (await profileEndpoint(settings.profile ?? process.env.AWS_PROFILE));
    const requestMs = settings.requestMs ?? DEFAULT_REQUEST_MS;
    const make = (region: string | undefined) =>
      new sdk.S3Client({
        ...(region ? { region } : {}),
        ...(settings.profile ? { profile: settings.profile } : {}),
        ...(endpoint ? { endpoint } : {}),
        // a custom endpoint (a loopback or on-premises server) is addressed by path, as the CLI does for IPs
        forcePathStyle: Boolean(endpoint),
        // one layer of retries: Requests (bounded by --s3-timeout and the work's deadline)
        maxAttempts: 1,
        requestHandler: { connectionTimeout: requestMs },
        // checksums only where the API requires them (S3-compatible stores differ on the SDK's newer
        // defaults); each part carries its own SHA-256 all the same (parts.ts)
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      });
    let client = make(settings.region);
    // No region anywhere (flag, env, profile): us-east-1, as the AWS CLI's s3 commands assume.
    if (!(await client.config.region().catch(() => undefined))) client = make('us-east-1');
    return new OffsiteStore(sdk, client, settings);
  }

  /** Where the credentials were looked for, for messages (never their values). */
  credentialSource(): string {
    // the shared files where the SDK reads them (AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE move them)
    const files = `${process.env.AWS_SHARED_CREDENTIALS_FILE || '~/.aws/credentials'} and ${process.env.AWS_CONFIG_FILE || '~/.aws/config'}`;
    if (this.settings.profile) return `the profile "${this.settings.profile}" (--aws-profile) of ${files}`;
    if (process.env.AWS_ACCESS_KEY_ID) return 'AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY in the environment';
    if (process.env.AWS_PROFILE) return `the profile "${process.env.AWS_PROFILE}" (AWS_PROFILE) of ${files}`;
    return `the default profile of ${files} (no AWS_ACCESS_KEY_ID, AWS_PROFILE or --aws-profile set)`;
  }

  /** An SDK failure as an OpsError naming what failed, where the credentials came from and the fix; secrets never included. */
  explain(err: unknown, what: string): OpsError {
    if (err instanceof StoreTimeout)
      return new OpsError(`${what}: ${err.message}`, 1, {
        code: 's3_timeout',
        hint:
          `check that the store at ${this.endpointText()} answers (aws s3 ls); a store that is slow but working needs a longer ` +
          '--s3-timeout (one request) or --snapshot-timeout (a whole upload)',
      });
    if (err instanceof OpsError) return err;
    const e = err as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
    const name = e.name ?? 'Error';
    const status = e.$metadata?.httpStatusCode;
    const msg = redact(String(e.message ?? err));
    if (['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'CredentialsProviderError', 'ExpiredToken', 'InvalidToken'].includes(name) || /credential/i.test(msg))
      return new OpsError(`${what}: the S3 credentials were refused or not found (${name}: ${msg})`, 4, {
        code: 's3_credentials',
        hint: `credentials come from ${this.credentialSource()}: check them with \`aws sts get-caller-identity\` or \`aws s3 ls\`, or choose other ones with --aws-profile NAME`,
      });
    if (name === 'AccessDenied' || status === 403)
      return new OpsError(`${what}: access denied by the store (${name})`, 1, {
        code: 's3_denied',
        hint: `the identity from ${this.credentialSource()} needs s3:PutObject, s3:GetObject, s3:ListBucket and s3:DeleteObject on the bucket`,
      });
    if (name === 'NoSuchBucket')
      return new OpsError(`${what}: no such bucket`, 1, {
        code: 's3_no_bucket',
        hint: 'create it first (aws s3 mb s3://BUCKET) or check the name and --endpoint-url',
      });
    return new OpsError(`${what}: ${name}${status ? ` (HTTP ${status})` : ''}: ${msg}`, 1, {
      code: 's3',
      hint: 'check the endpoint (--endpoint-url or AWS_ENDPOINT_URL) and that the store is reachable',
    });
  }

  /** Where requests go, for messages: the endpoint given or found, else the SDK's own (AWS). */
  endpointText(): string {
    return this.settings.endpointUrl || process.env.AWS_ENDPOINT_URL_S3 || process.env.AWS_ENDPOINT_URL || 'the endpoint of the profile or AWS';
  }

  /** A small object written and deleted under the prefix: write access proved before anything stops. */
  async probe(t: S3Target): Promise<void> {
    const key = keyOf(t, `.opsctl-probe-${randomBytes(6).toString('hex')}`);
    try {
      await this.requests.send(new this.sdk.PutObjectCommand({ Bucket: t.bucket, Key: key, Body: 'probe' }), 'PutObject (the probe)');
      await this.requests.send(new this.sdk.DeleteObjectCommand({ Bucket: t.bucket, Key: key }), 'DeleteObject (the probe)');
    } catch (err) {
      throw this.explain(err, `cannot write to ${urlOf(t.bucket, keyOf(t, ''))}`);
    }
  }

  /** The whole of one upload's limit: --snapshot-timeout. */
  private uploadLimit(): UploadLimit {
    return { ms: this.settings.uploadMs ?? DEFAULT_UPLOAD_MS, flag: '--snapshot-timeout' };
  }

  /**
   * A snapshot's upload begun as NAME under the target: its bytes are sent as they come (see
   * SnapshotUpload), the object appears only when it is complete and verified, all within --snapshot-timeout.
   */
  async beginSnapshot(t: S3Target, name: string, signal?: AbortSignal): Promise<SnapshotUpload> {
    return SnapshotUpload.begin(this.sdk, this.requests, {
      bucket: t.bucket,
      key: keyOf(t, name),
      explain: (err, what) => this.explain(err, what),
      limit: this.uploadLimit(),
      signal,
    });
  }

  /** FILE (the snapshot FACTS describe) uploaded as NAME under the target, verified on the store, its manifest last. */
  async uploadSnapshot(t: S3Target, name: string, file: string, facts: SnapshotFacts, signal?: AbortSignal): Promise<Finished> {
    const upload = await this.beginSnapshot(t, name, signal);
    return uploadFile(upload, file, facts, signal);
  }

  /** Every complete backup under the target (those with a manifest), newest first. */
  async list(t: S3Target): Promise<OffsiteManifest[]> {
    return (await this.scan(t)).backups;
  }

  /**
   * One listing of the target: its complete backups (those with a manifest), newest first, and with
   * `staleBefore` what interrupted saves begun before then left (see `leftovers`). With `uploadsIfAllowed`
   * an identity that may not list multipart uploads gets the rest, and why the uploads are missing.
   */
  async scan(
    t: S3Target,
    staleBefore?: Date,
    o: { uploadsIfAllowed?: boolean } = {},
  ): Promise<{ backups: OffsiteManifest[]; leftovers: OffsiteLeftover[]; uploadsUnlisted?: string; sizes: Map<string, number> }> {
    const backups: OffsiteManifest[] = [];
    const leftovers: OffsiteLeftover[] = [];
    let uploadsUnlisted: string | undefined;
    const prefix = t.prefix ? `${t.prefix}/` : undefined;
    const sizes = new Map<string, number>();
    try {
      const objects = new Map<string, { size: number; at?: Date }>();
      let token: string | undefined;
      do {
        const page = await this.requests.send(
          new this.sdk.ListObjectsV2Command({ Bucket: t.bucket, Prefix: prefix, ContinuationToken: token }),
          'ListObjectsV2',
        );
        for (const o of page.Contents ?? []) if (o.Key) objects.set(o.Key, { size: o.Size ?? 0, at: o.LastModified });
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      for (const [key, o] of objects) sizes.set(key, o.size);
      const manifests = [...objects].filter(([key, o]) => key.endsWith(MANIFEST_SUFFIX) && o.size <= 64 * 1024).map(([key]) => key);
      for (const m of await mapLimit(manifests, 4, (key) => this.readManifest(t.bucket, key))) if (m) backups.push(m);
      if (staleBefore) {
        for (const [key, o] of objects)
          if (key.endsWith('.db') && !objects.has(key + MANIFEST_SUFFIX) && o.at && o.at < staleBefore)
            leftovers.push({ kind: 'object', key, bytes: o.size, since: o.at.toISOString() });
        const uploads = await this.openUploads(t.bucket, prefix, staleBefore).catch((err: unknown) => {
          if (!o.uploadsIfAllowed) throw err;
          uploadsUnlisted = this.explain(err, `cannot list the multipart uploads under ${urlOf(t.bucket, keyOf(t, ''))}`).message;
          return [];
        });
        leftovers.unshift(...uploads);
      }
    } catch (err) {
      throw this.explain(err, `cannot list ${urlOf(t.bucket, keyOf(t, ''))}`);
    }
    backups.sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.key.localeCompare(a.key));
    return { backups, leftovers, sizes, ...(uploadsUnlisted ? { uploadsUnlisted } : {}) };
  }

  /**
   * Each backup held against its object (size, and the checksum the store gave at the upload where it
   * gives one; see verify.ts), a few at a time: in the order given.
   */
  async check(bucket: string, backups: OffsiteManifest[], sizes: Map<string, number>): Promise<BackupCheck[]> {
    try {
      return await mapLimit(backups, 4, (m) => checkBackup(this.requests, this.sdk, bucket, m, sizes.get(m.key)));
    } catch (err) {
      throw this.explain(err, `cannot look at the backups in s3://${bucket}`);
    }
  }

  /** Multipart uploads under PREFIX begun before BEFORE and never completed or aborted (a store that died mid-upload). */
  private async openUploads(bucket: string, prefix: string | undefined, before: Date): Promise<OffsiteLeftover[]> {
    const out: OffsiteLeftover[] = [];
    let keyMarker: string | undefined;
    let idMarker: string | undefined;
    do {
      const page = await this.requests.send(
        new this.sdk.ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix, KeyMarker: keyMarker, UploadIdMarker: idMarker }),
        'ListMultipartUploads',
      );
      for (const u of page.Uploads ?? [])
        if (u.Key && u.UploadId && u.Initiated && u.Initiated < before)
          out.push({ kind: 'upload', key: u.Key, uploadId: u.UploadId, since: u.Initiated.toISOString() });
      [keyMarker, idMarker] = page.IsTruncated ? [page.NextKeyMarker, page.NextUploadIdMarker] : [undefined, undefined];
    } while (keyMarker);
    return out;
  }

  private async readManifest(bucket: string, key: string): Promise<OffsiteManifest | undefined> {
    const chunks: Buffer[] = [];
    let n = 0;
    await this.requests.read(new this.sdk.GetObjectCommand({ Bucket: bucket, Key: key }), `GetObject ${key}`, (c) => {
      n += c.length;
      // a manifest is a few hundred bytes: anything over 64 KiB is not one (and is never held)
      if (n <= 64 * 1024) chunks.push(c);
    });
    return n > 64 * 1024 ? undefined : parseManifest(Buffer.concat(chunks).toString('utf8'), key);
  }

  /** A leftover gone: its multipart upload aborted (its parts dropped), or the object deleted. */
  async removeLeftover(bucket: string, l: OffsiteLeftover): Promise<void> {
    try {
      if (l.kind === 'upload')
        await this.requests.send(new this.sdk.AbortMultipartUploadCommand({ Bucket: bucket, Key: l.key, UploadId: l.uploadId }), 'AbortMultipartUpload');
      else await this.requests.send(new this.sdk.DeleteObjectCommand({ Bucket: bucket, Key: l.key }), 'DeleteObject');
    } catch (err) {
      throw this.explain(err, `cannot remove ${urlOf(bucket, l.key)}`);
    }
  }

  /** A backup removed: its manifest first (it stops being listed), then the snapshot. */
  async remove(bucket: string, m: OffsiteManifest): Promise<void> {
    try {
      await this.requests.send(new this.sdk.DeleteObjectCommand({ Bucket: bucket, Key: m.key + MANIFEST_SUFFIX }), 'DeleteObject (the manifest)');
      await this.requests.send(new this.sdk.DeleteObjectCommand({ Bucket: bucket, Key: m.key }), 'DeleteObject');
    } catch (err) {
      throw this.explain(err, `cannot delete ${urlOf(bucket, m.key)}`);
    }
  }

  /** The manifest of s3://bucket/key (the snapshot itself or its manifest named); a missing one is refused. */
  async manifestOf(bucket: string, key: string): Promise<OffsiteManifest> {
    const k = key.endsWith(MANIFEST_SUFFIX) ? key.slice(0, -MANIFEST_SUFFIX.length) : key;
    let m: OffsiteManifest | undefined;
    try {
      m = await this.readManifest(bucket, k + MANIFEST_SUFFIX);
    } catch (err) {
      const e = err as { name?: string };
      if (e.name === 'NoSuchKey' || e.name === 'NotFound')
        throw new OpsError(`${urlOf(bucket, k)} is not a complete backup (no ${MANIFEST_SUFFIX} beside it)`, 1, {
          code: 's3_no_backup',
          hint: 'list the backups with: opsctl kv backups list --from s3://BUCKET/PREFIX',
        });
      throw this.explain(err, `cannot read ${urlOf(bucket, k + MANIFEST_SUFFIX)}`);
    }
    if (!m) throw new OpsError(`${urlOf(bucket, k + MANIFEST_SUFFIX)} is not an opsctl snapshot manifest`, 1, { code: 's3_no_backup' });
    return m;
  }

  /** The backup downloaded to FILE (0600), streamed, and checked against its manifest's size and SHA-256 before it is used. */
  async download(bucket: string, m: OffsiteManifest, file: string): Promise<void> {
    const url = urlOf(bucket, m.key);
    const h = createHash('sha256');
    let n = 0;
    const out = createWriteStream(file, { mode: 0o600 });
    const failedWrite = new Promise<never>((_, reject) => out.once('error', reject));
    failedWrite.catch(() => undefined);
    try {
      await this.requests.read(new this.sdk.GetObjectCommand({ Bucket: bucket, Key: m.key }), 'GetObject', async (chunk) => {
        h.update(chunk);
        n += chunk.length;
        if (!out.write(chunk)) await Promise.race([once(out, 'drain'), failedWrite]);
      });
      out.end();
      await Promise.race([once(out, 'finish'), failedWrite]);
    } catch (err) {
      out.destroy();
      throw this.explain(err, `cannot download ${url}`);
    }
    const got = h.digest('hex');
    if (n !== m.bytes || got !== m.sha256)
      throw new OpsError(`${url}: downloaded ${n} bytes hashing to ${got.slice(0, 12)}…; its manifest says ${m.bytes} bytes, ${m.sha256.slice(0, 12)}…`, 1, {
        code: 's3_mismatch',
        hint: 'the object is damaged or was replaced: choose another backup (opsctl kv backups list --from …)',
      });
  }
}

/** A CommonJS package's exports whether the bundle hands them over as they are or under `default`. */
function cjs<T extends object>(mod: T, name: keyof T): T {
  return name in mod ? mod : (mod as unknown as { default: T }).default;
}

/** Anything that looks like an access key or a secret blanked out of a server's message. */
function redact(s: string): string {
  return s.replace(/\b(AKIA|ASIA)[A-Z0-9]{12,}\b/g, '[access key]').replace(/[A-Za-z0-9/+]{40}/g, '[redacted]');
}
