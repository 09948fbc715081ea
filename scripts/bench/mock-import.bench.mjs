// Seeding `opsctl mock serve` with large fixtures (issue 39): `tracker stories import` of 10,000 stories
// (CSV) against a fresh mock and against one already holding 10,000, judged against ten times the
// import of 1,000 into a fresh mock (<= 1.2x: a write costs the stories it makes, not the store's size).
// Wall time of the import as a CI job waits for it; the mock's own CPU time and peak RSS beside it.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { median } from './harness.mjs';
import { run, serve } from './tracker.bench.mjs';

const LIMIT = '1000000/1m';
const TICKS_PER_S = 100; // Linux's USER_HZ, the unit of /proc/PID/stat's utime and stime

/** CPU seconds (user + system) a process has used so far. */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S;
}

/** A process's peak resident memory so far, in MB. */
function peakRssMb(pid) {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmHWM:'));
  return Number(line.split(/\s+/)[1]) / 1024;
}

function csvFile(dir, name, from, n) {
  const file = join(dir, name);
  const rows = Array.from(
    { length: n },
    (_, i) => `SEED-${from + i},Seeded story ${from + i},${['feature', 'bug', 'chore'][i % 3]},${i % 5},seed;batch-${i % 20}`,
  );
  writeFileSync(file, `external_id,name,story_type,estimate,labels\n${rows.join('\n')}\n`);
  return file;
}

export default async function mockImport(report, { BIN, tempDir }) {
  const dir = tempDir('opsctl-bench-mock-import-');
  const args = ['--memory', '--tracker-rate-limit', LIMIT];
  const importInto = async (mock, file, expected) => {
    // the CLI paces itself to the limit it is told (shared by every process of a token): the mock's, lifted
    const env = { OPSCTL_CONFIG_DIR: dir, OPSCTL_TRACKER_URL: mock.url, OPSCTL_TRACKER_TOKEN: mock.tracker_token, OPSCTL_TRACKER_RATE_LIMIT: LIMIT };
    const cpu = cpuSeconds(mock.pid);
    const r = await run(BIN, ['tracker', 'stories', 'import', '-f', file, '--json'], env);
    if (r.code !== 0) throw new Error(`import exited ${r.code}: ${r.stderr}`);
    const created = JSON.parse(r.stdout).created;
    if (created !== expected) throw new Error(`import created ${created}, expected ${expected}`);
    return { s: r.wallMs / 1000, mockCpuS: cpuSeconds(mock.pid) - cpu };
  };

  // one 1,000-story import into a fresh mock, three times (the median)
  const small = csvFile(dir, 'small.csv', 0, 1_000);
  const ones = [];
  for (let i = 0; i < 3; i++) {
    const mock = await serve(BIN, args);
    try {
      ones.push(await importInto(mock, small, 1_000));
    } finally {
      await mock.stop();
    }
  }
  const one = median(ones.map((o) => o.s));
  const tenTimes = 10 * one;

  const big = csvFile(dir, 'big.csv', 0, 10_000);
  const more = csvFile(dir, 'more.csv', 10_000, 10_000);
  const mock = await serve(BIN, args);
  try {
    const fresh = await importInto(mock, big, 10_000);
    const holding = await importInto(mock, more, 10_000);
    const rss = peakRssMb(mock.pid);
    for (const [label, r] of [
      ['a fresh mock', fresh],
      ['a mock holding 10,000', holding],
    ]) {
      const ratio = r.s / tenTimes;
      report.row(
        `tracker stories import of 10,000 into ${label} vs 10 x 1,000 into a fresh one`,
        `${ratio.toFixed(2)}x (${r.s.toFixed(1)} s vs 10 x ${one.toFixed(2)} s; mock CPU ${r.mockCpuS.toFixed(1)} s, mock peak RSS ${rss.toFixed(0)} MB)`,
        '<= 1.2x',
        ratio <= 1.2,
      );
    }
  } finally {
    await mock.stop();
  }
}
