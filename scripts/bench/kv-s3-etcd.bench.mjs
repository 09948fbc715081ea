// The figure on real etcd: a 1 GiB snapshot of a real etcd 3.4 member (Debian's /usr/bin/etcd) saved
// straight to a real S3-compatible server (versitygw) with `kv snapshot save --to s3://`, against the
// guide's way: `etcdctl snapshot save FILE` plus the S3 SDK's own upload of that file (what `aws s3 cp`
// does), each run twice in ABBA order, means. A ratio (budget 1.2x) and opsctl's peak RSS (budget < 100 MB:
// streamed, never held whole).
// OPSCTL_BENCH_SNAPSHOT_MIB sets the size (default 1024).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, KEYS, SERVER, startS3 } from './s3-server.mjs';

const ETCD = '/usr/bin/etcd';
const ETCDCTL = '/usr/bin/etcdctl';
const MIB = Number(process.env.OPSCTL_BENCH_SNAPSHOT_MIB ?? 1024);

async function until(what, check, ms = 60_000) {
  const end = Date.now() + ms;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > end) throw new Error(`${what}: not ready after ${ms / 1000} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Runs a command to its end; resolves its exit code and wall time. */
function timed(cmd, args, env) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
    let err = '';
    child.stderr.on('data', (c) => (err += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, err, wallMs: performance.now() - started }));
  });
}

export default async function kvS3EtcdBench(report, { BIN, ROOT, measure, tempDir }) {
  const name = `kv snapshot save --to s3:// of ${MIB} MiB of real etcd 3.4 vs etcdctl snapshot save + SDK upload`;
  if (!existsSync(SERVER) || !existsSync(ETCD) || !existsSync(ETCDCTL)) {
    console.log(`   needs ${SERVER}, ${ETCD} and ${ETCDCTL} (scripts/s3-build.sh; Debian's etcd-server and etcd-client)`);
    report.row(name, 'skipped (no server or etcd)', '<= 1.2x', process.env.OPSCTL_REQUIRE_E2E !== '1');
    return;
  }
  const dir = tempDir('opsctl-bench-s3-etcd-');
  const [client, peer] = [await freePort(), await freePort()];
  const etcdUrl = `http://127.0.0.1:${client}`;
  const { url: s3Url, process: s3 } = await startS3(dir);
  const etcd = spawn(
    ETCD,
    [
      '--name',
      'bench',
      '--data-dir',
      join(dir, 'etcd'),
      '--listen-client-urls',
      etcdUrl,
      '--advertise-client-urls',
      etcdUrl,
      '--listen-peer-urls',
      `http://127.0.0.1:${peer}`,
      '--initial-advertise-peer-urls',
      `http://127.0.0.1:${peer}`,
      '--initial-cluster',
      `bench=http://127.0.0.1:${peer}`,
      '--quota-backend-bytes',
      String(8 * 1024 * 1024 * 1024),
      '--snapshot-count',
      '10000',
    ],
    { stdio: 'ignore' },
  );
  const env = { OPSCTL_CONFIG_DIR: join(dir, 'cfg'), ...KEYS, AWS_ENDPOINT_URL: s3Url };
  try {
    await until('etcd', async () => (await fetch(`${etcdUrl}/health`)).ok);
    // 1 MiB values of random bytes (incompressible), put through the gateway four at a time
    const value = randomBytes(1024 * 1024).toString('base64');
    const put = (i) =>
      fetch(`${etcdUrl}/v3/kv/put`, { method: 'POST', body: JSON.stringify({ key: Buffer.from(`bench-${i}`).toString('base64'), value }) }).then((r) => {
        if (!r.ok) throw new Error(`put ${i}: HTTP ${r.status}`);
        return r.text();
      });
    for (let i = 0; i < MIB; i += 4) await Promise.all([i, i + 1, i + 2, i + 3].filter((k) => k < MIB).map(put));
    const file = join(dir, 'etcdctl.db');
    const oursOnce = async () => {
      const r = await measure([BIN, 'kv', 'snapshot', 'save', '--to', 's3://bench/etcd', '--endpoints', etcdUrl], { env });
      if (r.code !== 0) throw new Error(`opsctl kv snapshot save --to exited ${r.code}: ${r.stderr}`);
      return r;
    };
    const guideOnce = async () => {
      rmSync(file, { force: true });
      const saved = await timed(ETCDCTL, ['--endpoints', etcdUrl, 'snapshot', 'save', file], { ETCDCTL_API: '3' });
      if (saved.code !== 0) throw new Error(`etcdctl snapshot save exited ${saved.code}: ${saved.err}`);
      const upload = await measure([join(ROOT, 'scripts', 'bench', 's3-upload.mjs'), file, s3Url, 'bench', 'guide/etcdctl.db'], {
        env: { ...process.env, ...KEYS },
      });
      if (upload.code !== 0) throw new Error(`SDK upload failed: ${upload.stderr}`);
      return { saveMs: saved.wallMs, uploadMs: upload.wallMs };
    };
    // ABBA: each way runs once first and once second (the first read of a fresh member's data is the slower one)
    const a1 = await oursOnce();
    const g1 = await guideOnce();
    const g2 = await guideOnce();
    const a2 = await oursOnce();
    const ours = { wallMs: (a1.wallMs + a2.wallMs) / 2, maxRssKb: Math.max(a1.maxRssKb, a2.maxRssKb) };
    const saved = { wallMs: (g1.saveMs + g2.saveMs) / 2 };
    const upload = { wallMs: (g1.uploadMs + g2.uploadMs) / 2 };
    const bytes = statSync(file).size;
    const ref = saved.wallMs + upload.wallMs;
    const ratio = ours.wallMs / ref;
    const rssMb = ours.maxRssKb / 1024;
    console.log(
      `   ${(bytes / 1024 / 1024).toFixed(0)} MiB snapshot: --to s3:// ${(ours.wallMs / 1000).toFixed(1)} s (saved and uploaded together, verified locally and by the store's checksums); etcdctl save ${(saved.wallMs / 1000).toFixed(1)} s + SDK upload ${(upload.wallMs / 1000).toFixed(1)} s; opsctl peak RSS ${rssMb.toFixed(0)} MB`,
    );
    report.row(name, `${ratio.toFixed(2)}x (${(ours.wallMs / 1000).toFixed(1)} s vs ${(ref / 1000).toFixed(1)} s)`, '<= 1.2x', ratio <= 1.2);
    report.row(`kv snapshot save --to s3:// of ${(bytes / 1024 / 1024).toFixed(0)} MiB: peak RSS`, `${rssMb.toFixed(0)} MB`, '< 100 MB', rssMb < 100);
  } finally {
    etcd.kill('SIGKILL');
    s3.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}
