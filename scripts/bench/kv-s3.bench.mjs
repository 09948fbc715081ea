// kv snapshot save --to s3:// against a real S3-compatible server (versitygw from scripts/s3-build.sh) on a
// loopback port, vs a local `kv snapshot save FILE` plus the S3 SDK's own upload of that file (what a
// `snapshot save` then `aws s3 cp` would cost): a ratio (budget 1.2x), with throughput and peak RSS.
// Payload: a simulated 3.4 sandbox (the simulated member caps its snapshots at 64 MiB, so ~48 MiB is the
// largest here), and a 4x smaller one: the RSS the upload adds stays bounded with size (streamed, never held whole).
import { existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { KEYS, SERVER, startS3 } from './s3-server.mjs';

export default async function kvS3Bench(report, { BIN, ROOT, measure, median, tempDir }) {
  const name = 'kv snapshot save --to s3:// vs local save + SDK upload';
  if (!existsSync(SERVER)) {
    console.log(`   no S3 server at ${SERVER}: run scripts/s3-build.sh`);
    report.row(name, 'skipped (no server)', '<= 1.2x', process.env.OPSCTL_REQUIRE_E2E !== '1');
    return;
  }
  const dir = tempDir('opsctl-bench-s3-');
  const { url, process: server } = await startS3(dir);
  const env = { OPSCTL_CONFIG_DIR: join(dir, 'cfg'), ...KEYS, AWS_ENDPOINT_URL: url };
  const run = async (args) => {
    const r = await measure([BIN, ...args], { env });
    if (r.code !== 0) throw new Error(`opsctl ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
    return r;
  };
  try {
    await run(['kv', 'sandbox', 'up', '--members', '1', '--version', '3.4']);
    const value = join(dir, 'value.bin');
    const file = join(dir, 'local.db');
    const upload = join(ROOT, 'scripts', 'bench', 's3-upload.mjs');
    let puts = 0;
    const rows = [];
    for (const mib of [12, 48]) {
      // base64 text values of 1 MiB (the member's request limit is 1.5 MiB); the snapshot holds each once more in base64
      for (; puts < Math.round(mib / 1.4); puts++) {
        writeFileSync(
          value,
          randomBytes(800 * 1024)
            .toString('base64')
            .slice(0, 1024 * 1024),
        );
        await run(['kv', 'put', `bench-${puts}`, '--file', value]);
      }
      const s3 = [];
      const local = [];
      const copy = [];
      let rss = 0;
      let localRss = 0;
      for (let round = 0; round < 3; round++) {
        const a = await run(['kv', 'snapshot', 'save', '--to', 's3://bench/etcd']);
        s3.push(a.wallMs);
        rss = Math.max(rss, a.maxRssKb);
        const b = await run(['kv', 'snapshot', 'save', file, '--force']);
        local.push(b.wallMs);
        localRss = Math.max(localRss, b.maxRssKb);
        const c = await measure([upload, file, url, 'bench', `copy/${round}.db`], { env: { ...process.env, ...KEYS } });
        if (c.code !== 0) throw new Error(`SDK upload failed: ${c.stderr}`);
        copy.push(c.wallMs);
      }
      const bytes = statSync(file).size;
      const s3Ms = median(s3);
      const refMs = median(local) + median(copy);
      rows.push({ bytes, s3Ms, refMs, rssMb: rss / 1024, localRssMb: localRss / 1024 });
    }
    const [small, big] = rows;
    const mb = (b) => (b / 1024 / 1024).toFixed(1);
    const ratio = big.s3Ms / big.refMs;
    console.log(
      `   ${mb(big.bytes)} MiB snapshot: --to s3:// ${big.s3Ms.toFixed(0)} ms (${(big.bytes / 1024 / 1024 / (big.s3Ms / 1000)).toFixed(1)} MiB/s, streamed while taken, checked by the store), local save ${(big.refMs - 0).toFixed(0)} ms incl. the SDK upload; peak RSS ${big.rssMb.toFixed(0)} MB (${mb(small.bytes)} MiB: ${small.rssMb.toFixed(0)} MB); a local save alone: ${big.localRssMb.toFixed(0)} MB (${small.localRssMb.toFixed(0)} MB)`,
    );
    report.row(`${name} (${mb(big.bytes)} MiB)`, `${ratio.toFixed(2)}x`, '<= 1.2x', ratio <= 1.2);
    // Streaming: what the S3 stage adds to the save's peak RSS (parts of 16 MiB, two in flight) stays bounded
    // whatever the size. The save itself of a simulated member's snapshot grows with it (the simulated
    // format is JSON, parsed whole to verify it; real etcd's bbolt file is walked page by page), so the
    // absolute peak of this payload is printed above, not budgeted here.
    const added = (r) => r.rssMb - r.localRssMb;
    report.row(
      `kv snapshot save --to s3:// RSS added by the upload ${mb(small.bytes)} → ${mb(big.bytes)} MiB`,
      `${added(small).toFixed(0)} → ${added(big).toFixed(0)} MB`,
      '< 100 MB, bounded',
      added(big) < 100 && added(small) < 100,
    );
  } finally {
    await measure([BIN, 'kv', 'sandbox', 'down'], { env }).catch(() => undefined);
    server.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}
