import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/core/errors.js';
import { isS3Url, keyOf, parseS3Url } from '../../src/kv/offsite/target.js';
import { s3Settings } from '../../src/commands/kv/lib/offsite.js';

describe('s3:// places (--to, --backup-to, --from)', () => {
  it('reads bucket and prefix, trimming slashes', () => {
    expect(parseS3Url('s3://etcd-backups/prod/', '--to')).toEqual({ bucket: 'etcd-backups', prefix: 'prod' });
    expect(parseS3Url('s3://etcd-backups//a/b//', '--to')).toEqual({ bucket: 'etcd-backups', prefix: 'a/b' });
    expect(parseS3Url('s3://etcd-backups', '--to')).toEqual({ bucket: 'etcd-backups', prefix: '' });
    expect(keyOf({ bucket: 'b', prefix: '' }, 'x.db')).toBe('x.db');
    expect(keyOf({ bucket: 'b', prefix: 'p/q' }, 'x.db')).toBe('p/q/x.db');
    expect(isS3Url('S3://b/x')).toBe(true);
    expect(isS3Url('/var/backups')).toBe(false);
  });

  it.each([
    ['s3://', '--to'],
    ['s3://Upper/x', '--to'],
    ['s3://a/x', '--backup-to'],
    ['s3://-bad-/x', '--from'],
    ['s3://ok-bucket/../etc', '--to'],
    ['s3://ok-bucket/a\nb', '--to'],
    ['http://ok-bucket/x', '--to'],
  ])('%s is refused as bad input naming %s and the way to write it', (url, field) => {
    let err: unknown;
    try {
      parseS3Url(url, field);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).message.startsWith(`${field}: `)).toBe(true);
    expect((err as UsageError).hint).toMatch(/s3:\/\//);
  });

  it('--endpoint-url must be an http(s) URL; --aws-profile and --region pass through', () => {
    expect(() => s3Settings({ endpointUrl: 'minio:9000' })).toThrow(/--endpoint-url: "minio:9000" is not an http\(s\) URL/);
    expect(() => s3Settings({ endpointUrl: 'ftp://x' })).toThrow(UsageError);
    expect(s3Settings({ endpointUrl: 'https://minio.example:9000', awsProfile: 'nightly', region: 'eu-west-1' })).toEqual({
      endpointUrl: 'https://minio.example:9000',
      profile: 'nightly',
      region: 'eu-west-1',
    });
  });
});
