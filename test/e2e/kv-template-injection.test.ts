import { fakeSshScript } from '../helpers/fake-ssh.js';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { freePort } from '../../src/kv/sandbox/sandbox.js';
import { runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { etcdReleaseDirs } from '../helpers/etcd-releases.js';
import { until } from '../helpers/kv.js';

const releases = etcdReleaseDirs();

/**
 * The three injections of issue 27, through the built binary against real etcd 3.2.32, with a FAKE
 * ssh first on the PATH (it logs its argv, runs a -oProxyCommand locally as real ssh does, and runs
 * its remote command with sh -c, as sshd does). Each payload touches a marker file: it must never exist.
 */
describe.runIf(releases)('kv templates: names, hosts and snapshot paths are data, never code (the built binary, real etcd 3.2)', () => {
  const T = mkdtempSync(join(tmpdir(), 'opsctl-kv-inject-'));
  const BIN = join(T, 'bin');
  const LOG = join(T, 'ssh-log');
  const M = join(T, 'markers');
  const cfg = tempConfigDir('opsctl-kv-inject-cfg-');
  const env = { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1', PATH: `${BIN}:${process.env.PATH ?? '/usr/bin:/bin'}` };
  // In the marker directory: a relative `touch x` lands there too.
  const opsctl = (...args: string[]) => runBin(args, { env, timeout: 180_000, cwd: M });
  const procs: ChildProcess[] = [];
  const HOSTILE = `e1$(touch ${M}/name)`;
  let hostile = '';
  let plain = '';
  let plainPeer = '';

  const sshCalls = () => readdirSync(LOG).map((f) => readFileSync(join(LOG, f)).toString('utf8').split('\0').slice(0, -1));

  /** One real etcd 3.2.32 member named `name` on free ports; its client URL. */
  async function member(name: string): Promise<{ client: string; peer: string }> {
    const [c, p] = [await freePort(), await freePort()];
    const client = `http://127.0.0.1:${c}`;
    const peer = `http://127.0.0.1:${p}`;
    const dir = mkdtempSync(join(T, 'etcd-'));
    const child = spawn(
      join(releases!.v32, 'etcd'),
      [
        '--name',
        name,
        '--data-dir',
        join(dir, 'data'),
        '--listen-client-urls',
        client,
        '--advertise-client-urls',
        client,
        '--listen-peer-urls',
        peer,
        '--initial-advertise-peer-urls',
        peer,
        '--initial-cluster',
        `${name}=${peer}`,
      ],
      { stdio: 'ignore' },
    );
    procs.push(child);
    await until(async () => (await fetch(`${client}/health`).catch(() => undefined))?.ok === true, 60_000, `etcd ${name} healthy`);
    return { client, peer };
  }

  beforeAll(async () => {
    for (const d of [BIN, LOG, M]) mkdirSync(d);
    writeFileSync(join(BIN, 'ssh'), fakeSshScript('kv-template-injection', `{ for a in "$@"; do printf '%s\\0' "$a"; done; } >"${LOG}/$(date +%s%N).$$"`));
    chmodSync(join(BIN, 'ssh'), 0o755);
    hostile = (await member(HOSTILE)).client;
    const p = await member('etcd1');
    plain = p.client;
    plainPeer = p.peer;
  }, 300_000);

  beforeEach(() => {
    for (const f of readdirSync(LOG)) rmSync(join(LOG, f));
  });

  afterAll(() => {
    for (const c of procs) if (c.pid) c.kill('SIGKILL');
    rmSync(T, { recursive: true, force: true });
    cfg.cleanup();
  });

  it('a member named e1$(touch …) in the cluster\'s own member list, --data-dir /var/lib/etcd/{name} --on-host "ssh {host}", --dry-run: refused naming the member and the rule, nothing run', async () => {
    const r = await opsctl(
      'kv',
      'upgrade',
      '--endpoints',
      hostile,
      '--to',
      '3.3',
      '--dry-run',
      '--no-backup',
      '--stop-cmd',
      'ssh {host} systemctl stop etcd',
      '--start-cmd',
      'ssh {host} systemctl start etcd',
      '--running-cmd',
      'ssh {host} systemctl is-active etcd',
      '--data-dir',
      '/var/lib/etcd/{name}',
      '--on-host',
      'ssh {host}',
    );
    expect(r.exitCode, String(r.stderr)).toBe(2);
    expect(String(r.stderr)).toMatch(/member "e1\$\(touch .*\/name\)": \{name\} "e1\$\(touch .*\)": a member name used in a command is 1–253 letters, digits/);
    expect(readdirSync(M)).toEqual([]);
    expect(sshCalls()).toEqual([]);
  }, 300_000);

  it('--dry-run prints the argv each member would run, quoted for display, and runs none of it', async () => {
    const r = await opsctl(
      'kv',
      'upgrade',
      '--endpoints',
      plain,
      '--to',
      '3.3',
      '--dry-run',
      '--no-backup',
      '--stop-cmd',
      'ssh -l admin {host} sudo systemctl stop etcd@{name}',
      '--start-cmd',
      'ssh {host} sudo sh -c "systemctl start etcd-{version} && echo started {name}"',
      '--running-cmd',
      'ssh {host} systemctl is-active etcd',
      // (no trial template: its proof is waived by name, so the plan is what this shows)
      '--skip-trial',
      'etcd1',
      '--skip-reason',
      'the test: the argv shown, nothing run',
    );
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const out = String(r.stdout);
    expect(out).toContain('etcd1: stop:  ssh -l admin -- 127.0.0.1 sudo systemctl stop etcd@etcd1');
    // The script is one word for the remote shell ('…'), shown as a local shell line would pass it to ssh.
    expect(out).toContain(`etcd1: start: ssh -- 127.0.0.1 sudo sh -c ''\\''systemctl start etcd-3.3 && echo started etcd1'\\'''`);
    expect(out).toMatch(/--dry-run: nothing was changed/);
    expect(sshCalls().filter((a) => a.some((w) => /stop|start/.test(w)))).toEqual([]);
    expect(readdirSync(M)).toEqual([]);
  }, 300_000);

  it("a snapshot path with $(touch …) through the systemd preset's restore check (kv restore --dry-run): one argument on the host, nothing else ran", async () => {
    const snapDir = join(T, 'snaps');
    mkdirSync(snapDir);
    const saved = join(snapDir, 'plain.db');
    execFileSync(join(releases!.v32, 'etcdctl'), ['--endpoints', plain, 'snapshot', 'save', saved], {
      env: { ETCDCTL_API: '3', PATH: '/usr/bin:/bin' },
      stdio: 'pipe',
    });
    // A file name holds no '/': the payload touches a file in the current directory (opsctl's: the marker directory).
    const snapshot = join(snapDir, '$(touch snapshot).db');
    copyFileSync(saved, snapshot);
    const dataDir = join(T, 'data-etcd1');
    mkdirSync(dataDir);
    const file = join(T, 'restore.yaml');
    writeFileSync(
      file,
      `members:\n  - { name: etcd1, endpoint: "${plain}", host: 127.0.0.1, peerUrl: "${plainPeer}" }\ndriver: { type: systemd, dataDir: "${dataDir}", sudo: false }\n`,
    );
    const r = await opsctl('kv', 'restore', '--cluster', file, '--snapshot', snapshot, '--to-version', '3.2', '--dry-run');
    expect(readdirSync(M)).toEqual([]);
    // The check ran once for the member, over ssh, with the path as one quoted word for the remote shell.
    const calls = sshCalls();
    expect(calls, `${String(r.stdout)}\n${String(r.stderr)}`).toContainEqual(['--', '127.0.0.1', 'test', '-d', dataDir, '&&', 'test', '-f', `'${snapshot}'`]);
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(String(r.stdout) + String(r.stderr)).toMatch(/--dry-run: nothing was changed/);
  }, 300_000);

  it('a cluster-file host "-oProxyCommand=touch …" is refused when the file is read (exit 2, naming members.0.host), never an ssh option', async () => {
    const file = join(T, 'proxy.yaml');
    writeFileSync(
      file,
      `members:\n  - { name: etcd1, endpoint: "${plain}", host: "-oProxyCommand=touch ${M}/host" }\ndriver: { type: systemd, dataDir: /var/lib/etcd }\n`,
    );
    for (const args of [
      ['kv', 'upgrade', '--cluster', file, '--to', '3.3', '--dry-run'],
      ['kv', 'health', '--cluster', file],
    ]) {
      const r = await opsctl(...args);
      expect(r.exitCode, String(r.stderr)).toBe(2);
      expect(String(r.stderr)).toMatch(/members\.0\.host: "-oProxyCommand=touch .*" \(member "etcd1"\): a host is a DNS name .*never starting with "-"/);
    }
    expect(readdirSync(M)).toEqual([]);
    expect(sshCalls()).toEqual([]);
    expect(existsSync(join(M, 'host'))).toBe(false);
  }, 300_000);
});
