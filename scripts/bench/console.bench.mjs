// The mock authorization server's developer console and security events: start-up cost of
// `mock clients list` and `mock events trigger` against the embedded mock (the trigger with its receiver
// down, so it also pays for a failed first delivery attempt and must still exit at once).
import { createServer } from 'node:net';

async function freePort() {
  const srv = createServer();
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address();
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

export default async function consoleBench(report, { BIN, interleaved, measure, tempDir }) {
  const dir = tempDir();
  const env = { OPSCTL_CONFIG_DIR: dir };
  const port = await freePort();
  const setup = [
    [BIN, 'mock', 'clients', 'create', '--type', 'mobile_b', '--name', 'Bench', '--bundle-id', 'com.example.bench', '--team-id', 'ABCDE12345', '--integrity'],
    [BIN, 'mock', 'events', 'receivers', 'add', '--url', `http://127.0.0.1:${port}/down`, '--client-id', 'opsctl-desktop.apps.mock'],
    // a key made once, as a long-lived state has it
    [BIN, 'mock', 'events', 'trigger', 'sessions-revoked', '--user', 'alice@example.com'],
  ];
  for (const args of setup) {
    const r = await measure(args, { env });
    if (r.code !== 0) throw new Error(`console bench setup failed: ${r.stderr}`);
  }
  const rounds = Number(process.env.BENCH_ROUNDS ?? 15);
  const names = ['opsctl mock clients list (embedded)', 'opsctl mock events trigger, receiver down (embedded)'];
  const results = await interleaved(
    [
      { name: 'node -e 0', args: ['-e', '0'] },
      { name: names[0], args: [BIN, 'mock', 'clients', 'list'], env },
      { name: names[1], args: [BIN, 'mock', 'events', 'trigger', 'sessions-revoked', '--user', 'bob@example.com'], env },
    ],
    rounds,
  );
  const node = results['node -e 0'].cpuMs;
  for (const name of names) {
    const r = results[name].cpuMs / node;
    report.row(`${name}: CPU vs node -e 0`, `${r.toFixed(2)}x (${results[name].cpuMs.toFixed(1)} ms)`, '<= 3x', r <= 3);
  }
  const peak = Math.max(...names.map((n) => results[n].maxRssMb));
  report.row('mock console: peak memory', `${peak.toFixed(1)} MB`, '< 100 MB', peak < 100);
}
