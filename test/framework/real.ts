import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/kv/sandbox/sandbox.js';
import type { TestCerts } from '../helpers/etcd-certs.js';
import { until } from '../helpers/kv.js';

/**
 * Real etcd members for tests, each started and stopped through a small control script the way a
 * host's service manager would (`ctl.sh start NAME BINDIR` daemonizes, `stop` sends SIGTERM to the
 * member's own PID, `running` checks it, `config` prints the member's config file) - the command
 * driver's templates call it. Each member reads a YAML --config-file (as systemd installs do), so
 * the 3.3 configuration check has a real file to read. Only the PIDs this helper wrote are signalled.
 */
export interface RealMember {
  name: string;
  host: string;
  clientUrl: string;
  peerUrl: string;
  /** The member's own folder (its config file, PID file, log and data dir). */
  dir: string;
  dataDir: string;
  configFile: string;
}

export interface RealCluster {
  dir: string;
  ctl: string;
  members: RealMember[];
  endpoints: string[];
  /** etcdctl (API 3) of `bin` against the cluster, with the TLS flags; throws on failure. */
  etcdctl(bin: string, args: string[], env?: Record<string, string>): string;
  start(m: RealMember, bin: string): void;
  stop(m: RealMember): void;
  /** Whether the member's process is alive (its PID file, not its port). */
  alive(m: RealMember): boolean;
  pid(m: RealMember): number | undefined;
  /** SIGKILLs every member this helper started and removes the data (afterAll). */
  destroy(): void;
}

export interface RealClusterOptions {
  size: number;
  /** Member addresses (default 127.0.0.1 with free ports); the netns test gives its own. */
  hosts?: string[];
  ports?: { client: number; peer: number };
  certs?: TestCerts;
  /** etcd's snapshot-count (default 10000; 'etcd' leaves it out: etcd's own default, 100,000 up to 3.5). */
  snapshotCount?: number | 'etcd';
  /** Extra YAML lines of each member's config file. */
  extraConfig?: (m: { name: string }) => string;
  /** Release directories by minor version ("3.2" → …/etcd-v3.2.32-linux-amd64): `ctl.sh start NAME 3.2`. */
  bins?: Record<string, string>;
  /** Prefix of the control script commands (the netns test: ip netns exec NS). */
  wrap?: (m: { name: string; host: string }) => string[];
  /**
   * A member started from flags (and ETCD_* variables) instead of its config file, as a unit's
   * ExecStart and Environment= would: the config file's settings as flags, then `args`, with `env`.
   */
  flags?: (m: { name: string }) => { args: string[]; env?: Record<string, string> } | undefined;
}

const CTL = `#!/bin/sh
# ctl.sh start|stop|running|config NAME [BINDIR|MINOR]: one etcd member of a test cluster.
set -eu
d="$(dirname "$0")/$2"
case "$1" in
  start)
    # $3: a release directory, or a minor version with a bin-<minor> link beside this script.
    bin="$3"; [ -d "$bin" ] || bin="$(dirname "$0")/bin-$3"
    # a member started from flags, one per line (etcd-MINOR.args for that minor only, as a per-version unit), and the KEY=VALUE lines of etcd.env
    args="$d/etcd.args"; [ -f "$d/etcd-$3.args" ] && args="$d/etcd-$3.args"
    if [ -f "$args" ]; then
      set --; while IFS= read -r a; do set -- "$@" "$a"; done <"$args"
      env $(cat "$d/etcd.env" 2>/dev/null) nohup "$bin/etcd" "$@" >>"$d/etcd.log" 2>&1 </dev/null &
    else
      nohup "$bin/etcd" --config-file "$d/etcd.yaml" >>"$d/etcd.log" 2>&1 </dev/null &
    fi
    echo $! >"$d/pid" ;;
  # (the PID file's process only while it is this member's etcd: a PID the kernel gave another process since is not it)
  stop) [ -f "$d/pid" ] && grep -qaF "$d/" "/proc/$(cat "$d/pid")/cmdline" 2>/dev/null && kill -TERM "$(cat "$d/pid")" 2>/dev/null || true ;;
  running) [ -f "$d/pid" ] && grep -qaF "$d/" "/proc/$(cat "$d/pid")/cmdline" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$(cat "$d/pid")/status" 2>/dev/null ;;
  config) echo "$d/etcd.yaml" ;;
  *) echo "usage: ctl.sh start|stop|running|config NAME [BINDIR]" >&2; exit 2 ;;
esac
`;

export async function realCluster(o: RealClusterOptions): Promise<RealCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'opsctl-etcd-'));
  const ctl = join(dir, 'ctl.sh');
  writeFileSync(ctl, CTL, { mode: 0o755 });
  for (const [minor, bin] of Object.entries(o.bins ?? {})) symlinkSync(bin, join(dir, `bin-${minor}`));
  const scheme = o.certs ? 'https' : 'http';
  const members: RealMember[] = [];
  // Free ports, and distinct: a port is not held between the check and the member binding it.
  const taken = new Set<number>();
  const port = async () => {
    for (;;) {
      const p = await freePort();
      if (!taken.has(p)) {
        taken.add(p);
        return p;
      }
    }
  };
  for (let i = 0; i < o.size; i++) {
    const host = o.hosts?.[i] ?? '127.0.0.1';
    const client = o.ports?.client ?? (await port());
    const peer = o.ports?.peer ?? (await port());
    const name = `etcd${i + 1}`;
    members.push({
      name,
      host,
      clientUrl: `${scheme}://${host}:${client}`,
      peerUrl: `${scheme}://${host}:${peer}`,
      dir: join(dir, name),
      dataDir: join(dir, name, 'data'),
      configFile: join(dir, name, 'etcd.yaml'),
    });
  }
  const initial = members.map((m) => `${m.name}=${m.peerUrl}`).join(',');
  const token = `opsctl-test-${Math.random().toString(16).slice(2, 10)}`;
  for (const m of members) {
    mkdirSync(m.dir, { recursive: true });
    const c = o.certs;
    const tls = c
      ? `client-transport-security:\n  cert-file: ${c.serverCert}\n  key-file: ${c.serverKey}\n  client-cert-auth: true\n  trusted-ca-file: ${c.ca}\npeer-transport-security:\n  cert-file: ${c.serverCert}\n  key-file: ${c.serverKey}\n  client-cert-auth: true\n  trusted-ca-file: ${c.ca}\n`
      : '';
    writeFileSync(
      m.configFile,
      [
        `name: ${m.name}`,
        `data-dir: ${m.dataDir}`,
        `listen-client-urls: ${m.clientUrl}`,
        `advertise-client-urls: ${m.clientUrl}`,
        `listen-peer-urls: ${m.peerUrl}`,
        `initial-advertise-peer-urls: ${m.peerUrl}`,
        `initial-cluster: ${initial}`,
        `initial-cluster-token: ${token}`,
        'initial-cluster-state: new',
        // Fast but realistic on a loaded 2-core machine: 100 ms heartbeats, 1 s elections.
        'heartbeat-interval: 100',
        'election-timeout: 1000',
        o.snapshotCount === 'etcd' ? '' : `snapshot-count: ${o.snapshotCount ?? 10000}`,
        // 3.4 serves the JSON gateway from a config file only when asked (3.2/3.3 ignore the key).
        'enable-grpc-gateway: true',
        o.extraConfig?.(m) ?? '',
      ].join('\n') + `\n${tls}`,
    );
  }
  for (const m of members) {
    const f = o.flags?.(m);
    if (!f) continue;
    // The config file's own settings (plain `key: value` lines), as flags, then the member's extra ones.
    const own = readFileSync(m.configFile, 'utf8')
      .split('\n')
      .map((l) => /^([a-z][a-z0-9-]*): (\S.*)$/.exec(l))
      .filter((x): x is RegExpExecArray => Boolean(x))
      // (a flag 3.2 and 3.3 do not know; 3.4's gateway is on by default where no config file turns it off)
      .filter((x) => x[1] !== 'enable-grpc-gateway')
      .map((x) => `--${x[1]}=${x[2]}`);
    writeFileSync(join(m.dir, 'etcd.args'), `${[...own, ...f.args].join('\n')}\n`);
    if (f.env)
      writeFileSync(
        join(m.dir, 'etcd.env'),
        `${Object.entries(f.env)
          .map(([k, v]) => `${k}=${v}`)
          .join('\n')}\n`,
      );
  }
  const run = (m: RealMember, args: string[]) => {
    const argv = [...(o.wrap?.(m) ?? []), ctl, ...args];
    execFileSync(argv[0]!, argv.slice(1), { stdio: 'pipe' });
  };
  const pid = (m: RealMember) => {
    const f = join(m.dir, 'pid');
    if (!existsSync(f)) return undefined;
    const n = Number(readFileSync(f, 'utf8').trim());
    return Number.isInteger(n) && n > 0 ? n : undefined;
  };
  const tlsArgs = o.certs ? ['--cacert', o.certs.ca, '--cert', o.certs.clientCert, '--key', o.certs.clientKey] : [];
  return {
    dir,
    ctl,
    members,
    endpoints: members.map((m) => m.clientUrl),
    etcdctl: (bin, args, env = {}) =>
      execFileSync(
        join(bin, 'etcdctl'),
        ['--endpoints', members.map((m) => m.clientUrl).join(','), ...tlsArgs, '--dial-timeout', '5s', '--command-timeout', '15s', ...args],
        {
          env: { PATH: '/usr/bin:/bin', ETCDCTL_API: '3', ...env },
          stdio: 'pipe',
        },
      ).toString(),
    start: (m, bin) => run(m, ['start', m.name, bin]),
    stop: (m) => run(m, ['stop', m.name]),
    pid,
    alive(m) {
      const p = pid(m);
      if (p === undefined) return false;
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(m.dir) && !/^State:\s+Z/m.test(readFileSync(`/proc/${p}/status`, 'utf8'));
      } catch {
        return false;
      }
    },
    destroy() {
      for (const m of members) {
        const p = pid(m);
        if (p === undefined) continue;
        try {
          if (readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(m.dir)) process.kill(p, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * One Debian etcd 3.4 member (plain or, with `certs`, client-certificate TLS) with a `root` user of
 * `password` and auth enabled: the cluster the kv auth tests run against.
 */
export async function authCluster34(password: string, certs?: TestCerts): Promise<RealCluster> {
  const c = await realCluster({ size: 1, ...(certs ? { certs } : {}) });
  c.start(c.members[0]!, '/usr/bin');
  await until(
    () => {
      try {
        c.etcdctl('/usr/bin', ['get', 'probe']);
        return true;
      } catch {
        return false;
      }
    },
    30_000,
    certs ? 'etcd 3.4 over TLS' : 'etcd 3.4',
  );
  enableAuth(c, '/usr/bin', password);
  return c;
}

/** A `root` user of `password`, and auth enabled, through `bin`'s etcdctl. */
export function enableAuth(c: RealCluster, bin: string, password: string): void {
  c.etcdctl(bin, ['user', 'add', `root:${password}`]);
  c.etcdctl(bin, ['auth', 'enable']);
}

/**
 * A command-driver cluster file for `c` (its control script stops, starts and checks each member),
 * written to `file`. `prefix` goes before each control command (e.g. `ip netns exec NS{name}`), `host`
 * adds each member's host, `extra` adds driver lines (`backup: …`), `certs` the client-certificate TLS, `top` top-level lines (`auth: …`).
 */
export interface CommandFileOptions {
  certs?: TestCerts;
  prefix?: string;
  host?: boolean;
  extra?: string[];
  top?: string[];
  bins?: boolean;
}

export function writeCommandClusterFile(file: string, c: RealCluster, o: CommandFileOptions = {}): string {
  const run = o.prefix ? `${o.prefix} ${c.ctl}` : c.ctl;
  // each minor's binary where ctl.sh starts it (bin-MINOR/etcd), as an operator's file says it: the trials'
  // binaries with no --target-bin (bins: false leaves them out, for a test of the missing path)
  const bins =
    o.bins === false
      ? []
      : readdirSync(c.dir)
          .filter((f) => /^bin-3\.\d+$/.test(f))
          .map((f) => `    "${f.slice(4)}": ${join(c.dir, f, 'etcd')}`);
  const lines = [
    'members:',
    ...c.members.map((m) => `  - { name: ${m.name}, endpoint: "${m.clientUrl}"${o.host ? `, host: "${m.host}"` : ''} }`),
    'driver:',
    '  type: command',
    `  stop: ${run} stop {name}`,
    `  start: ${run} start {name} {version}`,
    `  running: ${run} running {name}`,
    ...(o.extra ?? []).map((l) => `  ${l}`),
    ...(bins.length ? ['  bins:', ...bins] : []),
    ...(o.certs ? [`tls: { cacert: ${o.certs.ca}, cert: ${o.certs.clientCert}, key: ${o.certs.clientKey} }`] : []),
    ...(o.top ?? []),
    '',
  ];
  writeFileSync(file, lines.join('\n'));
  return file;
}

/**
 * Counts the most members down at once (their processes, by PID file, every 20 ms) while `fn` runs;
 * `seen` is live, so `fn` can check the count part-way.
 */
export async function watchDown<T, M>(
  c: { members: M[]; alive(m: M): boolean },
  fn: (seen: { maxDown: number; checks: number }) => Promise<T>,
): Promise<{ result: T; maxDown: number; checks: number }> {
  const seen = { maxDown: 0, checks: 0 };
  let watching = true;
  const watcher = (async () => {
    while (watching) {
      seen.maxDown = Math.max(seen.maxDown, c.members.filter((m) => !c.alive(m)).length);
      seen.checks++;
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  try {
    return { result: await fn(seen), ...seen };
  } finally {
    watching = false;
    await watcher;
  }
}
