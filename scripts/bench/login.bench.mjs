// Login: CPU of the sign-in commands against the embedded mock, as ratios to `node -e 0` (budget 3x).
export default async function (report, { BIN, interleaved, measure, tempDir }) {
  const rounds = Math.max(5, Math.floor(Number(process.env.BENCH_ROUNDS ?? 15) / 2));
  const env = { OPSCTL_CONFIG_DIR: tempDir('opsctl-bench-login-') };
  const first = await measure([BIN, 'login', '--consent-as', 'alice@example.com'], { env });
  if (first.code !== 0) throw new Error(`login setup failed: ${first.stderr}`);
  const results = await interleaved(
    [
      { name: 'node -e 0', args: ['-e', '0'] },
      { name: 'opsctl auth status', args: [BIN, 'auth', 'status'], env },
      { name: 'opsctl auth token', args: [BIN, 'auth', 'token'], env },
      { name: 'opsctl api /media/v3/channels (embedded)', args: [BIN, 'api', '/media/v3/channels', '-f', 'part=snippet', '-f', 'mine=true'], env },
      { name: 'opsctl login --consent-as (embedded, whole flow)', args: [BIN, 'login', '--consent-as', 'alice@example.com'], env },
    ],
    rounds,
  );
  const base = results['node -e 0'].cpuMs;
  for (const [name, r] of Object.entries(results)) {
    if (name === 'node -e 0') continue;
    const ratio = r.cpuMs / base;
    report.row(`${name}: CPU vs node -e 0`, `${ratio.toFixed(2)}x (${r.cpuMs.toFixed(1)} ms)`, '<= 3x', ratio <= 3);
  }
  const peak = Math.max(...Object.entries(results).filter(([n]) => n !== 'node -e 0').map(([, v]) => v.maxRssMb));
  report.row('login commands: peak memory', `${peak.toFixed(1)} MB`, '< 100 MB', peak < 100);
}
