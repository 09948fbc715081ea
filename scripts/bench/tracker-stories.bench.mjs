// Tracker stories and shared pacing: `stories import` of 500 stories (how many requests; a second run
// writes nothing), and 4 opsctl processes x 100 requests against `opsctl mock serve` limited to 200/6 s
// (0 x 429; the time against what the limit imposes). The built binary throughout.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run, serve } from './tracker.bench.mjs';

const requests = async (url) => (await fetch(`${url}/__mock/requests`)).json();
const clear = (url) => fetch(`${url}/__mock/requests`, { method: 'DELETE' });

export default async function trackerStories(report, { BIN, tempDir }) {
  const dir = tempDir('opsctl-bench-stories-');

  // 1. stories import of 500: 2 searches (active, archived) + 5 bulk creates of 100; again: 2 searches, 0 writes
  const mock = await serve(BIN, ['--memory']);
  try {
    const csv = [
      'external_id,name,story_type,estimate,labels',
      ...Array.from({ length: 500 }, (_, i) => `BENCH-${i},Imported story ${i},${['feature', 'bug', 'chore'][i % 3]},${i % 5},bench;batch-${i % 4}`),
    ].join('\n');
    const file = join(dir, 'stories.csv');
    writeFileSync(file, `${csv}\n`);
    const env = { OPSCTL_CONFIG_DIR: dir, OPSCTL_TRACKER_URL: mock.url, OPSCTL_TRACKER_TOKEN: mock.tracker_token };
    await clear(mock.url);
    const first = await run(BIN, ['tracker', 'stories', 'import', '-f', file, '--json'], env);
    if (first.code !== 0) throw new Error(`import exited ${first.code}: ${first.stderr}`);
    const log = (await requests(mock.url)).filter((q) => q.path.startsWith('/api/v3/'));
    const bulk = log.filter((q) => q.path === '/api/v3/stories/bulk').length;
    const created = JSON.parse(first.stdout).created;
    report.row(
      'tracker stories import: 500 stories (CSV)',
      `${log.length} requests: ${log.length - bulk} search + ${bulk} bulk creates, ${created} created (${(first.wallMs / 1000).toFixed(2)} s)`,
      '2 search + 5 bulk',
      log.length === 7 && bulk === 5 && created === 500,
    );
    await clear(mock.url);
    const again = await run(BIN, ['tracker', 'stories', 'import', '-f', file, '--json'], env);
    const log2 = (await requests(mock.url)).filter((q) => q.path.startsWith('/api/v3/'));
    const writes2 = log2.filter((q) => q.path !== '/api/v3/stories/search').length;
    report.row('tracker stories import: second run', `${log2.length} requests, ${writes2} writes`, '0 writes', again.code === 0 && writes2 === 0);
  } finally {
    await mock.stop();
  }

  // 2. 4 processes x 100 requests (1 list + 99 creates each) sharing one token's 200/6 s
  const limit = 200;
  const windowS = 6;
  const limited = await serve(BIN, ['--memory', '--tracker-rate-limit', `${limit}/${windowS}s`]);
  try {
    const userDir = tempDir('opsctl-bench-pace-user-');
    const env = {
      OPSCTL_CONFIG_DIR: userDir,
      OPSCTL_TRACKER_URL: limited.url,
      OPSCTL_TRACKER_TOKEN: limited.tracker_token,
      OPSCTL_TRACKER_RATE_LIMIT: `${limit}/${windowS}s`,
    };
    const files = [0, 1, 2, 3].map((p) => {
      const f = join(userDir, `labels-${p}.yaml`);
      writeFileSync(f, `labels:\n${Array.from({ length: 99 }, (_, i) => `  - name: p${p}-${i}\n`).join('')}`);
      return f;
    });
    await clear(limited.url);
    const started = performance.now();
    const runs = await Promise.all(files.map((f) => run(BIN, ['tracker', 'labels', 'apply', '-f', f], env)));
    const wallMs = performance.now() - started;
    const log = (await requests(limited.url)).filter((q) => q.path.startsWith('/api/v3/'));
    const at = log.map((q) => q.at).sort((a, b) => a - b);
    const n429 = log.filter((q) => q.status === 429).length;
    const failures = runs.filter((r) => r.code !== 0).length;
    report.row(
      'tracker: 4 processes x 100 requests at 200/6s, shared pacing',
      `${n429} x 429, ${failures} failed runs, ${log.length} served`,
      '0 x 429',
      n429 === 0 && failures === 0 && log.length === 400,
    );
    // The limit lets request 201 start only a window after request 1 was answered, and (sliding window)
    // the second 200 no faster than the first 200 were served: imposed = 6 s + the first 200's span.
    const span = at[at.length - 1] - at[0];
    const burst = at[limit - 1] - at[0];
    const imposedStrict = Math.floor((log.length - 1) / limit) * windowS * 1000;
    const imposed = imposedStrict + burst;
    report.row(
      'tracker: 4 x 100 at 200/6s, time vs the limit',
      `span ${(span / 1000).toFixed(2)} s vs ${(imposed / 1000).toFixed(2)} s (6 s + ${(burst / 1000).toFixed(2)} s for the first 200) = ${(span / imposed).toFixed(3)}x; vs 6 s alone ${(span / imposedStrict).toFixed(2)}x; 201st sent ${((at[limit] - at[0]) / 1000).toFixed(2)} s after the 1st; wall ${(wallMs / 1000).toFixed(2)} s with start-up`,
      '<= 1.10x',
      span / imposed <= 1.1,
    );
  } finally {
    await limited.stop();
  }
}
