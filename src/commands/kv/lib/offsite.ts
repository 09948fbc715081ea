import { UsageError } from '../../../core/errors.js';
import { durationFlag } from '../../../core/duration.js';
import type { OffsiteStore } from '../../../kv/offsite/store.js';
import { parseS3Url, type S3Settings, type S3Target } from '../../../kv/offsite/target.js';

/**
 * The S3 settings of a verb's flags: the AWS CLI's, --s3-timeout (one request) and, on the verbs that
 * upload, --snapshot-timeout (a whole upload). A bad value names the flag and the fix.
 */
export function s3Settings(opts: { awsProfile?: string; endpointUrl?: string; region?: string; s3Timeout?: string; snapshotTimeout?: string }): S3Settings {
  const requestMs = positiveDuration(opts.s3Timeout, '--s3-timeout');
  const uploadMs = positiveDuration(opts.snapshotTimeout, '--snapshot-timeout');
  if (opts.endpointUrl !== undefined) {
    let u: URL | undefined;
    try {
      u = new URL(opts.endpointUrl);
    } catch {
      u = undefined;
    }
    if (!u || !['http:', 'https:'].includes(u.protocol))
      throw new UsageError(`--endpoint-url: "${opts.endpointUrl}" is not an http(s) URL`, {
        field: '--endpoint-url',
        hint: 'e.g. --endpoint-url https://minio.example:9000',
      });
  }
  return {
    profile: opts.awsProfile,
    endpointUrl: opts.endpointUrl,
    region: opts.region,
    ...(requestMs !== undefined ? { requestMs } : {}),
    ...(uploadMs !== undefined ? { uploadMs } : {}),
  };
}

function positiveDuration(value: string | undefined, flag: string): number | undefined {
  return value === undefined ? undefined : durationFlag(flag, value, { positive: true });
}

/** The store of an s3:// flag opened and proved writable (a probe object written and deleted): before anything is taken or stopped. */
export async function openOffsite(url: string, field: string, settings: S3Settings): Promise<{ store: OffsiteStore; target: S3Target }> {
  const target = parseS3Url(url, field);
  const { OffsiteStore } = await import('../../../kv/offsite/store.js');
  const store = await OffsiteStore.open(settings);
  await store.probe(target);
  return { store, target };
}

/** The store of an s3:// flag opened to read (list, prune, restore). */
export async function readOffsite(url: string, field: string, settings: S3Settings): Promise<{ store: OffsiteStore; target: S3Target }> {
  const target = parseS3Url(url, field);
  const { OffsiteStore } = await import('../../../kv/offsite/store.js');
  return { store: await OffsiteStore.open(settings), target };
}
