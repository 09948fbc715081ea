// The start-up budgets of issue 60 as one table: each verb's CPU (user + system, the process and its
// children, measured from outside with bash's `times`, as for the single executable, which cannot load the
// in-process probe) against `node -e 0`, for the npm launcher (node bin/opsctl.cjs) and, when built, the single
// executable (out/opsctl) side by side. Rounds are interleaved (node -e 0, then every verb on every launcher, in
// an order that turns each round); a verb's figure is the median of its per-round ratios to that round's
// `node -e 0`, so a machine that slows down meanwhile moves both sides of a ratio alike.
// test/e2e/startup-ratios.test.ts runs the same with a few rounds and a generous budget (a regression, not the figures).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { batchCpuMs } from './package.bench.mjs';

/**
 * The verbs and their budgets (x `node -e 0`): help 1.1x, every other verb 1.3x. `kv get` joins them when a real
 * etcd runs for the bench (kvGetVerb); the single executable's own budgets (issue 60: --version and kv get at or
 * below node -e 0, the embedded list 1.1x) are its `sea` figures.
 */
export const VERBS = [
  { name: '--version', args: ['--version'], budget: 1.1, sea: 1 },
  { name: '--help', args: ['--help'], budget: 1.1 },
  { name: 'labels --help', args: ['labels', '--help'], budget: 1.1 },
  { name: 'kv --help', args: ['kv', '--help'], budget: 1.1 },
  { name: 'tracker stories create --help', args: ['tracker', 'stories', 'create', '--help'], budget: 1.1 },
  { name: 'tracker labels list (embedded)', args: ['tracker', 'labels', 'list'], budget: 1.3, sea: 1.1 },
];

/** `kv get KEY` against a real etcd at `endpoints`: a verb an operator runs in loops (beside etcdctl's, printed apart). */
export function kvGetVerb(endpoints, key) {
  return { name: 'kv get (real etcd)', args: ['kv', 'get', key, '--endpoints', endpoints], budget: 1.3, sea: 1 };
}

/** The budget of `row` for the launcher `launcher` (the single executable's own where it has one). */
export function budgetOf(row, launcher) {
  return launcher === 'single executable' && row.sea !== undefined ? row.sea : row.budget;
}

const median = (values) => {
  const s = [...values].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/**
 * `launchers`: { name: [file, ...leading args] } (e.g. npm: [node, bin/opsctl.cjs]); `env` for every opsctl run
 * (OPSCTL_CONFIG_DIR with the embedded state the list reads). Returns node -e 0's median CPU ms and per verb
 * and launcher the median ratio and CPU ms.
 */
export function startupRatios({ launchers, verbs = VERBS, rounds, env }) {
  const loadBefore = loadAverage();
  const runs = verbs.flatMap((v) => Object.entries(launchers).map(([launcher, [file, ...lead]]) => ({ v, launcher, file, args: [...lead, ...v.args] })));
  // one unmeasured run each: the code cache is written on a first run
  for (const r of runs) batchCpuMs(r.file, r.args, env);
  const base = [];
  const samples = new Map(runs.map((r) => [r, []]));
  for (let round = 0; round < rounds; round++) {
    // (node -e 0 under the same environment as the verbs: NODE_EXTRA_CA_CERTS set or not, bench.mjs)
    const b = batchCpuMs(process.execPath, ['-e', '0'], env);
    base.push(b);
    const order = runs.map((_, i) => runs[(i + round) % runs.length]);
    for (const r of order) samples.get(r).push(batchCpuMs(r.file, r.args, env) / b);
  }
  const rows = verbs.map((v) => ({
    ...v,
    launchers: Object.fromEntries(
      runs.filter((r) => r.v === v).map((r) => [r.launcher, { ratio: median(samples.get(r)), cpuMs: median(samples.get(r)) * median(base) }]),
    ),
  }));
  return { baseMs: median(base), rows, rounds, load: [loadBefore, loadAverage()] };
}

/** The machine's 1-minute load average (Linux), to print beside the figures: a ratio reads higher on a busy machine. */
function loadAverage() {
  try {
    return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  } catch {
    return undefined;
  }
}

/** Sets up the embedded state a list reads (three labels) in OPSCTL_CONFIG_DIR `dir`, through `bin`. */
export function embeddedLabels(bin, dir) {
  for (const name of ['bug', 'feature', 'chore'])
    execFileSync(process.execPath, [bin, 'tracker', 'labels', 'create', '--name', name], { env: { ...process.env, OPSCTL_CONFIG_DIR: dir }, stdio: 'ignore' });
}

/**
 * Prints the table (each verb, each launcher's ratio and CPU, its budget and whether it is met) and a report
 * row per verb and launcher. `reference`: other programs' lines printed under it (etcdctl's get).
 */
export function printStartupTable(report, { baseMs, rows, rounds, load = [] }, reference = []) {
  const names = Object.keys(rows[0]?.launchers ?? {});
  const cell = (row, n) => {
    const { ratio, cpuMs } = row.launchers[n];
    const budget = budgetOf(row, n);
    return `${ratio.toFixed(2)}x (${cpuMs.toFixed(0)} ms) <= ${budget}x ${ratio <= budget ? 'ok  ' : 'OVER'}`;
  };
  const loads = load.every((l) => l !== undefined) && load.length ? `, load average ${load.map((l) => l.toFixed(1)).join(' -> ')}` : '';
  console.log(`\nstart-up, CPU vs node -e 0 (${baseMs.toFixed(1)} ms; medians of per-round ratios of ${rounds} rounds, measured from outside${loads})`);
  console.log(`  ${'verb'.padEnd(34)}${names.map((n) => n.padStart(34)).join('')}`);
  for (const row of rows) console.log(`  ${row.name.padEnd(34)}${names.map((n) => cell(row, n).padStart(34)).join('')}`);
  for (const line of reference) console.log(`  ${line}`);
  console.log('');
  for (const row of rows)
    for (const n of names) {
      const r = row.launchers[n].ratio;
      const budget = budgetOf(row, n);
      report.row(`${n}: opsctl ${row.name}: CPU vs node -e 0`, `${r.toFixed(2)}x`, `<= ${budget}x`, r <= budget);
    }
}
