// Label service: start-up cost of `labels list` / `labels apply` against the embedded mock, and the
// request count of an apply with k changed items (reads: limits + one list page; writes: one :delta).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

function labelFile(fields, changed = 0) {
  const lines = ['title: Bench', 'fields:'];
  for (let i = 0; i < fields; i++) {
    lines.push(`  - name: F${i}`, '    type: selection', '    choices:');
    for (let j = 0; j < 5; j++) lines.push(`      - {name: C${j}, description: "${i < changed && j === 0 ? 'changed' : 'same'}"}`);
  }
  return `${lines.join('\n')}\n`;
}

export default async function labelsBench(report, { BIN, interleaved, measure, tempDir }) {
  const dir = tempDir();
  mkdirSync(join(dir, 'data'), { recursive: true });
  // a signed-in user: an access token in the embedded authorization server's state
  const token = `ya29.bench${Date.now()}`;
  const scopes = ['https://www.googleapis.com/auth/drive.labels'];
  const record = { token, client_id: 'bench', sub: 'ada', email: 'ada@example.com', scopes, expires_at: Date.now() + 3_600_000, revoked: false };
  writeFileSync(join(dir, 'data', 'mock-state.json'), JSON.stringify({ oauth: { accessTokens: { [token]: record } } }));
  const env = { OPSCTL_CONFIG_DIR: dir, OPSCTL_ACCESS_TOKEN: token };
  const base = join(dir, 'base.yaml');
  const changed = join(dir, 'changed.yaml');
  const k = 3;
  writeFileSync(base, labelFile(10));
  writeFileSync(changed, labelFile(10, k));
  const setup = await measure([BIN, 'labels', 'apply', '-f', base, '--publish'], { env });
  if (setup.code !== 0) throw new Error(`labels bench setup failed: ${setup.stderr}`);

  const rounds = Number(process.env.BENCH_ROUNDS ?? 15);
  const results = await interleaved(
    [
      { name: 'node -e 0', args: ['-e', '0'] },
      { name: 'opsctl labels list (embedded)', args: [BIN, 'labels', 'list'], env },
      { name: 'opsctl labels apply, up to date (embedded)', args: [BIN, 'labels', 'apply', '-f', base], env },
    ],
    rounds,
  );
  const node = results['node -e 0'].cpuMs;
  for (const name of ['opsctl labels list (embedded)', 'opsctl labels apply, up to date (embedded)']) {
    const r = results[name].cpuMs / node;
    report.row(`${name}: CPU vs node -e 0`, `${r.toFixed(2)}x (${results[name].cpuMs.toFixed(1)} ms)`, '<= 3x', r <= 3);
  }
  const peak = Math.max(results['opsctl labels list (embedded)'].maxRssMb, results['opsctl labels apply, up to date (embedded)'].maxRssMb);
  report.row('labels: peak memory', `${peak.toFixed(1)} MB`, '< 100 MB', peak < 100);

  // request count of an apply with k changed choices (from the --debug request log, tokens redacted)
  const run = await measure([BIN, '--debug', 'labels', 'apply', '-f', changed], { env });
  if (run.code !== 0) throw new Error(`labels apply failed: ${run.stderr}`);
  const sent = run.stderr.split('\n').filter((l) => /\[labels\] > (GET|POST|PATCH|DELETE) /.test(l) && !l.includes('(attempt'));
  const reads = sent.filter((l) => l.includes('> GET ')).length;
  const writes = sent.length - reads;
  report.row(`labels apply of 10 fields with ${k} changed: requests`, `${reads} reads + ${writes} write`, '2 reads + 1 write', reads === 2 && writes === 1);
  const again = await measure([BIN, '--debug', 'labels', 'apply', '-f', changed], { env });
  const againWrites = again.stderr.split('\n').filter((l) => /\[labels\] > (POST|PATCH|DELETE) /.test(l)).length;
  report.row('labels apply again (idempotent): writes', String(againWrites), '0', againWrites === 0);
}
