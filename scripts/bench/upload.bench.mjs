// `tracker files upload` streams files from disk: the client's peak memory must not follow the file
// size. The server is `opsctl mock serve` in ANOTHER process (its limit raised), so only the client's
// memory is measured (with the embedded mock, client and server would share one process).
import { spawn } from 'node:child_process';
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const MiB = 1024 * 1024;

/** A file of `bytes` pseudo-random bytes, written 1 MiB at a time (the bench itself stays small too). */
function makeFile(path, bytes) {
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(Math.min(MiB, bytes));
  for (let left = bytes; left > 0; left -= chunk.length) {
    for (let i = 0; i < chunk.length; i += 4) chunk.writeUInt32LE((Math.random() * 2 ** 32) >>> 0, i);
    writeSync(fd, chunk, 0, Math.min(chunk.length, left));
  }
  closeSync(fd);
  return path;
}

async function startServer(BIN, env) {
  const child = spawn(
    process.execPath,
    [BIN, 'mock', 'serve', '--memory', '--json', '--port', '0', '--max-upload', '300MB', '--tracker-rate-limit', '10000/1m'],
    {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const first = await new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`mock serve exited ${code}`)));
  });
  return { child, info: JSON.parse(first) };
}

export default async function upload(report, { BIN, measure, tempDir }) {
  const dir = tempDir('opsctl-bench-upload-');
  const { child, info } = await startServer(BIN, { OPSCTL_CONFIG_DIR: dir });
  try {
    const env = { OPSCTL_CONFIG_DIR: dir, OPSCTL_TRACKER_URL: info.url, OPSCTL_TRACKER_TOKEN: info.tracker_token };
    const cases = [
      { name: '1 × 1 KiB', files: [1024] },
      { name: '1 × 30 MiB', files: [30 * MiB] },
      { name: '4 × 30 MiB (4 requests under the 50 MiB limit)', files: [30 * MiB, 30 * MiB, 30 * MiB, 30 * MiB] },
      { name: '1 × 100 MiB', files: [100 * MiB] },
      { name: '1 × 200 MiB', files: [200 * MiB] },
    ];
    const peaks = {};
    for (const c of cases) {
      const paths = c.files.map((bytes, i) => makeFile(join(dir, `upload-${i}.bin`), bytes));
      const r = await measure([BIN, 'tracker', 'files', 'upload', ...paths, '--json=id,size'], { env });
      for (const p of paths) rmSync(p);
      if (r.code !== 0) throw new Error(`upload ${c.name} exited ${r.code}: ${r.stderr}`);
      const sizes = JSON.parse(r.stdout).map((f) => f.size);
      if (JSON.stringify(sizes) !== JSON.stringify(c.files)) throw new Error(`upload ${c.name}: the server got sizes ${sizes}`);
      peaks[c.name] = r.maxRssKb / 1024;
      report.row(`files upload ${c.name}: client peak RSS`, `${peaks[c.name].toFixed(1)} MB`, '< 100 MB', peaks[c.name] < 100);
    }
    // streamed: 200 MiB costs no more than 100 MiB (garbage chunks are bounded by the GC, not by the file)
    const growth = peaks['1 × 200 MiB'] - peaks['1 × 100 MiB'];
    report.row('files upload: peak(200 MiB) - peak(100 MiB)', `${growth.toFixed(1)} MB`, '< 20 MB (not proportional)', growth < 20);
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    rmSync(dir, { recursive: true, force: true });
  }
}
