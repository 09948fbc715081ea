import { execa, type ResultPromise } from 'execa';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireProgram } from './e2e.js';
import { until } from './kv.js';
import type { NetnsHosts } from './netns.js';

/** openssh-server and openssh-client (Debian packages; scripts/test-prereqs.sh installs them). */
export function requireSsh(): boolean {
  return (
    requireProgram('openssh-server (sshd)', '/usr/sbin/sshd') &&
    requireProgram('openssh-client (ssh)', '/usr/bin/ssh') &&
    requireProgram('openssh-client (ssh-keygen)', '/usr/bin/ssh-keygen')
  );
}

export interface SshHosts {
  dir: string;
  /** The ssh client command with every option, for a command template: `${ssh} {host} …`. */
  ssh: string;
  /** Runs `ssh HOST command…` from the hub namespace (as opsctl does). */
  run(i: number, command: string): Promise<{ exitCode?: number; stdout: string; stderr: string }>;
  /** How many sessions host i's sshd accepted with the test's key (its log). */
  accepted(i: number): number;
  /** Stops host i's sshd (by PID): ssh to it then fails with exit 255 while the host's etcd runs on. */
  down(i: number): Promise<void>;
  /** Starts host i's sshd again and waits until it accepts a session. */
  up(i: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A real OpenSSH server in each host's namespace, on port 22 of the host's address: a host key per
 * host generated here, key authentication only (a client key generated here, root), a known_hosts
 * file written here with each host's key, and a client that checks it (StrictHostKeyChecking=yes),
 * never prompts (BatchMode) and gives up on an unreachable host after ConnectTimeout. `env(i)` is
 * set in host i's sessions (sshd SetEnv: PATH, where a test puts stand-in commands). The servers are
 * this helper's children, stopped by PID. `own(i)`, where given: host i's own filesystem at a path
 * (`[dir, at]`: the directory `dir` mounted over `at` for its sshd and every session of it, in a mount
 * namespace of its own), so hosts keep different files at the same path, as real hosts do, and the hub
 * (where opsctl runs) sees `at` as it is.
 */
export async function sshHosts(
  hosts: NetnsHosts,
  env: (i: number) => Record<string, string> = () => ({}),
  own?: (i: number) => [dir: string, at: string],
): Promise<SshHosts> {
  const dir = mkdtempSync(join(tmpdir(), 'opsctl-sshd-'));
  const keygen = (file: string) => execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'opsctl-test', '-f', file], { stdio: 'pipe' });
  keygen(join(dir, 'client'));
  writeFileSync(join(dir, 'authorized_keys'), readFileSync(join(dir, 'client.pub')));
  // sshd's privilege separation directory (compiled in; Debian's service creates it at boot).
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const known: string[] = [];
  const servers: ResultPromise[] = [];
  const sshd = (i: number) => ['/usr/sbin/sshd', '-D', '-f', join(dir, `sshd${i + 1}.conf`), '-E', join(dir, `sshd${i + 1}.log`)];
  const mounted = (i: number) => {
    const o = own?.(i);
    return o ? ['unshare', '--mount', '--propagation', 'private', '--', 'sh', '-c', 'mount --bind "$1" "$2" && shift 2 && exec "$@"', 'sh', ...o] : [];
  };
  const serve = (i: number) => execa('ip', ['netns', 'exec', hosts.ns(i), ...mounted(i), ...sshd(i)], { reject: false, stdin: 'ignore' });
  try {
    for (let i = 0; i < hosts.addrs.length; i++) {
      const hostKey = join(dir, `host${i + 1}`);
      keygen(hostKey);
      known.push(`${hosts.addr(i)} ${readFileSync(`${hostKey}.pub`, 'utf8').split(' ').slice(0, 2).join(' ')}`);
      const vars = Object.entries(env(i)).map(([k, v]) => `${k}=${v}`);
      const conf = join(dir, `sshd${i + 1}.conf`);
      writeFileSync(
        conf,
        [
          `ListenAddress ${hosts.addr(i)}:22`,
          `HostKey ${hostKey}`,
          `PidFile ${join(dir, `sshd${i + 1}.pid`)}`,
          `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
          'PermitRootLogin prohibit-password',
          'PubkeyAuthentication yes',
          'PasswordAuthentication no',
          'KbdInteractiveAuthentication no',
          'UsePAM no',
          'UseDNS no',
          // the test's files live under /tmp
          'StrictModes no',
          'MaxStartups 100',
          'LogLevel VERBOSE',
          ...(vars.length ? [`SetEnv ${vars.join(' ')}`] : []),
          '',
        ].join('\n'),
      );
      servers.push(serve(i));
    }
    writeFileSync(join(dir, 'known_hosts'), `${known.join('\n')}\n`);
  } catch (err) {
    for (const s of servers) s.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const opts = [
    '-F',
    '/dev/null',
    '-i',
    join(dir, 'client'),
    '-o',
    'IdentitiesOnly=yes',
    '-o',
    `UserKnownHostsFile=${join(dir, 'known_hosts')}`,
    '-o',
    'GlobalKnownHostsFile=/dev/null',
    '-o',
    'StrictHostKeyChecking=yes',
    '-o',
    'BatchMode=yes',
    '-o',
    'ConnectTimeout=3',
    // X25519 key exchange: OpenSSH 9's default, sntrup761x25519, costs the client ~0.1 s of CPU a session (its
    // key generation), ~8 of 10 parts of what a session costs; over the hundred-odd sessions of an upgrade
    // over ssh that is CPU the whole run waits for, and no test here is about the key exchange.
    '-o',
    'KexAlgorithms=curve25519-sha256',
    '-l',
    'root',
  ];
  const run = (i: number, command: string) =>
    execa('ip', ['netns', 'exec', hosts.hub, 'ssh', ...opts, hosts.addr(i), command], { reject: false, stdin: 'ignore', timeout: 30_000 }).then((r) => ({
      exitCode: r.exitCode,
      stdout: String(r.stdout),
      stderr: String(r.stderr),
    }));
  const stop = async () => {
    for (const s of servers) if (s.pid) s.kill('SIGTERM');
    await Promise.all(servers);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < hosts.addrs.length; i++) await until(async () => (await run(i, 'true')).exitCode === 0, 20_000, `sshd on ${hosts.addr(i)}`);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    dir,
    ssh: ['ssh', ...opts].join(' '),
    run,
    async down(i) {
      const s = servers[i];
      if (!s) throw new Error(`no sshd ${i}`);
      s.kill('SIGTERM');
      await s;
    },
    async up(i) {
      servers[i] = serve(i);
      await until(async () => (await run(i, 'true')).exitCode === 0, 20_000, `sshd on ${hosts.addr(i)} again`);
    },
    accepted: (i) => (readFileSync(join(dir, `sshd${i + 1}.log`), 'utf8').match(/Accepted publickey for root/g) ?? []).length,
    stop,
  };
}
