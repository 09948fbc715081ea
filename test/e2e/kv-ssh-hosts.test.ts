import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { startCluster, watchDown, type RealCluster, type RealTestCluster } from '../framework/index.js';
import { etcdReleaseDirs } from '../helpers/etcd-releases.js';
import { readJournal, until, untilWhile } from '../helpers/kv.js';
import { canNetns, hubRunner, type NetnsHosts, netnsHosts } from '../helpers/netns.js';
import { requireSsh, sshHosts, type SshHosts } from '../helpers/sshd.js';

const releases = etcdReleaseDirs();
const ok = Boolean(releases) && canNetns('kv ssh multi-host e2e') && requireSsh();

/**
 * Real remote hosts over real ssh. Three hosts, each a network namespace made here (10.214.N.1-3,
 * only inside what this test makes, joined by a bridge in a hub namespace where opsctl runs), each
 * running a real OpenSSH server (test/helpers/sshd.ts: key auth with a key generated here, a
 * known_hosts file written here, StrictHostKeyChecking=yes, BatchMode, ConnectTimeout=3) and a real
 * etcd 3.2.32 member. opsctl upgrades them to 3.3.27 and every stop, running check, data-dir backup,
 * config read and start goes over ssh to the member's host.
 *
 * The command driver's templates run the test's control script (ctl.sh of test/framework/real.ts) over ssh.
 * The systemd preset: a real systemd cannot run inside this test, so the preset's `systemctl stop|
 * start|is-active etcd` commands go over real ssh to a STAND-IN `systemctl`, a shell script this test
 * installs (in a directory first on the PATH of the ssh sessions, sshd SetEnv; nothing on the machine's
 * PATH) that starts the member's etcd from the preset's binary link and stops it by its PID file
 * (waiting until it is gone, as systemctl stop does). What runs for real: ssh, sshd, the preset's
 * exact command lines (ln -sfn, cp -a, du -sb, cat), etcd 3.2.32 and 3.3.27; what does not: systemd.
 * Everything is torn down in afterAll, also after a failure.
 */
describe.runIf(ok)('kv upgrade of real hosts over ssh (network namespaces, sshd, real etcd 3.2.32 → 3.3.27, the built binary)', () => {
  let hosts: NetnsHosts;
  let ssh: SshHosts;
  const cfg = tempConfigDir('opsctl-kv-ssh-');
  const clusters: RealTestCluster[] = [];
  let standinDir: string;
  /** opsctl's config dir: one per test, so each has its own journal. */
  let home = cfg.dir;
  const inHub = hubRunner(
    () => hosts.hub,
    () => home,
  );
  const opsctl = (...args: string[]) => inHub(process.execPath, [BIN, ...args]);
  const versions = (c: RealCluster) =>
    Promise.all(
      c.members.map((m) =>
        inHub('curl', ['-sS', '--max-time', '2', `${m.clientUrl}/version`], 10_000).then((r) => {
          try {
            return JSON.parse(String(r.stdout));
          } catch {
            return undefined;
          }
        }),
      ),
    );
  const etcdctl = (c: RealCluster, ...args: string[]) =>
    inHub(join(releases!.v33, 'etcdctl'), ['--endpoints', c.endpoints.join(','), '--dial-timeout', '5s', ...args]);
  const clusterFile = (name: string, c: RealCluster, driver: string[]) => {
    const file = join(cfg.dir, name);
    writeFileSync(
      file,
      [
        'members:',
        ...c.members.map((m) => `  - { name: ${m.name}, endpoint: "${m.clientUrl}", host: "${m.host}" }`),
        'driver:',
        ...driver.map((l) => `  ${l}`),
        '',
      ].join('\n'),
    );
    return file;
  };

  beforeAll(async () => {
    hosts = netnsHosts(3, 'kvhosts', 214);
    standinDir = join(cfg.dir, 'standin-bin');
    ssh = await sshHosts(hosts, (i) => ({ PATH: `${standinDir}:/usr/local/bin:/usr/bin:/bin`, OPSCTL_TEST_MEMBER: `etcd${i + 1}` }));
  }, 300_000);

  afterAll(async () => {
    for (const c of clusters) await c.destroy();
    await ssh?.stop();
    hosts?.destroy();
    cfg.cleanup();
  });

  it('command driver over ssh: a host cut off mid-run halts with exit 3, never two members down; link restored, a re-run finishes', async () => {
    // each member on its host, started by the control script there; ready: every member at cluster version 3.2.0 (asked from the hub)
    const t = await startCluster({
      members: 'real',
      size: 3,
      netns: hosts,
      ports: { client: 2379, peer: 2380 },
      bins: { '3.2': releases!.v32, '3.3': releases!.v33 },
      version: '3.2',
      ready: 'version',
    });
    clusters.push(t);
    const c = t.real;
    for (let i = 0; i < 20; i++) expect((await etcdctl(c, 'put', `ssh/${i}`, `v${i}`)).exitCode).toBe(0);
    const file = clusterFile('ssh-command.yaml', c, [
      'type: command',
      `stop: ${ssh.ssh} {host} ${c.ctl} stop {name}`,
      `start: ${ssh.ssh} {host} ${c.ctl} start {name} {version}`,
      `running: ${ssh.ssh} {host} ${c.ctl} running {name}`,
      `backup: ${ssh.ssh} {host} cp -a ${c.dir}/{name}/data ${c.dir}/{name}/data.bak-{run}`,
      `config: ${ssh.ssh} {host} cat ${c.dir}/{name}/etcd.yaml`,
      // the proof before each stop, on each host over ssh (the operator's `ssh {host} sudo sh -s`), and where each minor's binary is there
      `trial: ${ssh.ssh} {host} sh -s`,
      'bins:',
      `  "3.3": ${c.dir}/bin-3.3/etcd`,
    ]);
    const before = hosts.addrs.map((_, i) => ssh.accepted(i));

    const first = await watchDown(c, async () => {
      const up = opsctl(
        'kv',
        'upgrade',
        '--to',
        '3.3',
        '--yes',
        '--cluster',
        file,
        '--settle',
        '3s',
        '--poll-interval',
        '100ms',
        '--healthy-timeout',
        '30s',
        '--json',
      );
      // During the first member's settle: cut the link of a host not yet upgraded.
      await untilWhile(
        up,
        () => readJournal(home)?.steps?.some((s: any) => s.kind === 'settle' && s.status === 'running'),
        180_000,
        'the first member settling',
      );
      const settling = readJournal(home).steps.find((s: any) => s.kind === 'settle' && s.status === 'running').member;
      const cut = c.members.findIndex((m) => m.name !== settling);
      hosts.cut(cut);
      return { r: await up, cut, settling };
    });
    const { r, cut, settling } = first.result;
    expect(r.exitCode, String(r.stderr)).toBe(3);
    expect(String(r.stderr)).toMatch(/upgrade halted at/);
    expect(String(r.stderr)).toContain(c.members[cut]!.name);
    expect(first.maxDown).toBeLessThanOrEqual(1);
    expect((await versions(c)).filter((v) => v?.etcdserver === '3.3.27')).toHaveLength(1);
    // The first member's stop, backup and start went over ssh to its host.
    const moved = c.members.findIndex((m) => m.name === settling);
    expect(ssh.accepted(moved) - before[moved]!).toBeGreaterThanOrEqual(4);
    expect(readdirSync(c.members[moved]!.dir).filter((f) => f.startsWith('data.bak-'))).toHaveLength(1);

    hosts.restore(cut);
    await until(
      async () => {
        const st = await opsctl('kv', 'status', '--cluster', file, '--json');
        if (st.exitCode !== 0) return false;
        const rows = JSON.parse(String(st.stdout));
        return rows.every((x: any) => x.healthy) && rows.filter((x: any) => x.leader).length === 1;
      },
      60_000,
      'the cluster whole again',
    );
    const second = await watchDown(c, () =>
      opsctl('kv', 'upgrade', '--to', '3.3', '--yes', '--cluster', file, '--settle', '0s', '--poll-interval', '100ms', '--json'),
    );
    expect(second.result.exitCode, String(second.result.stderr)).toBe(0);
    const done = JSON.parse(String(second.result.stdout));
    expect(done.status).toBe('done');
    // a backup template without a drop template: the copies stay on the hosts, and the report says so
    for (const f of done.copies) expect(f).toMatchObject({ removed: false, detail: expect.stringContaining('the driver has no drop-backup template') });
    // each copy measured on its host as the run finished: du over ssh (the trial template), the path read from the backup template
    expect(done.dataCopies.filter((x: any) => x.status === 'done').length).toBeGreaterThanOrEqual(3);
    for (const x of done.dataCopies.filter((y: any) => y.status === 'done')) {
      expect(x).toMatchObject({ host: c.members.find((m) => m.name === x.member)!.host, path: `${c.dir}/${x.member}/data.bak-${x.run}` });
      expect(x.bytes, JSON.stringify(x)).toBe(Number(execFileSync('du', ['-sB1', x.path]).toString().split('\t')[0]));
    }
    expect(done.backups.held).toMatchObject({ onHosts: done.dataCopies.filter((y: any) => y.status === 'done').length, unknown: 0 });
    expect(second.maxDown).toBeLessThanOrEqual(1);
    const v = await versions(c);
    expect(v.map((x) => x.etcdserver)).toEqual(['3.3.27', '3.3.27', '3.3.27']);
    expect(v.every((x) => x.etcdcluster === '3.3.0')).toBe(true);
    for (const m of c.members)
      expect(
        readdirSync(m.dir).filter((f) => f.startsWith('data.bak-')),
        m.name,
      ).toHaveLength(1);
    const keys = await etcdctl(c, 'get', 'ssh/', '--prefix', '--keys-only');
    expect(String(keys.stdout).split('\n').filter(Boolean)).toHaveLength(20);
    process.stderr.write(
      `[kv ssh e2e] command driver: process checks ${first.checks + second.checks}, most members down at once ${Math.max(first.maxDown, second.maxDown)}, ssh sessions ${hosts.addrs.map((_, i) => ssh.accepted(i)).join('/')}\n`,
    );
    for (const m of c.members) c.stop(m);
  }, 400_000);

  it('systemd preset over ssh (a stand-in systemctl, named above): hosts that stop answering ssh halt the run (exit 3, the member not stopped); back, the re-run upgrades every member, backs up each data dir, links the 3.3 binary', async () => {
    // each member's folder on its host; none started: the stand-in systemctl starts them over ssh
    const t = await startCluster({ members: 'real', size: 3, netns: hosts, ports: { client: 2479, peer: 2480 } });
    clusters.push(t);
    const c = t.real;
    home = join(cfg.dir, 'systemd-home');
    mkdirSync(home);
    // The stand-in systemctl: `start|stop|is-active [--quiet] etcd` for the member of this ssh
    // session's host (OPSCTL_TEST_MEMBER), by its PID file; stop waits until the process is gone
    // (systemd's TimeoutStopSec=90s, then SIGKILL).
    mkdirSync(standinDir, { recursive: true });
    writeFileSync(
      join(standinDir, 'systemctl'),
      `#!/bin/sh
# STAND-IN for systemctl (opsctl test kv-ssh-hosts): not systemd.
set -eu
cmd="$1"; shift
[ "\${1:-}" = "--quiet" ] && shift
[ "$1" = etcd ] || { echo "Unit $1.service not found." >&2; exit 5; }
d="${c.dir}/$OPSCTL_TEST_MEMBER"
alive() { [ -f "$d/pid" ] && kill -0 "$(cat "$d/pid")" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$(cat "$d/pid")/status"; }
case "$cmd" in
  start) alive && exit 0; nohup "$d/etcd-bin" --config-file "$d/etcd.yaml" >>"$d/etcd.log" 2>&1 </dev/null & echo $! >"$d/pid" ;;
  stop) if alive; then kill -TERM "$(cat "$d/pid")"; n=0; while alive; do n=$((n+1)); [ $n -lt 900 ] || kill -KILL "$(cat "$d/pid")"; sleep 0.1; done; fi ;;
  is-active) alive ;;
  # the unit's files as systemctl cat prints them: what its next start runs (the preset's settings template reads it)
  cat) printf '# /etc/systemd/system/etcd.service\n[Unit]\nDescription=etcd\n\n[Service]\nType=notify\nExecStart=%s/etcd-bin --config-file %s/etcd.yaml\nRestart=on-failure\n' "$d" "$d" ;;
  *) echo "stand-in systemctl: $cmd is not supported" >&2; exit 1 ;;
esac
`,
      { mode: 0o755 },
    );
    for (const m of c.members) {
      symlinkSync(join(releases!.v32, 'etcd'), join(m.dir, 'etcd-bin'));
      expect((await ssh.run(hosts.addrs.indexOf(m.host), 'systemctl start etcd')).exitCode).toBe(0);
    }
    await until(async () => (await versions(c)).every((v) => v?.etcdcluster === '3.2.0'), 60_000, 'the 3.2.32 cluster started by the stand-in');
    for (let i = 0; i < 10; i++) expect((await etcdctl(c, 'put', `preset/${i}`, `v${i}`)).exitCode).toBe(0);
    const file = clusterFile('ssh-systemd.yaml', c, [
      'type: systemd',
      'unit: etcd',
      `ssh: ${ssh.ssh}`,
      'sudo: false',
      `bins: { "3.3": "${join(releases!.v33, 'etcd')}" }`,
      `binLink: ${c.dir}/{name}/etcd-bin`,
      `dataDir: ${c.dir}/{name}/data`,
      `configFile: ${c.dir}/{name}/etcd.yaml`,
    ]);
    const plan = await opsctl('kv', 'upgrade', '--to', '3.3', '--cluster', file, '--dry-run', '--json');
    expect(plan.exitCode, String(plan.stderr)).toBe(0);
    // (the plan's text says the rule passed on every member in one line; --json keeps each member's finding)
    const trials = (JSON.parse(String(plan.stdout)) as { checks: Array<{ rule: string; member?: string; status: string; detail: string }> }).checks
      .filter((r) => r.rule === 'trial-start')
      .map((r) => `${r.member}: ${r.status}: ${r.detail}`)
      .join('\n');
    // The preset's trial template: on each host over ssh, the settings its unit's next start runs with (systemctl
    // cat: the config file its ExecStart= names), the 3.3 binary of `bins` started once with them:
    // on a copy of its data (the data trial's start, where it got through it: the same binary and settings),
    // else on the host's loopback and a scratch data dir.
    for (const m of c.members)
      expect(trials).toMatch(
        new RegExp(
          `${m.name}: ok: etcd 3\\.3\\.27 (served /health .*|started with its settings \\()config file ${m.dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/etcd\\.yaml on ${m.host.replace(/\./g, '\\.')}, 1 flag \\(the settings template for 3\\.3 \\(\`[^\`]*systemctl cat etcd\`\\): ExecStart=\\)`,
        ),
      );
    // Mid-run, the two hosts not yet upgraded stop answering ssh (their sshd stopped; etcd runs on):
    // the next member passes its health gate and snapshot, then its stop over ssh fails with exit
    // 255. The run halts with exit 3 and that member was not stopped.
    const cutoff = await watchDown(c, async () => {
      const up = opsctl('kv', 'upgrade', '--to', '3.3', '--yes', '--cluster', file, '--settle', '3s', '--poll-interval', '100ms', '--json');
      await untilWhile(
        up,
        () => readJournal(home)?.steps?.some((s: any) => s.kind === 'settle' && s.status === 'running'),
        180_000,
        'the first member settling',
      );
      const settling = readJournal(home).steps.find((s: any) => s.kind === 'settle' && s.status === 'running').member;
      const others = c.members.map((m, i) => (m.name === settling ? -1 : i)).filter((i) => i >= 0);
      for (const i of others) await ssh.down(i);
      return { r: await up, others, settling };
    });
    const { r, others, settling } = cutoff.result;
    expect(r.exitCode, String(r.stderr)).toBe(3);
    expect(String(r.stderr)).toMatch(
      // the first thing the stop step sends the host is the measure of its backup space (the systemd preset's du/df)
      /upgrade halted at etcd\d\/stop: not stopping etcd\d: its backup could not be measured: `ssh .*` failed \(exit 255\): ssh: connect to host 10\.214\.\d+\.\d+ port 22: Connection refused; etcd\d was not touched/,
    );
    expect(cutoff.maxDown).toBeLessThanOrEqual(1);
    const mixed = await versions(c);
    expect(mixed.filter((x) => x?.etcdserver === '3.3.27')).toHaveLength(1);
    expect(mixed.filter((x) => x?.etcdserver === '3.2.32')).toHaveLength(2);
    expect(c.members.every((m) => c.alive(m))).toBe(true);
    expect(c.members.find((m) => m.name === settling)).toBeDefined();
    for (const i of others) await ssh.up(i);

    const run = await watchDown(c, () =>
      opsctl('kv', 'upgrade', '--to', '3.3', '--yes', '--cluster', file, '--settle', '0s', '--poll-interval', '100ms', '--json'),
    );
    expect(run.result.exitCode, String(run.result.stderr)).toBe(0);
    expect(run.maxDown).toBeLessThanOrEqual(1);
    const out = JSON.parse(String(run.result.stdout));
    expect(out.status).toBe('done');
    const backups = out.steps.filter((s: any) => s.kind === 'backup-data');
    expect(backups.map((s: any) => s.status)).toEqual(['done', 'done', 'done']);
    for (const s of backups) expect(s.detail).toMatch(/^`ssh .* cp -a --sparse=always .*data\.bak-/);
    // once the hop was done, each copy was removed on its host by the preset's drop template (the restore point is the way back)
    expect(out.copies.map((f: any) => [f.member, f.removed]).sort()).toEqual(c.members.map((m) => [m.name, true]).sort());
    for (const f of out.copies) expect(f.detail).toMatch(/^`ssh .* rm -rf .*data\.bak-/);
    // measured on their hosts (the preset's `ssh {host} sudo sh -s`) before they were removed: counted as made, not as held
    expect(out.backups.made).toMatchObject({ copies: 3, onHosts: 3, unknown: 0 });
    expect(out.backups.made.bytes).toBeGreaterThan(out.snapshots.reduce((n: number, x: any) => n + x.bytes, 0));
    expect(out.backups.held).toMatchObject({ copies: 0, onHosts: 0, snapshots: 1 });
    const v = await versions(c);
    expect(v.map((x) => x.etcdserver)).toEqual(['3.3.27', '3.3.27', '3.3.27']);
    expect(v.every((x) => x.etcdcluster === '3.3.0')).toBe(true);
    for (const m of c.members) {
      expect(readlinkSync(join(m.dir, 'etcd-bin'))).toBe(join(releases!.v33, 'etcd'));
      expect(
        readdirSync(m.dir).filter((f) => f.startsWith('data.bak-')),
        m.name,
      ).toHaveLength(0);
    }
    const keys = await etcdctl(c, 'get', 'preset/', '--prefix', '--keys-only');
    expect(String(keys.stdout).split('\n').filter(Boolean)).toHaveLength(10);
    for (const m of c.members) await ssh.run(hosts.addrs.indexOf(m.host), 'systemctl stop etcd');
    // (600 s: each opsctl run is bounded by the hub runner's 240 s, so a run that hangs is reported with its output before this)
  }, 600_000);
});
