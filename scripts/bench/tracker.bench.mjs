// Tracker budgets: `apply` of N labels with k changed makes exactly 1 list + k writes, and a
// 1000-request run against the rate-limited mock has 0 failures and takes at most 10% longer than
// the limit itself imposes. Runs the built binary against `opsctl mock serve --test`.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const TOKEN = 'trk_bench_token_0000000000000000';

/** Starts `opsctl mock serve --test` and resolves {url, pid, stop}. */
export function serve(BIN, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'mock', 'serve', '--test', '--json', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    let out = '';
    let err = '';
    child.stderr.on('data', (c) => (err += c));
    child.stdout.on('data', (c) => {
      out += c;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) {
        const info = JSON.parse(line);
        resolve({ ...info, pid: child.pid, stop: () => new Promise((r) => (child.once('exit', r), child.kill('SIGINT'))) });
      }
    });
    child.on('exit', (code) => reject(new Error(`mock serve exited ${code}: ${err}`)));
  });
}

export function run(BIN, args, env, input) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', CI: '1', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.stdin.end(input ?? '');
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr, wallMs: performance.now() - started }));
  });
}

const requests = async (url) => (await fetch(`${url}/__mock/requests`)).json();
const clear = (url) => fetch(`${url}/__mock/requests`, { method: 'DELETE' });
const labelsYaml = (items) => `labels:\n${items.map((l) => `  - name: ${l.name}\n    color: "${l.color}"\n    description: ${l.description}\n`).join('')}`;

export default async function tracker(report, { BIN, tempDir }) {
  const dir = tempDir('opsctl-bench-tracker-');

  // 1. apply of 500 labels with 50 changed: exactly 1 list + 50 writes
  const at = '2026-01-01T00:00:00.000Z';
  const labels = Array.from({ length: 500 }, (_, i) => ({
    id: i + 1,
    name: `label-${String(i).padStart(3, '0')}`,
    description: `label number ${i}`,
    color: '#336699',
    external_id: null,
    archived: false,
    app_url: `https://app.tracker.example/workspace/label/${i + 1}`,
    entity_type: 'label',
    created_at: at,
    updated_at: at,
  }));
  const statePath = join(dir, 'state.json');
  writeFileSync(statePath, JSON.stringify({ tracker: { token: TOKEN, seq: 500, workspaceId: '00000000-0000-4000-8000-000000000001', labels } }));
  const desired = labels.map((l, i) => ({ ...l, color: i % 10 === 0 ? '#993366' : l.color }));
  const file = join(dir, 'labels.yaml');
  writeFileSync(file, labelsYaml(desired));
  const mock = await serve(BIN, ['--state', statePath]);
  try {
    const env = { OPSCTL_CONFIG_DIR: dir, OPSCTL_TRACKER_URL: mock.url, OPSCTL_TRACKER_TOKEN: TOKEN };
    await clear(mock.url);
    const r = await run(BIN, ['tracker', 'labels', 'apply', '-f', file], env);
    if (r.code !== 0) throw new Error(`apply exited ${r.code}: ${r.stderr}`);
    const log = await requests(mock.url);
    const lists = log.filter((q) => q.method === 'GET').length;
    const writes = log.filter((q) => q.method !== 'GET').length;
    report.row(
      'tracker labels apply: 500 labels, 50 changed',
      `${lists} list + ${writes} writes (${(r.wallMs / 1000).toFixed(2)} s)`,
      '1 list + 50 writes',
      lists === 1 && writes === 50,
    );
    await clear(mock.url);
    const again = await run(BIN, ['tracker', 'labels', 'apply', '-f', file], env);
    const log2 = await requests(mock.url);
    const writes2 = log2.filter((q) => q.method !== 'GET').length;
    report.row(
      'tracker labels apply: second run',
      `${log2.length - writes2} list + ${writes2} writes`,
      '1 list + 0 writes',
      again.code === 0 && writes2 === 0 && log2.length === 1,
    );
  } finally {
    await mock.stop();
  }

  // 2. 1000 requests (1 list + 999 creates) against a mock limited to 200 per 6 s, paced the same
  const limit = 200;
  const windowS = 6;
  const total = 1000;
  const limited = await serve(BIN, ['--memory', '--tracker-rate-limit', `${limit}/${windowS}s`]);
  try {
    const many = Array.from({ length: total - 1 }, (_, i) => ({ name: `paced-${i}`, color: '#000000', description: 'paced' }));
    const f = join(dir, 'many.yaml');
    writeFileSync(f, labelsYaml(many));
    const env = {
      OPSCTL_CONFIG_DIR: dir,
      OPSCTL_TRACKER_URL: limited.url,
      OPSCTL_TRACKER_TOKEN: limited.tracker_token,
      OPSCTL_TRACKER_RATE_LIMIT: `${limit}/${windowS}s`,
    };
    await clear(limited.url);
    const r = await run(BIN, ['tracker', 'labels', 'apply', '-f', f], env);
    const log = await requests(limited.url);
    const failures = log.filter((q) => q.status >= 400).length + (r.code === 0 ? 0 : 1);
    const first = log[0]?.at ?? 0;
    const last = log[log.length - 1]?.at ?? 0;
    // the least time the limit allows for `total` requests: the last batch may start only after floor((n-1)/limit) windows
    const imposed = Math.floor((total - 1) / limit) * windowS * 1000;
    const ratio = r.wallMs / imposed;
    report.row(
      `tracker: ${total} requests at ${limit}/${windowS}s, failures`,
      `${failures} (${log.length} served, ${log.filter((q) => q.status === 429).length} x 429)`,
      '0',
      failures === 0 && log.length === total,
    );
    report.row(
      `tracker: ${total} requests at ${limit}/${windowS}s, time vs limit`,
      `${(r.wallMs / 1000).toFixed(2)} s vs ${(imposed / 1000).toFixed(1)} s (${ratio.toFixed(3)}x; server span ${((last - first) / 1000).toFixed(2)} s)`,
      '<= 1.10x',
      ratio <= 1.1,
    );
  } finally {
    await limited.stop();
  }
}
