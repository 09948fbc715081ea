import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { requireProgram } from './e2e.js';
import { until } from './kv.js';
import { freePort, ROOT, S3_BUILD, startS3Server } from './s3-server.js';

/**
 * The S3-compatible servers of the off-host snapshot matrix, each built or installed by scripts/s3-build.sh
 * (pinned) into /var/tmp/opsctl-s3-build (OPSCTL_S3_BUILD), each a different implementation:
 * - versitygw: Versity Gateway (Go, POSIX backend): composite checksums with the `-N` suffix;
 * - moto: moto's S3 server (Python): composite checksums without the suffix;
 * - rclone: `rclone serve s3` (Go, rclone's own S3 server over a directory): no checksums kept at all.
 * Missing: the matrix skips loudly, and fails under OPSCTL_REQUIRE_E2E=1.
 */
export type StoreName = 'versitygw' | 'moto' | 'rclone';

export const STORE_PROGRAMS: Record<StoreName, string> = {
  versitygw: join(S3_BUILD, 'versitygw-v1.8.0', 'versitygw'),
  moto: join(S3_BUILD, 'moto-5.2.5', 'bin', 'moto_server'),
  rclone: join(S3_BUILD, 'rclone-v1.76.0', 'rclone'),
};

export const haveStores = (names: StoreName[]) => names.every((n) => requireProgram(`S3-compatible server ${n} (scripts/s3-build.sh)`, STORE_PROGRAMS[n]));

/** One store of the matrix, running on a loopback port of its own with a directory of its own. */
export interface Store {
  name: StoreName;
  url: string;
  /** A client with the root keys, for the test's own looks (never opsctl's way in). */
  root: S3Client;
  /** The environment opsctl reaches the store with. */
  env: Record<string, string>;
  bucket: (name: string) => Promise<void>;
  stop: () => Promise<void>;
}

function envFor(url: string, dir: string): Record<string, string> {
  return {
    AWS_ACCESS_KEY_ID: ROOT.accessKeyId,
    AWS_SECRET_ACCESS_KEY: ROOT.secretAccessKey,
    AWS_ENDPOINT_URL: url,
    AWS_CONFIG_FILE: join(dir, 'no-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(dir, 'no-credentials'),
  };
}

/** A server started from PROGRAM ARGS, up once its port answers HTTP; stopped by its pid. */
async function serve(name: StoreName, args: (port: number, dir: string) => string[], env: Record<string, string> = {}): Promise<Store> {
  const dir = mkdtempSync(join(tmpdir(), `opsctl-s3-${name}-`));
  mkdirSync(join(dir, 'data'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const proc: ResultPromise = execa(STORE_PROGRAMS[name], args(port, dir), {
    reject: false,
    stdio: 'ignore',
    cleanup: true,
    env: { HOME: dir, ...env },
  });
  const root = new S3Client({ region: 'us-east-1', endpoint: url, forcePathStyle: true, credentials: ROOT, maxAttempts: 1 });
  const stop = async () => {
    if (proc.pid && proc.exitCode === null) process.kill(proc.pid, 'SIGKILL');
    await proc;
    root.destroy();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await until(async () => (await fetch(url).catch(() => undefined)) !== undefined, 60_000, `${name} listening on ${url}`);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    name,
    url,
    root,
    env: envFor(url, dir),
    bucket: async (b) => void (await root.send(new CreateBucketCommand({ Bucket: b }))),
    stop,
  };
}

export async function startStore(name: StoreName): Promise<Store> {
  if (name === 'versitygw') {
    const s = await startS3Server();
    return { name, url: s.url, root: s.root, env: s.env, bucket: s.bucket, stop: s.stop };
  }
  if (name === 'moto') return serve('moto', (port) => ['-H', '127.0.0.1', '-p', String(port)]);
  return serve('rclone', (port, dir) => [
    'serve',
    's3',
    '--addr',
    `127.0.0.1:${port}`,
    '--auth-key',
    `${ROOT.accessKeyId},${ROOT.secretAccessKey}`,
    '--config',
    join(dir, 'rclone.conf'),
    join(dir, 'data'),
  ]);
}
