// The S3-compatible server of the S3 benches: versitygw (scripts/s3-build.sh) on a free loopback port,
// with a root user and a bucket "bench", its data under DIR/s3. Not a bench module itself (no .bench.mjs).
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

export const SERVER = process.env.OPSCTL_S3_SERVER ?? join(process.env.OPSCTL_S3_BUILD ?? '/var/tmp/opsctl-s3-build', 'versitygw-v1.8.0', 'versitygw');
export const KEYS = {
  AWS_ACCESS_KEY_ID: 'bench-root',
  AWS_SECRET_ACCESS_KEY: 'bench-secret-0123456789',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
};

export const freePort = () =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/** Starts versitygw; resolves {url, process} once it answers. */
export async function startS3(dir) {
  mkdirSync(join(dir, 's3', 'data', 'bench'), { recursive: true });
  mkdirSync(join(dir, 's3', 'iam'), { recursive: true });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const args = [
    '--port',
    `127.0.0.1:${port}`,
    '--access',
    KEYS.AWS_ACCESS_KEY_ID,
    '--secret',
    KEYS.AWS_SECRET_ACCESS_KEY,
    '--iam-dir',
    join(dir, 's3', 'iam'),
    'posix',
    join(dir, 's3', 'data'),
  ];
  const child = spawn(SERVER, args, { stdio: 'ignore' });
  for (let i = 0; ; i++) {
    if ((await fetch(url).catch(() => undefined)) !== undefined) break;
    if (i > 600) throw new Error('versitygw did not listen');
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url, process: child };
}
