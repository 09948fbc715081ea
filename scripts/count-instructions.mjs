// `node scripts/count-instructions.mjs [-n RUNS] [--against CHECKOUT] -- ARGS...`: the start-up figures that do not
// move with the machine's load, for `node bin/opsctl.cjs ARGS` (default: the embedded `tracker labels list`, in a
// fresh configuration with three labels) beside `node -e 0`, and beside another built checkout's (--against: a
// before/after of one change). Per run, interleaved, medians of RUNS (default 7):
// - instructions of the main thread (valgrind `callgrind --separate-threads=yes`, its first thread), less V8's
//   hash-seed set-up (`HashSeed::InitializeRoots`: a search for random primes that moves a count by up to 7 M
//   between runs of the same build);
// - peak RSS and minor page faults (`/usr/bin/time`).
// NODE_EXTRA_CA_CERTS is unset for every run: with it, Node 20 parses that bundle at start-up, before any script
// (415 M instructions for the system bundle, nodejs/node#40524), which would drown what opsctl does. Each checkout
// keeps its own code cache (OPSCTL_CODE_CACHE), warmed by two runs first: two builds sharing one would prune each
// other's. Needs valgrind (callgrind, callgrind_annotate).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { embeddedLabels } from './bench/startup-table.mjs';

const at = process.argv.indexOf('--');
const option = (name) => {
  const i = process.argv.indexOf(name);
  return i > 0 && (at < 0 || i < at) ? process.argv[i + 1] : undefined;
};
const runs = Number(option('-n') ?? 7);
const args = at > 0 ? process.argv.slice(at + 1) : ['tracker', 'labels', 'list'];
const checkouts = { this: resolve('.'), ...(option('--against') ? { against: resolve(option('--against')) } : {}) };
const work = mkdtempSync(join(tmpdir(), 'opsctl-instructions-'));
const env = { ...process.env, OPSCTL_CONFIG_DIR: process.env.OPSCTL_CONFIG_DIR ?? join(work, 'config') };
delete env.NODE_EXTRA_CA_CERTS;

/** One run of `command`: main-thread instructions less the hash seed's, peak RSS (KB), minor faults. */
function measure(command, runEnv) {
  const out = join(work, 'cg');
  spawnSync('valgrind', ['--tool=callgrind', '--separate-threads=yes', `--callgrind-out-file=${out}`, ...command], { env: runEnv, stdio: 'ignore' });
  const main = Number(/^summary: (\d+)/m.exec(readFileSync(`${out}-01`, 'utf8'))?.[1]);
  const annotated = spawnSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', `${out}-01`], { encoding: 'utf8', maxBuffer: 1 << 28 }).stdout;
  const seed = Number(/^\s*([\d,]+) .*HashSeed::InitializeRoots/m.exec(annotated)?.[1].replaceAll(',', '') ?? 0);
  for (let t = 1; t < 100; t++) rmSync(`${out}-${String(t).padStart(2, '0')}`, { force: true });
  const timed = spawnSync('/usr/bin/time', ['-f', '%M %R', ...command], { env: runEnv, encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
  const [rss, faults] = timed.stderr.trim().split('\n').at(-1).split(' ').map(Number);
  return { instructions: main - seed, rss, faults };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

try {
  const programs = { 'node -e 0': { command: [process.execPath, '-e', '0'], env } };
  for (const [name, dir] of Object.entries(checkouts)) {
    const runEnv = { ...env, OPSCTL_CODE_CACHE: join(work, `cache-${name}`) };
    programs[`${name} (${dir})`] = { command: [process.execPath, join(dir, 'bin', 'opsctl.cjs'), ...args], env: runEnv };
  }
  if (!process.env.OPSCTL_CONFIG_DIR) embeddedLabels(programs[Object.keys(programs)[1]].command[1], env.OPSCTL_CONFIG_DIR);
  for (const { command, env: runEnv } of Object.values(programs).slice(1))
    for (let i = 0; i < 2; i++) spawnSync(command[0], command.slice(1), { env: runEnv, stdio: 'ignore' });
  const samples = Object.fromEntries(Object.keys(programs).map((name) => [name, []]));
  for (let round = 0; round < runs; round++) for (const [name, p] of Object.entries(programs)) samples[name].push(measure(p.command, p.env));
  console.log(`opsctl ${args.join(' ')}: ${runs} interleaved runs, medians (NODE_EXTRA_CA_CERTS unset)`);
  for (const [name, list] of Object.entries(samples)) {
    const ins = list.map((s) => s.instructions);
    console.log(
      `${name}: ${(median(ins) / 1e6).toFixed(1)} M instructions (${(Math.min(...ins) / 1e6).toFixed(1)}-${(Math.max(...ins) / 1e6).toFixed(1)}),` +
        ` ${(median(list.map((s) => s.rss)) / 1024).toFixed(1)} MB RSS, ${median(list.map((s) => s.faults))} minor faults`,
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
