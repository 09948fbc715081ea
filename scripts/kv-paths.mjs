// npm run test:paths: every cell of the kv path matrix (test/e2e/kv-paths-etcd.test.ts) on real etcd, one after
// another, then the table: each starting minor and driver, and how the upgrade ended. CI runs one slice of it.
// Its ssh and systemd cell: test/e2e/kv-paths-ssh-etcd.test.ts (real sshd in network namespaces). Then two paths CI does not run either (vitest.config.ts excludes them unless OPSCTL_PATHS=all): the sandbox's whole
// ladder 3.2 → 3.7 (test/e2e/kv-ladder-etcd.test.ts: rehearsed on a clone, the v2store and WAL fixes) and 3.2 → 3.3
// under the bench's load client (test/e2e/kv-load-upgrade.test.ts).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const out = join(mkdtempSync(join(tmpdir(), 'opsctl-paths-')), 'cells.jsonl');
const files = ['test/e2e/kv-paths-etcd.test.ts', 'test/e2e/kv-paths-ssh-etcd.test.ts', 'test/e2e/kv-ladder-etcd.test.ts', 'test/e2e/kv-load-upgrade.test.ts'];
const r = spawnSync('npx', ['vitest', 'run', '--project', 'e2e', '--maxWorkers', '1', ...files], {
  stdio: 'inherit',
  env: { ...process.env, OPSCTL_PATHS: 'all', OPSCTL_PATHS_OUT: out, OPSCTL_REQUIRE_E2E: '1' },
});
const rows = existsSync(out)
  ? readFileSync(out, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
  : [];
const head = ['cell', 'outcome', 'seconds', 'rehearsal', 'writes (lost)', '/health answers (from)', 'written past'];
const cells = rows.map((x) => [
  x.cell,
  x.outcome,
  String(x.seconds),
  x.rehearsal ?? 'not run',
  `${x.acknowledged} (${x.lost})`,
  `${x.probes}${x.probeAtMs !== undefined ? ` (${(x.probeAtMs / 1000).toFixed(1)} s)` : ''}`,
  x.writtenPast.join('; ') || '-',
]);
const width = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
const line = (c) => `| ${c.map((x, i) => x.padEnd(width[i])).join(' | ')} |`;
console.log(`\nkv path matrix (${rows.length} cells)\n${line(head)}\n|${width.map((w) => '-'.repeat(w + 2)).join('|')}|\n${cells.map(line).join('\n')}`);
process.exit(r.status ?? 1);
