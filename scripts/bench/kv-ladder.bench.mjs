// The whole ladder against the etcd guides' hand procedure, on real etcd and the same binaries:
// 3.2.32 → 3.3.27 → 3.4 (Debian) → 3.5.35 → 3.6.16 → 3.7.3 (scripts/etcd-build.sh), a 3-member cluster
// run by the command driver (the production path; plain HTTP), with 0 and with 100 MB of v3 data, and
// one 3.2 → 3.3 hop at 1 GB (BENCH_KV_LADDER_1GB=1: it takes minutes and ~30 GB of disk).
//
// The hand procedure, per hop, what the upgrade guides (3.3 … 3.7) have an operator do: step 1, the
//   requirements (etcdctl endpoint health of every member; with 3.7, every member on 3.6.11 or later,
//   its /version; with 3.6, on 3.5.32 or later); then per member, followers first and the leader last:
//   etcdctl snapshot save from the leader (before each stop); stop the member and wait for its own
//   exit; cp -a of its data dir; start the new binary; wait until it serves a quorum read (etcdctl
//   endpoint health's check, over the gateway: /health would write a v2 QGET into every WAL on 3.2-3.4,
//   which 3.6 refuses to replay); then, after the last member, wait for the cluster version of the hop.
//   A member that exits on the new binary stops the hand procedure, its log's last lines said.
// At 100 MB both sides stop at 3.6, the bench puts the v2 requests 3.7.3 cannot replay past a snapshot
// (untimed, the same on both sides: each member restarted once on 3.6 with snapshot-count 1), then the 3.7
// hop: the hand procedure as the 3.7 guide has it loses a member there otherwise, and opsctl refuses before
// any stop (its data trial; with the command driver it does not apply that fix itself).
// opsctl: one `kv upgrade --to 3.7` with the same backup (`backup: cp -a …` template), its trial template
// (`trial: sh -s`: every member tried on every hop's binary before the first stop) and every safety step
// it takes (whole-cluster gates, verified snapshots, catch-up, cluster version per hop). Both sides run
// members with etcd's default snapshot-count.
// Budgets: per hop and for the whole ladder, opsctl's time <= 1.2x the hand procedure's (medians of
// BENCH_KV_LADDER_ROUNDS interleaved rounds, default 1, each side on a fresh cluster); the trials
// (issue 43) add <= 15% to opsctl's ladder.
// BENCH_KV_LADDER_STEPS=1 prints where each side spent its time, per hop and step, and opsctl's time
// outside its hops (start-up and plan with the trials, then before each hop: its rules and trials).
// BENCH_KV_LADDER_SAVE=DIR keeps opsctl's JSON report and its stderr (each line with its time) there.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { helpers } from './kv-etcd.bench.mjs';
import { atLeast, clusterVersion, du, existsPid, get, healthy, leaderOf, until } from './kv-ladder-etcd.mjs';

const POLL_MS = 100;
const MB = 1000 * 1000;
/** The ladder's hops from 3.2, and each guide's patch floor of the minor before (the guides of 3.6 and 3.7). */
const LADDER = ['3.3', '3.4', '3.5', '3.6', '3.7'];
const TOP = LADDER.at(-1);
const FLOORS = { 3.6: '3.5.32', 3.7: '3.6.11' };

export default async function kvLadderBench(report, { BIN, ROOT, median }) {
  const h = await helpers(ROOT);
  h.prepareEtcdReleases(process.env);
  h.prepareLadderReleases(process.env);
  // every release of the ladder, each checked to name its version (test/helpers/etcd-releases.ts)
  const dirs = h.etcdLadderDirs({ ...process.env, OPSCTL_REQUIRE_E2E: '' });
  if (!dirs) {
    console.log('   missing etcd releases (above): 3.2/3.3 from shared/etcd, 3.4 from Debian, 3.5/3.6/3.7 from scripts/etcd-build.sh');
    report.row(`kv ladder 3.2→${TOP} vs hand procedure`, 'skipped (no binaries)', '<= 1.2x', process.env.OPSCTL_REQUIRE_E2E !== '1');
    return;
  }
  const bins = { 3.2: dirs.v32, 3.3: dirs.v33, 3.4: dirs.v34, 3.5: dirs.v35, 3.6: dirs.v36, 3.7: dirs.v37 };
  const etcdctl = join(bins['3.4'], 'etcdctl');
  const rounds = Number(process.env.BENCH_KV_LADDER_ROUNDS ?? 1);
  const showSteps = Boolean(process.env.BENCH_KV_LADDER_STEPS);
  const saveDir = process.env.BENCH_KV_LADDER_SAVE;
  if (saveDir) mkdirSync(saveDir, { recursive: true });

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

  /** opsctl's run, its stderr lines timed from its start (`at` ms), its JSON report on stdout. */
  function run(args, env) {
    return new Promise((resolve, reject) => {
      const t0 = performance.now();
      const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
      const lines = [];
      let out = '';
      let part = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => {
        const at = performance.now() - t0;
        const all = (part + d).split('\n');
        part = all.pop();
        for (const text of all) lines.push({ at, text });
      });
      const timer = setTimeout(() => child.kill('SIGTERM'), 3_600_000);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        if (part) lines.push({ at: performance.now() - t0, text: part });
        resolve({ ms: performance.now() - t0, code, out, lines, startedAt: Date.now() - (performance.now() - t0) });
      });
    });
  }

  async function byOpsctl(c, hops) {
    const dir = join(c.dir, 'opsctl');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'cluster.yaml');
    h.writeCommandClusterFile(file, c, { extra: [`backup: cp -a ${c.dir}/{name}/data ${c.dir}/{name}/data.bak-{run}`, 'trial: sh -s'] });
    const to = hops.at(-1);
    const targetBins = hops.flatMap((v) => ['--target-bin', `${v}=${bins[v]}`]);
    const r = await run(
      [
        BIN,
        'kv',
        'upgrade',
        '--to',
        to,
        '--yes',
        '--cluster',
        file,
        ...targetBins,
        '--poll-interval',
        `${POLL_MS}ms`,
        '--json',
        ...(process.env.BENCH_KV_LADDER_DEBUG ? ['--debug'] : []),
      ],
      { ...process.env, OPSCTL_CONFIG_DIR: dir, NO_COLOR: '1', CI: '1' },
    );
    if (saveDir) {
      const name = `opsctl-${Date.now()}`;
      writeFileSync(join(saveDir, `${name}.json`), r.out);
      writeFileSync(join(saveDir, `${name}.stderr`), r.lines.map((l) => `${(l.at / 1000).toFixed(3).padStart(8)} ${l.text}`).join('\n'));
      console.log(`   opsctl's report and stderr: ${join(saveDir, name)}.{json,stderr}`);
    }
    let rep;
    try {
      rep = JSON.parse(r.out);
    } catch {
      rep = undefined;
    }
    if (r.code !== 0 || rep?.status !== 'done') {
      const said = r.lines
        .map((l) => l.text)
        .filter((t) => !t.startsWith('[') && t.trim())
        .slice(-15)
        .join('\n     ');
      throw new Error(`opsctl did not finish the ladder (exit ${r.code}, ${rep?.status ?? 'no report'}):\n     ${said}`);
    }
    const reports = rep.kind === 'ladder' ? rep.hops.map((x) => ({ hop: `${x.from}→${x.to}`, r: x.report })) : [{ hop: `${rep.source}→${rep.target}`, r: rep }];
    const perHop = {};
    const steps = {};
    // opsctl's time outside its hops: before the first hop's first step (start-up, the plan, the trials of
    // every hop), then between one hop's last step and the next one's first (the next hop's rules, trials, fixes)
    const outside = {};
    let last = r.startedAt;
    for (const { hop, r: hr } of reports) {
      perHop[hop] = hr.totals.ms;
      steps[hop] = {};
      for (const s of hr.steps) steps[hop][s.kind] = (steps[hop][s.kind] ?? 0) + (s.ms ?? 0);
      const begun = Math.min(...hr.steps.map((s) => Date.parse(s.startedAt)).filter(Number.isFinite));
      const ended = Math.max(...hr.steps.map((s) => Date.parse(s.finishedAt)).filter(Number.isFinite));
      outside[hop] = Number.isFinite(begun) ? begun - last : 0;
      if (Number.isFinite(ended)) last = ended;
    }
    outside.end = r.startedAt + r.ms - last;
    // each trial start's own time, as its row says it ("served /health … in N ms", "answered in N ms"), by hop and
    // kind: the ladder's report holds the rows; a single hop's only its plan (on stderr), and the Trials line
    const hop1 = reports.length === 1 ? reports[0].hop.replace('→', ' → ') : undefined;
    const rows = rep.checks ?? [];
    if (hop1) {
      let rule;
      for (const { text } of r.lines) {
        const head = /^\s+\[([a-z0-9.-]+)\]/.exec(text);
        if (head) rule = head[1];
        const row = /^\s+(\S+): \w[^:]*: (.*)$/.exec(text);
        if (row && !head) rows.push({ rule, hop: hop1, member: row[1], detail: row[2] });
      }
    }
    const trialStarts = {};
    for (const c of rows) {
      const ms = c.rule === 'trial-start' || c.rule === 'data-trial' ? /\bin (\d+) ms\b/.exec(c.detail)?.[1] : undefined;
      if (ms !== undefined) (trialStarts[`${c.hop} ${c.rule === 'data-trial' ? 'data' : 'settings'}`] ??= []).push(Number(ms));
    }
    let trials = rep.trials;
    const said = r.lines.map((l) => / Trials: (\d+) of (\d+) .*?, (\d+) of (\d+) .* in (\d+) ms/.exec(l.text)).find(Boolean);
    if (!trials && said) trials = { starts: Number(said[2]) + Number(said[4]), ran: Number(said[1]) + Number(said[3]), refused: 0, ms: Number(said[5]) };
    return { ms: r.ms, perHop, steps, trialMs: trials?.ms ?? 0, trials, trialStarts, outside };
  }

  const ver = async (m) => {
    const r = await get(`${m.clientUrl}/version`);
    return r?.status === 200 ? JSON.parse(r.body) : undefined;
  };
  /** The last lines of a member's log (the hand procedure stops there when a member exits on the new binary). */
  const tail = (m) =>
    readFileSync(join(m.dir, 'etcd.log'), 'utf8')
      .trim()
      .split('\n')
      .slice(-4)
      .map((l) => l.slice(0, 400))
      .join('\n     ');

  async function byHand(c, hops, from = '3.2') {
    const perHop = {};
    const steps = {};
    const t0 = performance.now();
    for (const to of hops) {
      const hop = `${from}→${to}`;
      const th = performance.now();
      const s = (steps[hop] = { requirements: 0, snapshot: 0, stop: 0, backup: 0, start: 0, healthy: 0, 'cluster-version': 0 });
      const lap = (k, t) => (s[k] += performance.now() - t);
      // Step 1 of each guide: every member healthy (etcdctl endpoint health), and on the guide's patch floor
      let t = performance.now();
      for (const m of c.members) if (!(await healthy(m, from))) throw new Error(`hand procedure, ${hop}: ${m.name} is not healthy before the hop`);
      if (FLOORS[to])
        for (const m of c.members) {
          const v = (await ver(m))?.etcdserver;
          if (!v || !atLeast(v, FLOORS[to])) throw new Error(`hand procedure, ${hop}: ${m.name} runs ${v}, the guide asks ${FLOORS[to]} or later first`);
        }
      lap('requirements', t);
      const leader = await leaderOf(c, from);
      // followers first, the leader last, as the guides have it
      for (const m of [...c.members.filter((x) => x !== leader), leader]) {
        t = performance.now();
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
        const pid = c.pid(m);
        lap('start', t);
        t = performance.now();
        await until(async () => {
          if (await healthy(m, to)) return true;
          // (the process itself, by its PID: a member that exits on the new binary ends the procedure)
          if (pid && !existsPid(pid)) throw new Error(`hand procedure, ${hop}: ${m.name} exited on ${to}:\n     ${tail(m)}`);
          return false;
        }, `${m.name} healthy on ${to}`);
        lap('healthy', t);
      }
      t = performance.now();
      await until(() => clusterVersion(c, `${to}.0`), `cluster version ${to}.0`);
      lap('cluster-version', t);
      perHop[hop] = performance.now() - th;
      from = to;
    }
    return { ms: performance.now() - t0, perHop, steps };
  }

  /**
   * What 3.7.3 cannot replay, put past a snapshot by hand (the 3.7 hop's [wal-v2-replay] fix; the 3.7 guide
   * says nothing of it): each member, one at a time, restarted once on 3.6 with snapshot-count 1 until it
   * writes a new member/snap/*.snap, then started with its own config again. Untimed, the same on both sides.
   */
  async function walFix(c) {
    const snaps = (m) =>
      readdirSync(join(m.dir, 'data', 'member', 'snap'))
        .filter((f) => f.endsWith('.snap'))
        .sort();
    const census = () => c.members.map((m) => h.walV2Replay(join(m.dir, 'data')).count);
    const before = census();
    const t0 = performance.now();
    for (const m of c.members) {
      const own = readFileSync(m.configFile, 'utf8');
      const newest = snaps(m).at(-1) ?? '';
      const restart = async (config) => {
        c.stop(m);
        await until(() => !c.alive(m), `${m.name} to exit`, 120_000, 10);
        writeFileSync(m.configFile, config);
        c.start(m, '3.6');
        await until(() => healthy(m, '3.6'), `${m.name} healthy on 3.6`);
      };
      await restart(`${own.replace(/^snapshot-count:.*$/m, '')}\nsnapshot-count: 1\n`);
      try {
        await until(() => (snaps(m).at(-1) ?? '') > newest, `a new snapshot of ${m.name}`, 120_000);
      } finally {
        await restart(own);
      }
    }
    const after = census();
    if (after.some((n) => n !== 0)) throw new Error(`the WAL fix left v2 requests 3.7 cannot replay: ${after.join('/')}`);
    return { ms: performance.now() - t0, before };
  }

  /** One side's ladder: in one run, or (`split`) up to 3.6, the WAL fix, then the 3.7 hop; the parts' figures summed. */
  async function side(k, c, hops, split) {
    const one = (part, from) => (k === 'opsctl' ? byOpsctl(c, part) : byHand(c, part, from));
    if (!split) return one(hops);
    const at = hops.indexOf('3.7');
    const a = await one(hops.slice(0, at));
    const fixed = await walFix(c);
    const b = await one(hops.slice(at), hops[at - 1]);
    const sum = (x, y) => {
      const out = { ...x };
      for (const [key, v] of Object.entries(y ?? {})) out[key] = (out[key] ?? 0) + v;
      return out;
    };
    return {
      ...a,
      ms: a.ms + b.ms,
      perHop: { ...a.perHop, ...b.perHop },
      steps: { ...a.steps, ...b.steps },
      ...(k === 'opsctl'
        ? {
            trialMs: a.trialMs + b.trialMs,
            trials:
              a.trials && b.trials
                ? { ...a.trials, starts: a.trials.starts + b.trials.starts, ran: a.trials.ran + b.trials.ran, ms: a.trials.ms + b.trials.ms }
                : undefined,
            trialStarts: { ...a.trialStarts, ...b.trialStarts },
            outside: sum(a.outside, b.outside),
          }
        : {}),
      fix: fixed,
    };
  }

  // Warm the page cache with every program both sides run.
  for (const d of Object.values(bins)) execFileSync(join(d, 'etcd'), ['--version'], { stdio: 'ignore' });
  execFileSync(etcdctl, ['version'], { stdio: 'ignore', env: { ETCDCTL_API: '3' } });
  execFileSync(process.execPath, [BIN, '--version'], { stdio: 'ignore' });

  /** Rounds of both sides on fresh clusters, interleaved with the order alternating. */
  async function compare(label, bytes, hops, snapshotCount, split = false) {
    const pairs = [];
    for (let r = 0; r < rounds; r++) {
      const pair = {};
      let failed = false;
      for (const k of r % 2 === 0 ? ['opsctl', 'hand'] : ['hand', 'opsctl']) {
        const c = await fresh(bytes, snapshotCount);
        const size = du(c.members[0].dir);
        const who = k === 'opsctl' ? 'opsctl' : 'the hand procedure';
        try {
          const t = performance.now();
          pair[k] = await side(k, c, hops, split);
          pair.size = size;
          if (failed) console.log(`   ${label}, round ${r + 1}: ${who} finished in ${(pair[k].ms ?? performance.now() - t) / 1000} s`);
        } catch (err) {
          // a side that cannot finish fails the case (said as such), not the whole bench; the other side
          // of the round still runs, to say whether it gets through the same ladder
          console.log(`   ${label}, round ${r + 1}: ${who} did not finish: ${err.message}`);
          report.row(`kv ladder ${label}: ${who} finishes`, 'no (above)', 'finishes', false);
          failed = true;
        } finally {
          c.destroy();
        }
      }
      if (failed) return;
      pairs.push(pair);
      if (split)
        console.log(
          `   ${label}, round ${r + 1}: to 3.6, then the WAL fix (untimed: opsctl's cluster ${(pair.opsctl.fix.ms / 1000).toFixed(1)} s, the hand one's ${(pair.hand.fix.ms / 1000).toFixed(1)} s; v2 requests 3.7 would replay per member before it: ${pair.opsctl.fix.before.join('/')} and ${pair.hand.fix.before.join('/')}), then 3.6→3.7`,
        );
      console.log(
        `   ${label}, round ${r + 1}: opsctl ${(pair.opsctl.ms / 1000).toFixed(1)} s, hand ${(pair.hand.ms / 1000).toFixed(1)} s, ${(pair.opsctl.ms / pair.hand.ms).toFixed(2)}x (load average ${loadavg()
          .map((x) => x.toFixed(1))
          .join(' / ')} on ${cpus().length} CPUs)`,
      );
    }
    const names = Object.keys(pairs[0].hand.perHop);
    const med = (f) => median(pairs.map(f));
    const s1 = (ms) => `${(ms / 1000).toFixed(1)} s`;
    console.log(`   ${label}: one member's data dir ${(pairs[0].size / MB).toFixed(0)} MB at the start; ${rounds} round(s)`);
    // a side's steps in a hop, each the median over the rounds
    const fmt = (side, hop) =>
      Object.keys(pairs[0][side].steps[hop])
        .map((k) => `${k} ${(med((p) => p[side].steps[hop][k] ?? 0) / 1000).toFixed(2)}`)
        .join(', ');
    if (showSteps) {
      const t = pairs[0].opsctl.trials;
      console.log(
        `     opsctl before its first hop: ${s1(med((p) => p.opsctl.outside[names[0]]))} (start-up, the plan; the trials${split ? ' of both runs' : ''} ${t ? `${t.starts} starts, ${t.ran} ran, ${t.refused} refused${t.viaData ? `, ${t.viaData} settings trials proven by the data trial's start of the same binary and settings` : ''}, in ${s1(med((p) => p.opsctl.trialMs))}` : 'not reported'})`,
      );
      // (settings trials: all at once, or the data trial's start where it proves them (the same time then); data trials:
      // per member one chain through every hop's binary, members at once; the first round's)
      const starts = Object.entries(pairs[0].opsctl.trialStarts).map(([k, v]) => `${k} ${v.map((x) => (x / 1000).toFixed(2)).join('/')}`);
      if (starts.length) console.log(`       each trial start in round 1 (s, per member): ${starts.join('; ')}`);
    }
    for (const hop of names) {
      const o = med((p) => p.opsctl.perHop[hop]);
      const hd = med((p) => p.hand.perHop[hop]);
      console.log(`     ${hop}: opsctl ${s1(o)}, hand ${s1(hd)}, ${(o / hd).toFixed(2)}x`);
      if (showSteps) {
        if (hop !== names[0])
          console.log(
            `        opsctl before the hop (${split && hop.endsWith('3.7') ? 'its own run: start-up, the plan, its trials' : 'its rules, trials, fixes'}): ${(med((p) => p.opsctl.outside[hop]) / 1000).toFixed(2)} s`,
          );
        console.log(`        opsctl steps (s): ${fmt('opsctl', hop)}`);
        console.log(`        hand steps (s):   ${fmt('hand', hop)}`);
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
    const between = med((p) => Object.values(p.opsctl.outside).reduce((n, x) => n + x, 0));
    if (showSteps) console.log(`     opsctl outside its hops in all: ${s1(between)} of ${s1(o)}`);
    const ratios = pairs.map((p) => (p.opsctl.ms / p.hand.ms).toFixed(2)).join(' ');
    report.row(
      `kv ${names.length > 1 ? 'ladder' : 'hop'} ${label}: opsctl vs the sum of the hand procedure`,
      `${(o / hd).toFixed(2)}x (${(o / 1000).toFixed(1)} vs ${(hd / 1000).toFixed(1)} s; ${ratios})`,
      '<= 1.2x',
      o / hd <= 1.2,
    );
    // The trials (every member on every hop's binary, before the first stop; opsctl's report says how long they
    // took): what they add to opsctl's ladder (issue 43: <= 15%), their share of it and of the hand procedure.
    const tm = med((p) => p.opsctl.trialMs);
    report.row(
      `kv ${names.length > 1 ? 'ladder' : 'hop'} ${label}: what the trials add to opsctl's time`,
      `${((100 * tm) / (o - tm)).toFixed(1)}% (${(tm / 1000).toFixed(2)} s; ${((100 * tm) / o).toFixed(1)}% of opsctl's ${s1(o)}, ${((100 * tm) / hd).toFixed(1)}% of the hand ${s1(hd)})`,
      '<= 15%',
      tm / (o - tm) <= 0.15,
    );
  }

  const only = process.env.BENCH_KV_LADDER_ONLY; // e.g. "0", "100", "1gb": one case (measuring)
  // etcd's default snapshot-count on both sides, as most clusters run.
  if (!only || only === '0') await compare(`3.2→${TOP}, 0 MB`, 0, LADDER, 'etcd');
  // At 100 MB real 3.7.3 panics on the v2 requests every 3.5 start left in the WALs (3.6's snapshot at its first
  // start came before them: at 0 MB it came after them): the hand procedure as the 3.7 guide has it loses a member,
  // opsctl refuses before any stop (its data trial; with the command driver it does not apply the fix itself). Both
  // sides then go to 3.6, the fix is made by hand (untimed), and the 3.7 hop follows.
  if (!only || only === '100') await compare(`3.2→${TOP}, 100 MB`, 100 * MB, LADDER, 'etcd', true);
  if (process.env.BENCH_KV_LADDER_1GB === '1' || only === '1gb') await compare('3.2→3.3, 1 GB', 1000 * MB, ['3.3'], 10000);
  else console.log('   (3.2→3.3 at 1 GB: BENCH_KV_LADDER_1GB=1; it takes minutes and ~30 GB of disk)');
}
