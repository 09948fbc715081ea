// kv upgrade of a real 3-member TLS etcd cluster, 3.2.32 → 3.3.27 (../shared/etcd, extracted as the
// tests do), on the production path: the command driver, client-certificate TLS, no v2-size template
// and the default --settle auto (opsctl measures each member's v2 data over TLS), against the etcd guide's minimal hand procedure run here on the same binaries, the same
// kind of cluster and the same poll interval: per member a snapshot from a live member (etcdctl), stop
// and wait for the process to exit, start the new binary, poll /health; then poll the cluster version
// until 3.3.0. Budget: opsctl's wall-clock time <= 1.2x the hand procedure's (median ratio of
// interleaved rounds, each on a fresh cluster; 5 by default, BENCH_KV_ETCD_ROUNDS). The spread of the
// ratios (min–max, median absolute deviation) and of each side's times is printed and reported, so a
// noisy run is seen as one. Skipped (not failed) without the releases.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { until as waitUntil } from './harness.mjs';
import { pathToFileURL } from 'node:url';

const POLL_MS = 100;

/** The test helpers (TypeScript) that make certificates, real clusters and client load, bundled for the kv benches. */
function helpersFile(ROOT) {
  return join(ROOT, 'node_modules', '.cache', 'opsctl-bench', `etcd-helpers-${createHash('sha256').update(ROOT).digest('hex').slice(0, 12)}.mjs`);
}

export async function helpers(ROOT) {
  // One file per checkout (node_modules may be shared by several work trees, each with its own helpers).
  const out = helpersFile(ROOT);
  mkdirSync(join(out, '..'), { recursive: true });
  const entry = join(ROOT, 'test', 'helpers', 'etcd-releases.ts');
  const r = await build({
    stdin: {
      // (and opsctl's own reading of a WAL: what etcd 3.7 would replay of it, for kv-ladder)
      contents:
        "export * from './etcd-releases.ts'; export * from './etcd-certs.ts'; export * from './etcd-cluster.ts'; export * from './kv-load.ts'; export { walV2Replay } from '../../src/kv/wal/v2-data.ts';",
      resolveDir: join(ROOT, 'test', 'helpers'),
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    write: false,
    define: { 'import.meta.url': JSON.stringify(pathToFileURL(entry).href) },
  });
  writeFileSync(out, r.outputFiles[0].text);
  return import(pathToFileURL(out).href);
}

export default async function kvEtcdBench(report, { BIN, ROOT, median }) {
  const h = await helpers(ROOT);
  h.prepareEtcdReleases(process.env);
  const v32 = process.env.OPSCTL_ETCD_32_DIR;
  const v33 = process.env.OPSCTL_ETCD_33_DIR;
  let dirs;
  try {
    dirs = h.etcdReleaseDirs(process.env);
  } catch (err) {
    console.log(`   ${err.message}`);
  }
  if (!dirs) {
    report.row('kv upgrade real etcd 3.2.32→3.3.27 TLS vs hand procedure', 'skipped (no releases)', '<= 1.2x', process.env.OPSCTL_REQUIRE_E2E !== '1');
    return;
  }
  const rounds = Number(process.env.BENCH_KV_ETCD_ROUNDS ?? 5);
  const certs = h.makeTestCerts({ ips: ['127.0.0.1'] }, 'root');
  const tls = { ca: readFileSync(certs.ca), cert: readFileSync(certs.clientCert), key: readFileSync(certs.clientKey) };
  const get = (url) =>
    new Promise((resolve) => {
      const req = request(url, { ...tls, timeout: 2000 }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode, body }));
      });
      req.on('error', () => resolve(undefined));
      req.on('timeout', () => req.destroy());
      req.end();
    });
  const until = (check, what, timeoutMs = 120_000) => waitUntil(check, what, { timeoutMs, pollMs: POLL_MS });
  const healthy = async (m) => {
    const r = await get(`${m.clientUrl}/health`);
    return r?.status === 200 && /"health":\s*"true"/.test(r.body);
  };
  const clusterVersion = async (c, want) =>
    (await Promise.all(c.members.map((m) => get(`${m.clientUrl}/version`)))).every((r) => r && JSON.parse(r.body).etcdcluster === want);

  async function fresh() {
    const c = await h.realCluster({ size: 3, certs, bins: { 3.2: v32, 3.3: v33 } });
    try {
      for (const m of c.members) c.start(m, '3.2');
      await until(() => clusterVersion(c, '3.2.0'), 'the 3.2 cluster', 60_000);
      for (let i = 0; i < 100; i++) c.etcdctl(v33, ['put', `bench/${i}`, `v${i}`]);
      return c;
    } catch (err) {
      c.destroy(); // only the PIDs this cluster started
      throw err;
    }
  }

  async function byOpsctl(c) {
    const dir = join(c.dir, 'opsctl');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'cluster.yaml');
    writeFileSync(
      file,
      [
        'members:',
        ...c.members.map((m) => `  - { name: ${m.name}, endpoint: "${m.clientUrl}" }`),
        'driver:',
        '  type: command',
        `  stop: ${c.ctl} stop {name}`,
        `  start: ${c.ctl} start {name} {version}`,
        `  running: ${c.ctl} running {name}`,
        `tls: { cacert: ${certs.ca}, cert: ${certs.clientCert}, key: ${certs.clientKey} }`,
        '',
      ].join('\n'),
    );
    const t0 = performance.now();
    const out = execFileSync(
      process.execPath,
      // (--target-bin: the hop's binary where the members run; each member's trial before the first stop needs it)
      [
        BIN,
        'kv',
        'upgrade',
        '--to',
        '3.3',
        '--yes',
        '--no-backup',
        '--cluster',
        file,
        '--target-bin',
        `3.3=${dirs.v33}`,
        '--poll-interval',
        `${POLL_MS}ms`,
        '--json',
      ],
      { env: { ...process.env, OPSCTL_CONFIG_DIR: dir, NO_COLOR: '1', CI: '1' }, stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000 },
    );
    const ms = performance.now() - t0;
    const rep = JSON.parse(out);
    if (rep.status !== 'done') throw new Error('opsctl did not finish');
    if (process.env.BENCH_KV_ETCD_STEPS) for (const s of rep.steps) console.log(`      ${s.id.padEnd(30)} ${String(s.ms).padStart(6)} ms  ${s.detail ?? ''}`);
    return ms;
  }

  async function byHand(c) {
    // The guide's order: one member at a time; the leader is not treated specially.
    const t0 = performance.now();
    for (const m of c.members) {
      const live = c.members.find((x) => x !== m);
      execFileSync(
        '/usr/bin/etcdctl',
        [
          '--endpoints',
          live.clientUrl,
          '--cacert',
          certs.ca,
          '--cert',
          certs.clientCert,
          '--key',
          certs.clientKey,
          'snapshot',
          'save',
          join(c.dir, `${m.name}.db`),
        ],
        { env: { ETCDCTL_API: '3', PATH: '/usr/bin:/bin' }, stdio: 'pipe' },
      );
      c.stop(m);
      await until(() => !c.alive(m), `${m.name} to exit`);
      c.start(m, '3.3');
      await until(() => healthy(m), `${m.name} healthy`);
    }
    await until(() => clusterVersion(c, '3.3.0'), 'cluster version 3.3.0');
    return performance.now() - t0;
  }

  // Warm the page cache with every program both sides run, so the first round's first side does not
  // pay for reading the binaries from disk alone.
  for (const b of [join(dirs.v32, 'etcd'), join(dirs.v33, 'etcd')]) execFileSync(b, ['--version'], { stdio: 'ignore' });
  execFileSync('/usr/bin/etcdctl', ['version'], { stdio: 'ignore', env: { ETCDCTL_API: '3' } });
  execFileSync(process.execPath, [BIN, '--version'], { stdio: 'ignore' });

  const load0 = loadavg()[0];
  const pairs = [];
  try {
    for (let r = 0; r < rounds; r++) {
      // Interleaved, and the order alternates, so a busy spell hits both alike.
      const one = async (f) => {
        const c = await fresh();
        try {
          return await f(c);
        } finally {
          c.destroy();
        }
      };
      const pair = {};
      for (const k of r % 2 === 0 ? ['opsctl', 'hand'] : ['hand', 'opsctl']) pair[k] = await one(k === 'opsctl' ? byOpsctl : byHand);
      pairs.push(pair);
    }
  } finally {
    certs.cleanup();
  }
  const ratios = pairs.map((p) => p.opsctl / p.hand);
  const med = median(ratios);
  // Spread: the ratios' range and median absolute deviation; each side's times as median ± MAD.
  const mad = (xs) => median(xs.map((x) => Math.abs(x - median(xs))));
  const side = (k) => {
    const xs = pairs.map((p) => p[k] / 1000);
    return `${median(xs).toFixed(1)} s ± ${mad(xs).toFixed(1)} (${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)})`;
  };
  const range = `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}x`;
  console.log(
    `   rounds: ${rounds}; opsctl ${pairs.map((p) => (p.opsctl / 1000).toFixed(1)).join(' ')} s, hand procedure ${pairs.map((p) => (p.hand / 1000).toFixed(1)).join(' ')} s; ratios ${ratios.map((x) => `${x.toFixed(2)}x`).join(' ')}`,
  );
  console.log(`   opsctl ${side('opsctl')}; hand procedure ${side('hand')}; ratio median ${med.toFixed(2)}x, MAD ${mad(ratios).toFixed(2)}, range ${range}`);
  console.log(`   load average ${load0.toFixed(1)} → ${loadavg()[0].toFixed(1)} on ${cpus().length} CPUs`);
  report.row(
    'kv upgrade real etcd 3.2.32→3.3.27, 3 members, TLS: opsctl vs hand procedure',
    `${med.toFixed(2)}x (median of ${rounds}; MAD ${mad(ratios).toFixed(2)}, range ${range})`,
    '<= 1.2x',
    med <= 1.2,
  );
  rmSync(helpersFile(ROOT), { force: true });
}
