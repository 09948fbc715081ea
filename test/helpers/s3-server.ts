import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { createHash } from 'node:crypto';
import { CreateBucketCommand, GetObjectCommand, PutBucketPolicyCommand, S3Client } from '@aws-sdk/client-s3';
import { requireProgram } from './e2e.js';
import { until } from './kv.js';

/**
 * A real S3-compatible server for the off-host snapshot tests: Versity Gateway (versitygw) over a POSIX
 * directory, built by scripts/s3-build.sh into /var/tmp/opsctl-s3-build (or OPSCTL_S3_SERVER: the
 * binary's path). Missing: the tests skip loudly, and fail under OPSCTL_REQUIRE_E2E=1.
 */
// the SDK's notice about the Node versions it will drop is noise in the tests' output
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export const S3_BUILD = process.env.OPSCTL_S3_BUILD ?? '/var/tmp/opsctl-s3-build';
export const S3_SERVER = process.env.OPSCTL_S3_SERVER ?? join(S3_BUILD, 'versitygw-v1.8.0', 'versitygw');

export const haveS3Server = () => requireProgram('S3-compatible server (versitygw: scripts/s3-build.sh)', S3_SERVER);

export const ROOT = { accessKeyId: 'opsctl-root', secretAccessKey: 'root-secret-0123456789' };
export const READER = { accessKeyId: 'opsctl-reader', secretAccessKey: 'reader-secret-0123456789' };

/** A free loopback port (the server takes a fixed --port). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export interface S3Server {
  url: string;
  root: S3Client;
  /** The environment opsctl reaches the server with (root's keys, the endpoint). */
  env: Record<string, string>;
  pid: () => number | undefined;
  kill: () => Promise<void>;
  /** Started again on the same port and directory (after kill). */
  restart: () => Promise<void>;
  /** A bucket the reader may list and read but never write (a bucket policy). */
  readOnlyBucket: (name: string) => Promise<void>;
  bucket: (name: string) => Promise<void>;
  /** The SHA-256 (hex) of the object as the server holds it, read as root. */
  objectHash: (bucket: string, key: string) => Promise<string>;
  /** A bucket where the reader may write only the probe objects (.opsctl-probe-*): the probe passes, an upload is denied. */
  probeOnlyBucket: (name: string) => Promise<void>;
  stop: () => Promise<void>;
}

export async function startS3Server(): Promise<S3Server> {
  const dir = mkdtempSync(join(tmpdir(), 'opsctl-s3-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let proc: ResultPromise | undefined;
  const root = new S3Client({ region: 'us-east-1', endpoint: url, forcePathStyle: true, credentials: ROOT, maxAttempts: 1 });
  const start = async () => {
    proc = execa(
      S3_SERVER,
      [
        '--port',
        `127.0.0.1:${port}`,
        '--access',
        ROOT.accessKeyId,
        '--secret',
        ROOT.secretAccessKey,
        '--iam-dir',
        join(dir, 'iam'),
        'posix',
        join(dir, 'data'),
      ],
      { reject: false, stdio: 'ignore', cleanup: true },
    );
    await until(
      async () => {
        const r = await fetch(url).catch(() => undefined);
        return r !== undefined;
      },
      30_000,
      `versitygw listening on ${url}`,
    );
  };
  const { mkdirSync } = await import('node:fs');
  mkdirSync(join(dir, 'iam'), { recursive: true });
  mkdirSync(join(dir, 'data'), { recursive: true });
  await start();
  await execa(S3_SERVER, [
    'admin',
    '--access',
    ROOT.accessKeyId,
    '--secret',
    ROOT.secretAccessKey,
    '--endpoint-url',
    url,
    'create-user',
    '--access',
    READER.accessKeyId,
    '--secret',
    READER.secretAccessKey,
    '--role',
    'user',
  ]);
  const kill = async () => {
    const p = proc;
    if (!p?.pid) return;
    process.kill(p.pid, 'SIGKILL');
    await p;
  };
  const bucket = async (name: string) => {
    await root.send(new CreateBucketCommand({ Bucket: name }));
  };
  /** A bucket whose policy lets the reader read it, plus `more` statements. */
  const readerBucket = async (name: string, more: object[]) => {
    await bucket(name);
    const read = {
      Effect: 'Allow',
      Principal: { AWS: [READER.accessKeyId] },
      Action: ['s3:GetObject', 's3:ListBucket'],
      Resource: [`arn:aws:s3:::${name}`, `arn:aws:s3:::${name}/*`],
    };
    const policy = { Version: '2012-10-17', Statement: [read, ...more] };
    await root.send(new PutBucketPolicyCommand({ Bucket: name, Policy: JSON.stringify(policy) }));
  };
  return {
    url,
    root,
    env: {
      AWS_ACCESS_KEY_ID: ROOT.accessKeyId,
      AWS_SECRET_ACCESS_KEY: ROOT.secretAccessKey,
      AWS_ENDPOINT_URL: url,
      AWS_CONFIG_FILE: join(dir, 'no-config'),
      AWS_SHARED_CREDENTIALS_FILE: join(dir, 'no-credentials'),
    },
    pid: () => proc?.pid,
    kill,
    restart: start,
    bucket,
    objectHash: async (name: string, key: string) => {
      const r = await root.send(new GetObjectCommand({ Bucket: name, Key: key }));
      return createHash('sha256')
        .update(Buffer.from(await r.Body!.transformToByteArray()))
        .digest('hex');
    },
    /** A bucket the reader may only read. */
    readOnlyBucket: (name: string) => readerBucket(name, []),
    /** A bucket the reader may read, and write only opsctl's probe objects in: the probe passes, an upload is refused. */
    probeOnlyBucket: (name: string) =>
      readerBucket(name, [
        {
          Effect: 'Allow',
          Principal: { AWS: [READER.accessKeyId] },
          Action: ['s3:PutObject', 's3:DeleteObject'],
          Resource: [`arn:aws:s3:::${name}/*/.opsctl-probe-*`],
        },
      ]),
    stop: async () => {
      await kill();
      root.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
