import { UsageError } from '../../core/errors.js';

/** An off-host place for snapshots: s3://BUCKET/PREFIX (the prefix without leading or trailing slashes). */
export interface S3Target {
  bucket: string;
  prefix: string;
}

/** How to reach the store, as the AWS CLI takes it (each unset: the SDK's own chain, as the CLI's). */
export interface S3Settings {
  profile?: string;
  endpointUrl?: string;
  region?: string;
  /** One request's limit (--s3-timeout): connect, each part, complete, head, list, get (a download: between two chunks). */
  requestMs?: number;
  /** One whole upload's limit, its clean-up included (--snapshot-timeout). */
  uploadMs?: number;
}

/** True when a `--to`/`--from`/`--backup-to` value names an S3 location. */
export function isS3Url(value: string | undefined): value is string {
  return value !== undefined && /^s3:\/\//i.test(value);
}

/** s3://BUCKET[/PREFIX] read and checked (bucket names as S3 allows them); a bad one names the flag and the fix. */
export function parseS3Url(value: string, field: string): S3Target {
  const m = /^s3:\/\/([^/]*)(?:\/(.*))?$/i.exec(value);
  const bucket = m?.[1] ?? '';
  if (!m || !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket))
    throw new UsageError(`${field}: "${value}" is not s3://BUCKET/PREFIX with a valid bucket name`, {
      field,
      hint: 'write it as s3://my-backups/etcd/prod (bucket: 3-63 lower-case letters, digits, dots and dashes)',
    });
  const prefix = (m[2] ?? '').replace(/^\/+|\/+$/g, '');
  if ([...prefix].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f) || prefix.split('/').some((p) => p === '..' || p === '.'))
    throw new UsageError(`${field}: the prefix of "${value}" has control characters or "." / ".." parts`, {
      field,
      hint: 'use plain path parts, e.g. s3://bucket/etcd/prod',
    });
  return { bucket, prefix };
}

/** The key of NAME under the target's prefix. */
export function keyOf(t: S3Target, name: string): string {
  return t.prefix ? `${t.prefix}/${name}` : name;
}

/** s3://bucket/key, for messages. */
export function urlOf(bucket: string, key: string): string {
  return `s3://${bucket}/${key}`;
}
