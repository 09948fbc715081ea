// The whole ladder against the etcd guides' hand procedure, on real etcd and the same binaries:
// 3.2.32 → 3.3.27 → 3.4 (Debian) → 3.5.35 → 3.6.16 (scripts/etcd-build.sh), a 3-member cluster run
// by the command driver (the production path; plain HTTP), with 0 and with 100 MB of v3 data, and
// one 3.2 → 3.3 hop at 1 GB (BENCH_KV_LADDER_1GB=1: it takes minutes and ~30 GB of disk).
//
// The hand procedure, per hop and per member, what the upgrade guides have an operator do:
//   etcdctl snapshot save from the leader (before each stop); stop the member and wait for its own
//   exit; cp -a of its data dir; start the new binary; wait until it serves a quorum read (etcdctl
//   endpoint health's check, over the gateway: /health would write a v2 QGET into every WAL on 3.2-3.4,
//   which 3.6 refuses to replay); then, after the last member, wait for the cluster version of the hop.
// opsctl: one `kv upgrade --to 3.6` with the same backup (`backup: cp -a …` template), its trial template
// (`trial: sh -s`: every member tried on every hop's binary before the first stop) and every safety step
// it takes (whole-cluster gates, verified snapshots, catch-up, cluster version per hop). Both sides run
// members with etcd's default snapshot-count.
// Budgets: per hop and for the whole ladder, opsctl's time <= 1.2x the hand procedure's (medians of
// BENCH_KV_LADDER_ROUNDS interleaved rounds, default 1, each side on a fresh cluster).
// BENCH_KV_LADDER_STEPS=1 prints where each side spent its time, per hop and step.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { helpers } from './kv-etcd.bench.mjs';

const POLL_MS = 100;
const MB = 1000 * 1000;
const BUILDS = process.env.OPSCTL_ETCD_BUILDS ?? '/var/tmp/opsctl-etcd-builds';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(check, what, timeoutMs = 300_000, pollMs = POLL_MS) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(pollMs);
  }
}
async function get(url) {
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
    return { status: r.status, body: await r.text() };
  } catch {
    return undefined;
  }
}
/** The gateway prefix of a minor (3.2 /v3alpha, 3.3 /v3beta, 3.4+ /v3). */
const prefixOf = (minor) => (minor === '3.2' ? '/v3alpha' : minor === '3.3' ? '/v3beta' : '/v3');
async function post(url, body) {
  try {
    const r = await fetch(url, { method: 'POST', body: JSON.stringify(body), signal: AbortSignal.timeout(2000) });
    return { status: r.status, body: await r.text() };
  } catch {
    return undefined;
  }
}
/** A quorum read (a linearizable range of one key), as etcdctl endpoint health does. */
const healthy = async (m, minor) =>
  (await post(`${m.clientUrl}${prefixOf(minor)}/kv/range`, { key: Buffer.from('health').toString('base64'), count_only: true }))?.status === 200;
/** The member the first answering member names its leader. */
async function leaderOf(c, minor) {
  for (const m of c.members) {
    const r = await post(`${m.clientUrl}${prefixOf(minor)}/maintenance/status`, {});
    const id = r?.status === 200 ? JSON.parse(r.body).leader : undefined;
    if (!id) continue;
    for (const x of c.members) {
      const s = await post(`${x.clientUrl}${prefixOf(minor)}/maintenance/status`, {});
      if (s?.status === 200 && JSON.parse(s.body).header?.member_id === id) return x;
    }
  }
  return c.members[0];
}
const clusterVersion = async (c, want) =>
  (await Promise.all(c.members.map((m) => get(`${m.clientUrl}/version`)))).every((r) => r && JSON.parse(r.body).etcdcluster === want);

/** Bytes under a directory (the data dir's size, shown beside the rows). */
function du(dir) {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) n += e.isDirectory() ? du(join(dir, e.name)) : statSync(join(dir, e.name)).size;
  return n;
}

export default async function kvLadderBench(report, { BIN, ROOT, median }) {
  const h = await helpers(ROOT);
  h.prepareEtcdReleases(process.env);
  let rel;
  try {
    rel = h.etcdReleaseDirs(process.env);
  } catch (err) {
    console.log(`   ${err.message}`);
  }
  const bins = rel && {
    3.2: rel.v32,
    3.3: rel.v33,
    3.4: process.env.OPSCTL_ETCD_34_DIR ?? '/usr/bin',
    3.5: process.env.OPSCTL_ETCD_35_DIR ?? join(BUILDS, 'etcd-v3.5.35-linux-amd64'),
    3.6: process.env.OPSCTL_ETCD_36_DIR ?? join(BUILDS, 'etcd-v3.6.16-linux-amd64'),
  };
  const missing = bins ? Object.entries(bins).filter(([, d]) => !existsSync(join(d, 'etcd'))) : [['3.2/3.3', 'shared/etcd']];
  if (missing.length) {
    console.log(`   missing ${missing.map(([v, d]) => `etcd ${v} (${d})`).join(', ')}: build 3.5/3.6 with scripts/etcd-build.sh`);
    report.row('kv ladder 3.2→3.6 vs hand procedure', 'skipped (no binaries)', '<= 1.2x', process.env.OPSCTL_REQUIRE_E2E !== '1');
    return;
  }
  const etcdctl = join(bins['3.4'], 'etcdctl');
  const rounds = Number(process.env.BENCH_KV_LADDER_ROUNDS ?? 1);
  const showSteps = Boolean(process.env.BENCH_KV_LADDER_STEPS);

  /** A fresh 3-member 3.2.32 cluster holding `bytes` of v3 data (1 MB values through the 3.2 gateway). */
  async function fresh(bytes, snapshotCount) {
    const c = await h.realCluster({ size: 3, snapshotCount, bins, extraConfig: () => 'quota-backend-bytes: 8589934592' });
    try {
      for (const m of c.members) c.start(m, '3.2');
      await until(() => clusterVersion(c, '3.2.0'), 'the 3.2 cluster', 60_000);
      const value = randomBytes(MB).toString('base64');
      const put = async (i) => {
        const body = JSON.stringify({ key: Buffer.from(`bench/data/${i}`).toString('base64'), value });
        for (let t = 0; t < 5; t++) {
          const r = await fetch(`${c.members[i % 3].clientUrl}/v3alpha/kv/put`, { method: 'POST', body }).catch(() => undefined);
          await r?.text();
          if (r?.status === 200) return;
        }
        throw new Error(`loading the data: put ${i} failed`);
      };
      // 8 puts in flight: raft batches them (one at a time, 1 GB took over 20 minutes on the busy machine).
      const n = Math.ceil(bytes / MB);
      let next = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next < n) await put(next++);
        }),
      );
      for (let i = 0; i < 100; i++) c.etcdctl(bins['3.4'], ['put', `bench/${i}`, `v${i}`]);
      return c;
    } catch (err) {
      c.destroy();
      throw err;
    }
  }

  async function byOpsctl(c, hops) {
    const dir = join(c.dir, 'opsctl');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'cluster.yaml');
    h.writeCommandClusterFile(file, c, { extra: [`backup: cp -a ${c.dir}/{name}/data ${c.dir}/{name}/data.bak-{run}`, 'trial: sh -s'] });
    const to = hops.at(-1);
    const targetBins = hops.flatMap((v) => ['--target-bin', `${v}=${bins[v]}`]);
    const t0 = performance.now();
    const out = execFileSync(
      process.execPath,
      [BIN, 'kv', 'upgrade', '--to', to, '--yes', '--cluster', file, ...targetBins, '--poll-interval', `${POLL_MS}ms`, '--json'],
      { env: { ...process.env, OPSCTL_CONFIG_DIR: dir, NO_COLOR: '1', CI: '1' }, stdio: ['ignore', 'pipe', 'pipe'], timeout: 3_600_000, maxBuffer: 64 * MB },
    );
    const ms = performance.now() - t0;
    const rep = JSON.parse(out);
    if (rep.status !== 'done') throw new Error(`opsctl did not finish: ${rep.status}`);
    const trialMs = rep.trials?.ms ?? 0;
    const reports = rep.kind === 'ladder' ? rep.hops.map((x) => ({ hop: `${x.from}→${x.to}`, r: x.report })) : [{ hop: `${rep.source}→${rep.target}`, r: rep }];
    const perHop = {};
    const steps = {};
    for (const { hop, r } of reports) {
      perHop[hop] = r.totals.ms;
      steps[hop] = {};
      for (const s of r.steps) steps[hop][s.kind] = (steps[hop][s.kind] ?? 0) + (s.ms ?? 0);
    }
    return { ms, perHop, steps, trialMs };
  }

  async function byHand(c, hops) {
    const perHop = {};
    const steps = {};
    const t0 = performance.now();
    let from = '3.2';
    for (const to of hops) {
      const hop = `${from}→${to}`;
      const th = performance.now();
      const s = (steps[hop] = { snapshot: 0, stop: 0, backup: 0, start: 0, healthy: 0, 'cluster-version': 0 });
      const lap = (k, t) => (s[k] += performance.now() - t);
      const leader = await leaderOf(c, from);
      // followers first, the leader last, as the guides have it
      for (const m of [...c.members.filter((x) => x !== leader), leader]) {
        let t = performance.now();
        const source = m === leader ? m : await leaderOf(c, from);
        execFileSync(etcdctl, ['--endpoints', source.clientUrl, 'snapshot', 'save', join(c.dir, `${m.name}-${to}.db`)], {
          env: { ETCDCTL_API: '3', PATH: '/usr/bin:/bin' },
          stdio: 'pipe',
        });
        lap('snapshot', t);
        t = performance.now();
        c.stop(m);
        // `systemctl stop` / `wait` return at the exit: the process is looked at every 10 ms.
        await until(() => !c.alive(m), `${m.name} to exit`, 120_000, 10);
        lap('stop', t);
        t = performance.now();
        execFileSync('cp', ['-a', join(m.dir, 'data'), join(m.dir, `data.bak-${to}`)]);
        lap('backup', t);
        t = performance.now();
        c.start(m, to);
        lap('start', t);
        t = performance.now();
        await until(() => healthy(m, to), `${m.name} healthy on ${to}`);
        lap('healthy', t);
      }
      const t = performance.now();
      await until(() => clusterVersion(c, `${to}.0`), `cluster version ${to}.0`);
      lap('cluster-version', t);
      perHop[hop] = performance.now() - th;
      from = to;
    }
    return { ms: performance.now() - t0, perHop, steps };
  }

  // Warm the page cache with every program both sides run.
  for (const d of Object.values(bins)) execFileSync(join(d, 'etcd'), ['--version'], { stdio: 'ignore' });
  execFileSync(etcdctl, ['version'], { stdio: 'ignore', env: { ETCDCTL_API: '3' } });
  execFileSync(process.execPath, [BIN, '--version'], { stdio: 'ignore' });

  /** Rounds of both sides on fresh clusters, interleaved with the order alternating. */
  async function compare(label, bytes, hops, snapshotCount) {
    const pairs = [];
    for (let r = 0; r < rounds; r++) {
      const pair = {};
      for (const k of r % 2 === 0 ? ['opsctl', 'hand'] : ['hand', 'opsctl']) {
        const c = await fresh(bytes, snapshotCount);
        const size = du(c.members[0].dir);
        try {
          pair[k] = await (k === 'opsctl' ? byOpsctl : byHand)(c, hops);
          pair.size = size;
        } finally {
          c.destroy();
        }
      }
      pairs.push(pair);
      console.log(
        `   ${label}, round ${r + 1}: opsctl ${(pair.opsctl.ms / 1000).toFixed(1)} s, hand ${(pair.hand.ms / 1000).toFixed(1)} s, ${(pair.opsctl.ms / pair.hand.ms).toFixed(2)}x (load average ${loadavg()[0].toFixed(1)} on ${cpus().length} CPUs)`,
      );
    }
    const names = Object.keys(pairs[0].hand.perHop);
    const med = (f) => median(pairs.map(f));
    console.log(`   ${label}: one member's data dir ${(pairs[0].size / MB).toFixed(0)} MB at the start; ${rounds} round(s)`);
    for (const hop of names) {
      const o = med((p) => p.opsctl.perHop[hop]);
      const hd = med((p) => p.hand.perHop[hop]);
      console.log(`     ${hop}: opsctl ${(o / 1000).toFixed(1)} s, hand ${(hd / 1000).toFixed(1)} s, ${(o / hd).toFixed(2)}x`);
      if (showSteps) {
        const fmt = (st) =>
          Object.entries(st)
            .map(([k, v]) => `${k} ${(v / 1000).toFixed(2)}`)
            .join(', ');
        console.log(`        opsctl steps (s): ${fmt(pairs[0].opsctl.steps[hop])}`);
        console.log(`        hand steps (s):   ${fmt(pairs[0].hand.steps[hop])}`);
      }
      if (names.length > 1)
        report.row(
          `kv ladder ${label}: hop ${hop} opsctl vs hand`,
          `${(o / hd).toFixed(2)}x (${(o / 1000).toFixed(1)} vs ${(hd / 1000).toFixed(1)} s)`,
          '<= 1.2x',
          o / hd <= 1.2,
        );
    }
    const o = med((p) => p.opsctl.ms);
    const hd = med((p) => p.hand.ms);
    const ratios = pairs.map((p) => (p.opsctl.ms / p.hand.ms).toFixed(2)).join(' ');
    report.row(
      `kv ${names.length > 1 ? 'ladder' : 'hop'} ${label}: opsctl vs the sum of the hand procedure`,
      `${(o / hd).toFixed(2)}x (${(o / 1000).toFixed(1)} vs ${(hd / 1000).toFixed(1)} s; ${ratios})`,
      '<= 1.2x',
      o / hd <= 1.2,
    );
    // The trials (every member on every hop's binary, before the first stop) against the hand procedure's whole time.
    const tm = med((p) => p.opsctl.trialMs);
    report.row(
      `kv ${names.length > 1 ? 'ladder' : 'hop'} ${label}: the trial starts' share of the hand procedure's time`,
      `${((100 * tm) / hd).toFixed(1)}% (${(tm / 1000).toFixed(2)} of ${(hd / 1000).toFixed(1)} s)`,
      '<= 10%',
      tm / hd <= 0.1,
    );
  }

  const ladder = ['3.3', '3.4', '3.5', '3.6'];
  const only = process.env.BENCH_KV_LADDER_ONLY; // e.g. "0", "100", "1gb": one case (measuring)
  // etcd's default snapshot-count on both sides: neither writes a v2 request into the WALs, so 3.6 starts without the v2store fix.
  if (!only || only === '0') await compare('3.2→3.6, 0 MB', 0, ladder, 'etcd');
  if (!only || only === '100') await compare('3.2→3.6, 100 MB', 100 * MB, ladder, 'etcd');
  if (process.env.BENCH_KV_LADDER_1GB === '1' || only === '1gb') await compare('3.2→3.3, 1 GB', 1000 * MB, ['3.3'], 10000);
  else console.log('   (3.2→3.3 at 1 GB: BENCH_KV_LADDER_1GB=1; it takes minutes and ~30 GB of disk)');
}
