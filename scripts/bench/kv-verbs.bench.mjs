// The etcdctl-like kv verbs an operator runs in loops (issue 47): each one's CPU time against `node -e 0`
// (budget 1.5x, medians of interleaved rounds with the in-process probe, as the start-up rows), and beside
// the same verb of etcdctl on the same cluster (Debian's etcd 3.4: a 3-member cluster on loopback), both
// measured from outside the processes (bash's `times` over a batch of runs: etcdctl cannot load the
// probe). `BENCH_KV_VERBS_ROUNDS` (default 15) sets the rounds, `BENCH_KV_VERBS_BATCH` (default 5) the
// runs per batch of the etcdctl comparison. Skipped (not failed) without /usr/bin/etcd.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { helpers } from './kv-etcd.bench.mjs';
import { batchCpuMs } from './package.bench.mjs';

export default async function kvVerbsBench(report, { BIN, ROOT, median, interleaved, tempDir }) {
  if (!existsSync('/usr/bin/etcd') || !existsSync('/usr/bin/etcdctl')) {
    report.row('kv verbs vs etcdctl (real etcd 3.4)', 'skipped (no /usr/bin/etcd)', '<= 1.5x', process.env.OPSCTL_REQUIRE_E2E !== '1');
    return;
  }
  const rounds = Number(process.env.BENCH_KV_VERBS_ROUNDS ?? 15);
  const batch = Number(process.env.BENCH_KV_VERBS_BATCH ?? 5);
  const h = await helpers(ROOT);
  const c = await h.realCluster({ size: 3 });
  const load0 = loadavg()[0];
  try {
    for (const m of c.members) c.start(m, '/usr/bin');
    const endpoints = c.members.map((m) => m.clientUrl).join(',');
    const ctl = (args) =>
      execFileSync('/usr/bin/etcdctl', ['--endpoints', endpoints, ...args], { encoding: 'utf8', env: { ETCDCTL_API: '3' }, stdio: ['ignore', 'pipe', 'pipe'] });
    const deadline = Date.now() + 120_000;
    for (;;) {
      try {
        ctl(['endpoint', 'health']);
        break;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    for (let i = 0; i < 20; i++) ctl(['put', `bench/p/${i}`, `value ${i}`]);
    const lease = /lease ([0-9a-f]+) granted/.exec(ctl(['lease', 'grant', '3600']))[1];
    // the verb as opsctl takes it, and as etcdctl does
    const all = [
      ['get', ['get', 'bench/p/1'], ['get', 'bench/p/1']],
      ['get --prefix', ['get', 'bench/p/', '--prefix'], ['get', 'bench/p/', '--prefix']],
      ['put', ['put', 'bench/k', 'v'], ['put', 'bench/k', 'v']],
      ['del', ['del', 'bench/none'], ['del', 'bench/none']],
      ['endpoint health', ['endpoint', 'health'], ['endpoint', 'health']],
      ['endpoint status', ['endpoint', 'status'], ['endpoint', 'status']],
      ['member list', ['member', 'list'], ['member', 'list']],
      ['lease grant', ['lease', 'grant', '60'], ['lease', 'grant', '60']],
      ['lease timetolive', ['lease', 'timetolive', lease], ['lease', 'timetolive', lease]],
      ['lease list', ['lease', 'list'], ['lease', 'list']],
      ['alarm list', ['alarm', 'list'], ['alarm', 'list']],
      ['status', ['status'], ['endpoint', 'status', '--cluster']],
    ];
    const env = { OPSCTL_CONFIG_DIR: tempDir('opsctl-bench-kv-verbs-') };
    const opsArgs = (args) => [BIN, 'kv', ...args, '--endpoints', endpoints];
    // one untimed run of each: the code cache written, the page cache warm (a verb this build lacks is left out, said)
    const verbs = all.filter(([name, args]) => {
      const r = spawnSync(process.execPath, opsArgs(args), { env: { ...process.env, ...env }, encoding: 'utf8' });
      if (r.status !== 0) console.log(`   kv ${name}: left out (exit ${r.status}: ${r.stderr.trim().split('\n')[0]})`);
      return r.status === 0;
    });
    const results = await interleaved(
      [{ name: 'node -e 0', args: ['-e', '0'] }, ...verbs.map(([name, args]) => ({ name: `kv ${name}`, args: opsArgs(args), env }))],
      rounds,
    );
    const base = results['node -e 0'].cpuMs;
    console.log(`   baseline: node -e 0 = ${base.toFixed(1)} ms CPU; ${rounds} interleaved rounds`);
    // beside etcdctl: both from outside, in batches
    const outside = new Map(verbs.map(([name]) => [name, { ops: [], ctl: [], node: [] }]));
    for (let r = 0; r < Math.max(3, Math.round(rounds / 3)); r++) {
      for (const [name, args, theirs] of verbs) {
        const s = outside.get(name);
        s.node.push(batchCpuMs(process.execPath, ['-e', '0'], {}, batch));
        s.ops.push(batchCpuMs(process.execPath, opsArgs(args), env, batch));
        s.ctl.push(batchCpuMs('/usr/bin/etcdctl', ['--endpoints', endpoints, ...theirs], { ETCDCTL_API: '3' }, batch));
      }
    }
    for (const [name] of verbs) {
      const r = results[`kv ${name}`].cpuMs / base;
      const s = outside.get(name);
      const [ops, theirs, node] = [median(s.ops), median(s.ctl), median(s.node)];
      report.row(`kv ${name}: CPU vs node -e 0`, `${r.toFixed(2)}x (${results[`kv ${name}`].cpuMs.toFixed(1)} ms)`, '<= 1.5x', r <= 1.5);
      report.row(`kv ${name} vs etcdctl (from outside)`, `${ops.toFixed(1)} vs ${theirs.toFixed(1)} ms (node -e 0 ${node.toFixed(1)})`, 'info', true);
    }
    console.log(`   load average ${load0.toFixed(1)} → ${loadavg()[0].toFixed(1)} on ${cpus().length} CPUs`);
  } finally {
    c.destroy();
  }
}
