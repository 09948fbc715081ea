// The single executable (out/opsctl, built by `npm run package`): its start-up against `node -e 0`,
// both measured from outside the process (bash's `times` for the children's user+system CPU), since
// the executable cannot load the in-process probe the other rows use.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** CPU ms (user + system) of a run of FILE ARGS from outside, by bash's `times` (its children's); with `runs`, per run of a batch. */
export function batchCpuMs(file, args, env, runs = 1) {
  const out = execFileSync('bash', ['-c', 'n=$1; shift; for ((i = 0; i < n; i++)); do "$@" >/dev/null 2>&1; done; times', '_', String(runs), file, ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', ...env },
  });
  const [user, sys] = out
    .trim()
    .split('\n')[1]
    .split(/\s+/)
    .map((t) => {
      const m = /^(\d+)m([\d.]+)s$/.exec(t);
      return Number(m[1]) * 60_000 + Number(m[2]) * 1000;
    });
  return (user + sys) / runs;
}

const cpuMs = (file, args, env) => batchCpuMs(file, args, env);

export default async function (report, { ROOT, median, tempDir }) {
  const exe = join(ROOT, 'out', 'opsctl');
  if (!existsSync(exe)) execFileSync('npm', ['run', 'package', '--silent'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  const env = { OPSCTL_CONFIG_DIR: tempDir() };
  const rounds = Number(process.env.BENCH_ROUNDS ?? 15);
  const cases = [
    ['node -e 0', process.execPath, ['-e', '0']],
    ['out/opsctl --version', exe, ['--version']],
    ['out/opsctl --help', exe, ['--help']],
    ['out/opsctl tracker labels list (embedded)', exe, ['tracker', 'labels', 'list']],
    ['node bin/opsctl.cjs --version', process.execPath, [join(ROOT, 'bin', 'opsctl.cjs'), '--version']],
  ];
  const samples = new Map(cases.map(([name]) => [name, []]));
  for (let r = 0; r < rounds; r++) for (const [name, file, args] of cases) samples.get(name).push(cpuMs(file, args, env));
  const base = median(samples.get('node -e 0'));
  console.log(`baseline (measured from outside): node -e 0 = ${base.toFixed(1)} ms CPU`);
  for (const [name] of cases.slice(1)) {
    const ms = median(samples.get(name));
    console.log(`     ${name.padEnd(58)} ${(ms / base).toFixed(2)}x (${ms.toFixed(1)} ms)`);
  }
  // dist/'s chunks ride in the executable as assets with the code compiled at package time (bin/sea.cjs):
  // it is held to the npm package's budgets
  const ratio = (name) => median(samples.get(name)) / base;
  const exeVersion = ratio('out/opsctl --version');
  const exeList = ratio('out/opsctl tracker labels list (embedded)');
  report.row('single executable --version: CPU vs node -e 0', `${exeVersion.toFixed(2)}x`, '<= 1.2x', exeVersion <= 1.2);
  report.row('single executable tracker labels list (embedded): CPU vs node -e 0', `${exeList.toFixed(2)}x`, '<= 2x', exeList <= 2);
}
