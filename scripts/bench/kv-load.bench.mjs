// Zero downtime as clients see it: the load client of test/helpers/kv-load.ts (the JSON gateway over
// client-certificate TLS, failover across all three members, one retry of a round in which every
// member failed) writes and reads continuously while `opsctl kv upgrade` (the built binary, command
// driver, --settle 5s) rolls a real 3-member cluster 3.2.32 → 3.3.27. Reports requests sent, failed
// after the retry, p50/p99 latency before, during and after, the longest gap between two
// acknowledged writes, and acknowledged writes lost (every one read back at the end).
// Budgets: 0 failed after retry, 0 lost, longest gap below the settle time. Rounds: BENCH_KV_LOAD_ROUNDS
// (default 2, each on a fresh cluster; the rows sum the counts and take the worst gap).
// `npm run bench -- --only kv-load` runs this alone. Skipped (not failed) without the releases.
//
// Then the whole ladder (issues 28 item 7, 45): `kv upgrade --to 3.7` takes a fresh 3-member 3.2.32 cluster
// to 3.7.3 in one run, five hops (3.4 from Debian, 3.5.35/3.6.16/3.7.3 from scripts/etcd-build.sh; command
// driver, plain HTTP, etcd's default snapshot-count, data dirs backed up, every member tried through a
// `trial: sh -s` template) while three clients write and read: the gateway straight, opsctl's own gateway
// client and etcdctl (gRPC). Per hop: the longest gap between two acknowledged writes and the p99
// latency; over the run: 0 failed after the retry, 0 acknowledged writes lost. BENCH_KV_LOAD_LADDER=0 skips it.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { until as waitUntil } from './harness.mjs';
import { promisify } from 'node:util';
import { helpers } from './kv-etcd.bench.mjs';

const SETTLE_MS = 5000;
const PHASE_ACKS = 300;

export default async function kvLoadBench(report, { BIN, ROOT }) {
  const h = await helpers(ROOT);
  h.prepareEtcdReleases(process.env);
  let dirs;
  try {
    dirs = h.etcdReleaseDirs(process.env);
  } catch (err) {
    console.log(`   ${err.message}`);
  }
  if (!dirs) {
    report.row('kv upgrade under client load', 'skipped (no releases)', '0 failed, 0 lost', process.env.OPSCTL_REQUIRE_E2E !== '1');
    return;
  }
  const rounds = Number(process.env.BENCH_KV_LOAD_ROUNDS ?? 2);
  const certs = h.makeTestCerts({ ips: ['127.0.0.1'] }, 'root');
  const tls = { ca: readFileSync(certs.ca), cert: readFileSync(certs.clientCert), key: readFileSync(certs.clientKey) };
  const until = (check, what, timeoutMs = 120_000) => waitUntil(check, what, { timeoutMs, pollMs: 50 });
  const results = [];
  try {
    for (let r = 0; r < rounds; r++) {
      const c = await h.realCluster({ size: 3, certs, bins: { 3.2: dirs.v32, 3.3: dirs.v33 } });
      try {
        for (const m of c.members) c.start(m, '3.2');
        await until(
          () => {
            try {
              c.etcdctl(dirs.v33, ['put', 'bench/ready', 'yes']);
              return true;
            } catch {
              return false;
            }
          },
          'the 3.2 cluster',
          60_000,
        );
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
        const load = h.startLoad({ endpoints: c.endpoints, tls });
        await until(() => load.acknowledgedIn('before') >= PHASE_ACKS, 'writes before the upgrade');
        load.phase('during');
        let out;
        try {
          // Asynchronous: the load client runs in this process and must keep sending meanwhile.
          ({ stdout: out } = await promisify(execFile)(
            process.execPath,
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
              // the hop's binary where the members run (the trial of each member before the first stop needs it)
              '--target-bin',
              `3.3=${dirs.v33}`,
              '--settle',
              `${SETTLE_MS}ms`,
              '--poll-interval',
              '100ms',
              '--json',
            ],
            { env: { ...process.env, OPSCTL_CONFIG_DIR: dir, NO_COLOR: '1', CI: '1' }, timeout: 300_000, maxBuffer: 16 * 1024 * 1024 },
          ));
        } finally {
          load.phase('after');
        }
        if (JSON.parse(out).status !== 'done') throw new Error('opsctl did not finish the upgrade');
        await until(() => load.acknowledgedIn('after') >= PHASE_ACKS, 'writes after the upgrade');
        const res = await load.stop();
        results.push(res);
        const ph = (name) => res.phases.find((p) => p.phase === name);
        console.log(
          `   round ${r + 1}: ${res.sent} requests (${res.attempts} attempts), ${res.failedAfterRetry} failed after retry, ${res.lost} lost of ${res.acknowledged} acknowledged, longest write gap ${res.longestWriteGapMs} ms; during: ${ph('during').sent} requests, ${ph('during').failedOver} failed over`,
        );
        if (res.lastErrors.length) console.log(`   last member errors: ${res.lastErrors.slice(-3).join(' | ')}`);
      } finally {
        c.destroy();
      }
    }
  } finally {
    certs.cleanup();
  }
  if (process.env.BENCH_KV_LOAD_LADDER !== '0') await ladderUnderLoad(report, h, dirs, BIN, until);
  const sum = (f) => results.reduce((n, x) => n + f(x), 0);
  const gap = Math.max(...results.map((x) => x.longestWriteGapMs));
  const phase = (name) => results.map((x) => x.phases.find((p) => p.phase === name));
  const worst = (xs, k) => Math.max(...xs.map((p) => p[k] ?? 0));
  report.row(
    `kv upgrade under load: requests sent (${rounds} rounds, 3 members, TLS)`,
    `${sum((x) => x.sent)} (${sum((x) => x.writes)} writes, ${sum((x) => x.reads)} reads; ${sum((x) => x.attempts)} attempts)`,
    'info',
    true,
  );
  report.row('kv upgrade under load: failed after retry', String(sum((x) => x.failedAfterRetry)), '0', sum((x) => x.failedAfterRetry) === 0);
  report.row('kv upgrade under load: acknowledged writes lost', `${sum((x) => x.lost)} of ${sum((x) => x.acknowledged)}`, '0', sum((x) => x.lost) === 0);
  report.row('kv upgrade under load: longest gap between two acknowledged writes', `${gap} ms`, `< settle ${SETTLE_MS} ms`, gap < SETTLE_MS);
  for (const name of ['before', 'during', 'after']) {
    const ps = phase(name);
    report.row(
      `kv upgrade under load: latency ${name} (p50 / p99, worst round)`,
      `${worst(ps, 'p50Ms')} / ${worst(ps, 'p99Ms')} ms (${ps.reduce((n, p) => n + p.sent, 0)} requests)`,
      'info',
      true,
    );
  }
}

/** The ladder 3.2 → 3.7 under the load of three kinds of client; rows per hop. */
async function ladderUnderLoad(report, h, dirs, BIN, until) {
  h.prepareLadderReleases(process.env);
  const all = h.etcdLadderDirs({ ...process.env, OPSCTL_REQUIRE_E2E: '' });
  const hops = ['3.3', '3.4', '3.5', '3.6', '3.7'];
  const top = hops.at(-1);
  if (!all) {
    console.log('   the ladder under load: missing etcd releases (above; scripts/etcd-build.sh)');
    report.row(`kv ladder 3.2→${top} under load`, 'skipped (no binaries)', '0 failed, 0 lost', process.env.OPSCTL_REQUIRE_E2E !== '1');
    return;
  }
  const bins = { 3.2: dirs.v32, 3.3: dirs.v33, 3.4: all.v34, 3.5: all.v35, 3.6: all.v36, 3.7: all.v37 };
  // etcd's default snapshot-count, as most clusters run (test/e2e/kv-load-ladder.test.ts does the same)
  const c = await h.realCluster({ size: 3, snapshotCount: 'etcd', bins });
  let res;
  let rep;
  let wallMs = 0;
  try {
    for (const m of c.members) c.start(m, '3.2');
    await until(
      async () => {
        try {
          return JSON.parse(await (await fetch(`${c.endpoints[0]}/version`)).text()).etcdcluster === '3.2.0';
        } catch {
          return false;
        }
      },
      'the 3.2 cluster',
      60_000,
    );
    const dir = join(c.dir, 'opsctl');
    mkdirSync(dir, { recursive: true });
    const file = h.writeCommandClusterFile(join(dir, 'cluster.yaml'), c, {
      extra: [`backup: cp -a ${c.dir}/{name}/data ${c.dir}/{name}/data.bak-{run}`, 'trial: sh -s'],
    });
    const load = h.startLoad({ endpoints: c.endpoints, clients: ['gateway', 'opsctl', 'etcdctl'], etcdctl: join(bins['3.4'], 'etcdctl') });
    await until(() => load.acknowledgedIn('before') >= PHASE_ACKS, 'writes before the upgrade');
    const follow = h.followLadder(load, { endpoints: c.endpoints, from: '3.2', to: hops });
    let out;
    let err;
    const t0 = performance.now();
    try {
      ({ stdout: out } = await promisify(execFile)(
        process.execPath,
        [
          BIN,
          'kv',
          'upgrade',
          '--to',
          top,
          '--yes',
          '--cluster',
          file,
          ...hops.flatMap((v) => ['--target-bin', `${v}=${bins[v]}`]),
          '--poll-interval',
          '100ms',
          '--json',
        ],
        { env: { ...process.env, OPSCTL_CONFIG_DIR: dir, NO_COLOR: '1', CI: '1' }, timeout: 1_800_000, maxBuffer: 64 * 1024 * 1024 },
      ));
    } catch (e) {
      // (a refusal or a halt: its report is on stdout all the same; the load is stopped and counted below)
      err = e;
      out = e.stdout;
    } finally {
      wallMs = performance.now() - t0;
      await follow.stop();
      load.phase('after');
    }
    try {
      rep = JSON.parse(out);
    } catch {
      rep = undefined;
    }
    if (rep?.status === 'done') await until(() => load.acknowledgedIn('after') >= PHASE_ACKS, 'writes after the upgrade');
    res = await load.stop();
    if (rep?.status !== 'done') {
      const said = String(err?.stderr ?? '')
        .trim()
        .split('\n')
        .slice(-12)
        .join('\n     ');
      console.log(`   the ladder under load: opsctl did not finish (${rep?.status ?? `exit ${err?.code}`}):\n     ${said}`);
      report.row(`kv ladder 3.2→${top} under load: opsctl finishes`, `no: ${rep?.status ?? `exit ${err?.code}`}`, 'done', false);
    }
  } finally {
    c.destroy();
  }
  console.log(
    `   ladder: ${res.sent} requests (${res.attempts} attempts), ${res.failedAfterRetry} failed after retry, ${res.lost} lost of ${res.acknowledged} acknowledged; the run ${(wallMs / 1000).toFixed(1)} s (trials ${((rep?.trials?.ms ?? 0) / 1000).toFixed(1)} s), hops ${(rep?.hops ?? []).map((x) => `${x.from}→${x.to} ${x.report ? `${(x.report.totals.ms / 1000).toFixed(1)} s` : x.status}`).join(', ')} (load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' / ')} on ${cpus().length} CPUs)`,
  );
  if (res.lastErrors.length) console.log(`   last member errors: ${res.lastErrors.slice(-3).join(' | ')}`);
  const clients = (p) =>
    Object.entries(p.byClient)
      .map(([k, v]) => `${k} ${v.sent}`)
      .join(', ');
  report.row(
    `kv ladder 3.2→${top} under load: failed after retry (gateway, opsctl client, etcdctl)`,
    String(res.failedAfterRetry),
    '0',
    res.failedAfterRetry === 0,
  );
  report.row(`kv ladder 3.2→${top} under load: acknowledged writes lost`, `${res.lost} of ${res.acknowledged}`, '0', res.lost === 0);
  const seen = res.phases.filter((x) => x.phase.includes('→'));
  report.row(
    `kv ladder 3.2→${top} under load: hops that saw load`,
    `${seen.filter((p) => p.sent > 0).length} of ${hops.length}`,
    `${hops.length}`,
    seen.filter((p) => p.sent > 0).length === hops.length,
  );
  for (const p of seen) {
    report.row(
      `kv ladder under load: hop ${p.phase} longest write gap / p99`,
      `${p.longestWriteGapMs} / ${p.p99Ms} ms (${p.sent} requests: ${clients(p)})`,
      'info',
      true,
    );
  }
}
