import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KvClient } from '../../src/kv/cluster/client.js';
import { KvSession } from '../../src/kv/cluster/session.js';
import { startCluster, type RealCluster, type RealTestCluster, type SimulatedTestCluster } from '../framework/index.js';
import { tempConfigDir } from './cli.js';

/**
 * The clusters of the crash-point sweeps, each with a monitor and a writer: the monitor samples every
 * member's process every 20 ms (never while the cluster itself is being replaced) and keeps the most
 * members down at once; the writer puts a key every `writeEveryMs` (100 ms by default) through whichever
 * member answers and keeps each key it was acknowledged (since the last reset): several writes in every
 * run of a sweep (each run takes a second or more), a few hundred over a sweep. (A put every 20 ms cost about
 * a quarter of a core per cluster on real etcd, three members' raft and fsync, and about as much on simulated
 * members, whose every put is four HTTP exchanges between node processes: most of a simulated sweep's CPU.)
 */
interface Member {
  name: string;
  endpoint: string;
  alive(): boolean;
}

function watched(members: () => Member[], writeEveryMs = 100) {
  const session = new KvSession();
  const seen = { maxDown: 0, samples: 0, acked: [] as string[], failedWrites: 0 };
  let stop = false;
  let paused = false;
  let loops: Promise<void[]> | undefined;
  let n = 0;
  const watch = async () => {
    while (!stop) {
      if (!paused) {
        const down = members().filter((m) => !m.alive()).length;
        seen.maxDown = Math.max(seen.maxDown, down);
        seen.samples++;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const write = async () => {
    while (!stop) {
      if (!paused) {
        const key = `crash/${++n}`;
        let ok = false;
        for (const m of members()) {
          try {
            await new KvClient(m.endpoint, { session, timeoutMs: 1000 }).put(key, 'v');
            ok = true;
            break;
          } catch {
            /* the next member */
          }
        }
        if (ok) seen.acked.push(key);
        else seen.failedWrites++;
      }
      await new Promise((r) => setTimeout(r, writeEveryMs));
    }
  };
  return {
    seen,
    session,
    /** Around a replacement of the cluster: nothing sampled, nothing written; the writer's keys start again. */
    async replacing(fn: () => Promise<void>) {
      paused = true;
      try {
        await fn();
        seen.acked = [];
      } finally {
        paused = false;
      }
    },
    start() {
      stop = false;
      loops = Promise.all([watch(), write()]);
    },
    async stopWatching() {
      stop = true;
      await loops;
    },
    /** The acknowledged keys missing from the cluster now (read through the first member that answers). */
    async lostWrites(): Promise<string[]> {
      for (const m of members()) {
        try {
          const c = new KvClient(m.endpoint, { session, timeoutMs: 3000 });
          const missing: string[] = [];
          for (const k of seen.acked) if ((await c.get(k)) === undefined) missing.push(k);
          return missing;
        } catch {
          /* the next member */
        }
      }
      throw new Error('no member answered to count the writes');
    },
    async versions() {
      return Promise.all(members().map((m) => new KvClient(m.endpoint, { session, timeoutMs: 3000 }).version()));
    },
  };
}

/** A pid file's process, alive and not a zombie. */
function alivePid(pidFile: string): boolean {
  try {
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    process.kill(pid, 0);
    return !/^State:\s*Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

/**
 * A simulated sandbox (the local driver), brought up by startCluster in this config dir; with `etcdBin`, one of real
 * etcd members from that release directory.
 */
export function crashSandbox(size = 3, o: { etcdBin?: string } = {}) {
  const cfg = tempConfigDir('opsctl-crash-sim-');
  const env = { OPSCTL_CONFIG_DIR: cfg.dir };
  let c: SimulatedTestCluster | undefined;
  const spec = () => c!.sandbox.spec();
  // (the sandbox's record read at each call, as the run rewrites it; none while it is replaced)
  const members = (): Member[] => (c && existsSync(c.sandbox.sandboxFile) ? spec().members.map((m) => ({ ...m, alive: () => alivePid(m.pidFile) })) : []);
  const w = watched(members);
  return {
    ...w,
    dir: cfg.dir,
    env,
    spec,
    /** A fresh sandbox on `version` (the old one down, its data and journals gone). */
    reset: (version: string) =>
      w.replacing(async () => {
        await c?.destroy();
        c = undefined;
        rmSync(join(cfg.dir, 'data'), { recursive: true, force: true });
        // (the simulated members' own heartbeat, 100 ms, as `kv sandbox up` gives them: the sweeps' timings)
        const from = o.etcdBin ? { etcdBin: o.etcdBin } : { version, extra: ['--heartbeat', '100ms'] };
        c = await startCluster({ members: 'simulated', size, configDir: cfg.dir, ...from });
      }),
    /**
     * Every member, started on `version`, runs as `as` (a start that starts the old binary: the simulated member's
     * `runsAs` condition), so whichever member a run takes first fails its wait on `version` at once ("runs 3.2.32,
     * not 3.3"): --on-failure rollback's case, the same for every cluster whichever member leads, and no timeout
     * racing the machine's load.
     */
    startsAs(version: string, as: string) {
      for (const m of spec().members) writeFileSync(join(m.dataDir, 'CONDITIONS.json'), JSON.stringify({ runsAs: { [version]: as } }));
    },
    async down() {
      await c?.destroy();
      cfg.cleanup();
    },
  };
}

/**
 * Real etcd members run by a control script through the command driver (startCluster's real members), as an
 * operator's hosts are: one cluster file at one path (the identical command: cluster.yaml in the config dir),
 * rewritten for each new cluster; `bins` by minor, the members started on `from`.
 */
export function crashReal(bins: Record<string, string>, from: string, o: { size?: number; writeEveryMs?: number } = {}) {
  const size = o.size ?? 3;
  const cfg = tempConfigDir('opsctl-crash-real-');
  const env = { OPSCTL_CONFIG_DIR: cfg.dir };
  const file = join(cfg.dir, 'cluster.yaml');
  let t: RealTestCluster | undefined;
  let c: RealCluster | undefined;
  const members = (): Member[] => c?.members.map((m) => ({ name: m.name, endpoint: m.clientUrl, alive: () => c!.alive(m) })) ?? [];
  const w = watched(members, o.writeEveryMs);
  return {
    ...w,
    dir: cfg.dir,
    env,
    file,
    cluster: () => c!,
    reset: () =>
      w.replacing(async () => {
        await t?.destroy();
        c = t = undefined;
        rmSync(join(cfg.dir, 'data'), { recursive: true, force: true });
        // ready: kv health through the cluster file, and every member's process up
        t = await startCluster({
          members: 'real',
          size,
          bins,
          version: from,
          configDir: cfg.dir,
          file: (real) => ({ extra: [`backup: cp -a ${real.dir}/{name}/data ${real.dir}/{name}/data.bak-{run}`] }),
          ready: async (x) => (await x.opsctl('kv', 'health', '--cluster', x.file)).exitCode === 0 && x.members.every((m) => x.alive(m)),
        });
        c = t.real;
        const probe = c;
        // One v3 write, as every cluster in use has had: etcd 3.4 persists its consistent index only with
        // one, and without it 3.5.26+ marks live members removed in its v3 store on its first start, which
        // 3.6 obeys (refused before any stop: [v3-consistent-index], kv-v3-membership-etcd.test.ts).
        await new KvClient(probe.members[0]!.clientUrl, { session: w.session, timeoutMs: 5000 }).put('crash/0', 'set-up');
      }),
    async down() {
      await t?.destroy();
      cfg.cleanup();
    },
  };
}
