import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { startCluster, watchDown, type RealCluster, type RealTestCluster } from '../framework/index.js';
import { etcdLadderDirs, PINNED_ETCD } from '../helpers/etcd-releases.js';
import { until } from '../helpers/kv.js';
import { canNetns, hubRunner, type NetnsHosts, netnsHosts } from '../helpers/netns.js';
import { requireSsh, sshHosts, type SshHosts } from '../helpers/sshd.js';
import { writeStandinSystemctl } from '../helpers/standin-systemctl.js';

const dirs = etcdLadderDirs();
const ok = Boolean(dirs) && canNetns('kv path matrix over ssh') && requireSsh();

/**
 * The path matrix's ssh and systemd cell (issue kv-paths; `npm run test:paths`, not CI): three hosts, each a
 * network namespace with a real OpenSSH server and a real etcd member, 3.5.35 → 3.7.3 in one command through the
 * systemd preset with a unit per version (`units:`), with a writer and a /health probe every 200 ms (both in the
 * hub namespace, where opsctl runs) for the whole run. Every stop, start, trial, settings read (`systemctl cat`
 * of the version's unit) and the WAL fix (written past before 3.7) goes over ssh. A real systemd cannot run in
 * this test: `systemctl` is a STAND-IN on the sessions' PATH (as in kv-ssh-hosts.test.ts) that starts the unit's
 * ExecStart and prints the unit's files for `cat`; ssh, sshd and etcd are real. The cell finishes (every member
 * on 3.7.3, 0 acknowledged writes lost, never two members down) or is refused before its first stop.
 */
describe.runIf(ok)(`path matrix: 3.5 → 3.7 over ssh, the systemd preset with a unit per version (real ${PINNED_ETCD['3.5']} → ${PINNED_ETCD['3.7']})`, () => {
  let hosts: NetnsHosts;
  let ssh: SshHosts;
  let t: RealTestCluster | undefined;
  let c: RealCluster;
  const cfg = tempConfigDir('opsctl-paths-ssh-');
  const standin = join(cfg.dir, 'standin-bin');
  const inHub = hubRunner(
    () => hosts.hub,
    () => cfg.dir,
    900_000,
  );
  const opsctl = (...args: string[]) => inHub(process.execPath, [BIN, ...args]);

  beforeAll(async () => {
    hosts = netnsHosts(3, 'kvpaths', 215);
    ssh = await sshHosts(hosts, (i) => ({ PATH: `${standin}:/usr/local/bin:/usr/bin:/bin`, OPSCTL_TEST_MEMBER: `etcd${i + 1}` }));
    // each member's folder on its host; none started: the stand-in systemctl starts them over ssh
    t = await startCluster({ members: 'real', size: 3, netns: hosts, ports: { client: 2479, peer: 2480 } });
    c = t.real;
    const bins: Record<string, string> = { '3.5': dirs!.v35, '3.6': dirs!.v36, '3.7': dirs!.v37 };
    // The stand-in systemctl: units etcd-3.5, etcd-3.6, etcd-3.7 of the member of this session's host, by its PID file.
    writeStandinSystemctl(standin, { bins, memberDir: `"${c.dir}/$OPSCTL_TEST_MEMBER"`, test: 'kv-paths-ssh' });
    for (const m of c.members) expect((await ssh.run(hosts.addrs.indexOf(m.host), 'systemctl start etcd-3.5')).exitCode).toBe(0);
    await until(async () => (await opsctl('kv', 'health', '--endpoints', c.endpoints.join(','))).exitCode === 0, 60_000, 'three 3.5.35 members');
  }, 300_000);

  afterAll(async () => {
    await t?.destroy();
    await ssh?.stop();
    hosts?.destroy();
    cfg.cleanup();
  });

  it('finishes (every member on 3.7.3, 0 lost, never two down) or is refused before its first stop', async () => {
    const file = join(cfg.dir, 'cluster.yaml');
    writeFileSync(
      file,
      [
        'members:',
        ...c.members.map((m) => `  - { name: ${m.name}, endpoint: "${m.clientUrl}", host: "${m.host}" }`),
        'driver:',
        '  type: systemd',
        '  units: { "3.5": etcd-3.5, "3.6": etcd-3.6, "3.7": etcd-3.7 }',
        `  ssh: ${ssh.ssh}`,
        '  sudo: false',
        `  bins: { "3.6": "${dirs!.v36}/etcd", "3.7": "${dirs!.v37}/etcd" }`,
        `  binLink: ${c.dir}/{name}/etcd-bin`,
        '',
      ].join('\n'),
    );
    // a writer (every 100 ms) and the monitoring's /health probe (every 200 ms), in the hub where the members are reached
    const acked = join(cfg.dir, 'acked');
    const stop = join(cfg.dir, 'stop');
    const load = join(cfg.dir, 'load.mjs');
    writeFileSync(
      load,
      `import { appendFileSync, existsSync } from 'node:fs';
const eps = ${JSON.stringify(c.endpoints)};
let probes = 0;
const probe = setInterval(() => { for (const e of eps) fetch(e + '/health').then((r) => { if (r.ok) probes++; }, () => {}); }, 200);
for (let i = 0; !existsSync(${JSON.stringify(stop)}); i++) {
  const key = 'paths/' + i;
  const ok = await fetch(eps[i % eps.length] + '/v3/kv/put', { method: 'POST', body: JSON.stringify({ key: Buffer.from(key).toString('base64'), value: Buffer.from(String(i)).toString('base64') }), signal: AbortSignal.timeout(2000) }).then((r) => r.ok, () => false);
  if (ok) appendFileSync(${JSON.stringify(acked)}, key + '\\n');
  await new Promise((r) => setTimeout(r, 100));
}
clearInterval(probe);
console.log(JSON.stringify({ probes }));
`,
    );
    const writer = inHub(process.execPath, [load]);
    const pids = c.members.map((m) => c.pid(m));
    let said = '';
    let outcome = 'unknown';
    const t0 = Date.now();
    try {
      await until(() => existsSync(acked) && readFileSync(acked, 'utf8').split('\n').length > 20, 60_000, '20 acknowledged writes');
      const { maxDown, result: up } = await watchDown(c, () => opsctl('kv', 'upgrade', '--to', '3.7', '--yes', '--no-backup', '--cluster', file));
      said = `${String(up.stdout)}\n${String(up.stderr)}`;
      const v = await Promise.all(c.members.map((m) => inHub('curl', ['-sS', '--max-time', '2', `${m.clientUrl}/version`], 10_000)));
      const onTarget = v.every((r) => /"etcdserver":"3\.7\.3"/.test(String(r.stdout)) && /"etcdcluster":"3\.7\.0"/.test(String(r.stdout)));
      const untouched = c.members.every((m, i) => c.pid(m) === pids[i]);
      outcome =
        up.exitCode === 0 && onTarget && maxDown <= 1
          ? 'finished'
          : up.exitCode !== 0 && untouched
            ? 'refused before the first stop'
            : 'stopped half-way or a member left down';
      expect(['finished', 'refused before the first stop'], said).toContain(outcome);
      // each version's unit read with systemctl cat over ssh for the trials
      expect(said).toMatch(/\[trial-start\] ok on etcd1, etcd2, etcd3/);
      if (outcome === 'finished') expect(said).toMatch(/written past on 3\.6: [\d,]+ raft entries in \d+ ms/);
      // the members on their hosts brought here under one pause and the whole plan rehearsed on them (issue kv-rehearse, item 4)
      expect(said).toMatch(/rehearsal: passed on a clone of the cluster/);
    } finally {
      writeFileSync(stop, '');
      const w = await writer;
      const keys = await inHub(join(dirs!.v37, 'etcdctl'), ['--endpoints', c.endpoints.join(','), 'get', 'paths/', '--prefix', '--keys-only']);
      const have = new Set(String(keys.stdout).split('\n').filter(Boolean));
      const ackedKeys = readFileSync(acked, 'utf8').split('\n').filter(Boolean);
      const lost = ackedKeys.filter((k) => !have.has(k));
      const row = {
        cell: '3.5 → 3.7, systemd preset over ssh (a unit per version)',
        outcome,
        seconds: Math.round((Date.now() - t0) / 1000),
        acknowledged: ackedKeys.length,
        lost: lost.length,
        probes: (JSON.parse(String(w.stdout) || '{}') as { probes?: number }).probes ?? 0,
        writtenPast: [...said.matchAll(/written past on (3\.\d): ([\d,]+) raft entries in (\d+) ms/g)].map(
          (m) => `${m[1]}: ${m[2]} in ${(Number(m[3]) / 1000).toFixed(1)} s`,
        ),
        rehearsal: /rehearsal: passed/.test(said) ? 'passed' : (/rehearsal: not run \(([^)]*)/.exec(said)?.[1] ?? 'not run'),
      };
      process.stderr.write(`[kv paths] ${JSON.stringify(row)}\n`);
      if (process.env.OPSCTL_PATHS_OUT) appendFileSync(process.env.OPSCTL_PATHS_OUT, `${JSON.stringify(row)}\n`);
      expect(lost).toEqual([]);
    }
  }, 900_000);
});
