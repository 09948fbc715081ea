import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { execa } from 'execa';
import { BIN, runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { startCluster, watchDown, type RealCluster, type RealTestCluster } from '../framework/index.js';
import { etcdLadderDirs, PINNED_ETCD, type LadderDirs } from '../helpers/etcd-releases.js';
import { until } from '../helpers/kv.js';
import { startLoad } from '../helpers/kv-load.js';

const dirs = etcdLadderDirs();

/**
 * The path matrix (issue kv-paths): each minor an operator may start from, to the newest, on real binaries, with
 * the cluster's own monitoring (a /health probe of every member every 200 ms, started at a random moment of the run: on 3.2 to 3.4 each
 * is a v2 QGET through raft that 3.6 refuses to replay) and a writer. Each cell finishes (every member on the
 * target, 0 acknowledged writes lost, never two members down) or is refused before its first stop (no member's
 * process changed); never stopped half-way, never a member left down.
 *
 * Drivers: the command driver (members opsctl does not start itself: a control script, as systemd units over ssh
 * are), with a trial template (`sh -s`) and with none (members found on this host). The sandbox's own paths are
 * kv-ladder-etcd (3.2 → 3.7) and kv-rehearse-etcd (3.5 → 3.7).
 *
 * CI runs one slice (the upgrade most clusters need: a fresh 3.5 → 3.7, command driver with a trial template);
 * `npm run test:paths` runs every cell and prints the table (scripts/kv-paths.mjs).
 */
const ALL = process.env.OPSCTL_PATHS === 'all';
const OUT = process.env.OPSCTL_PATHS_OUT;

interface Cell {
  from: '3.2' | '3.3' | '3.4' | '3.5' | '3.6';
  to: '3.6' | '3.7';
  trial: boolean;
  /** A settings template (the start per version known): the whole plan rehearsed on a clone of the cluster first. */
  settings?: boolean;
  /** opsctl killed -9 while the clone's members run: none of them outlives it, and the identical command finishes. */
  killRehearsal?: boolean;
  slice?: boolean;
}
const CELLS: Cell[] = [
  { from: '3.5', to: '3.7', trial: true, settings: true, slice: true },
  { from: '3.5', to: '3.7', trial: true },
  { from: '3.5', to: '3.7', trial: true, settings: true, killRehearsal: true },
  { from: '3.5', to: '3.7', trial: false },
  { from: '3.4', to: '3.6', trial: false, settings: true },
  { from: '3.6', to: '3.7', trial: true },
  { from: '3.4', to: '3.7', trial: true },
  { from: '3.4', to: '3.6', trial: false },
  { from: '3.3', to: '3.7', trial: true },
  { from: '3.2', to: '3.7', trial: true },
];
const binsOf = (d: LadderDirs): Record<string, string> => ({ '3.2': d.v32, '3.3': d.v33, '3.4': d.v34, '3.5': d.v35, '3.6': d.v36, '3.7': d.v37 });
const name = (c: Cell) =>
  `${c.from} → ${c.to}, command driver ${c.trial ? 'with a trial template' : 'without one (this host)'}${c.settings ? ', rehearsed (a settings template)' : ''}${c.killRehearsal ? ', opsctl killed -9 during the rehearsal' : ''}`;

describe.runIf(Boolean(dirs)).each(CELLS.filter((c) => ALL || c.slice).map((c) => [name(c), c] as const))('%s (real etcd, monitoring, a writer)', (_, cell) => {
  const cfg = tempConfigDir('opsctl-paths-e2e-');
  let t: RealTestCluster | undefined;
  let c: RealCluster;
  let file: string;
  const opsctl = (...args: string[]) => runBin(args, { env: { OPSCTL_CONFIG_DIR: cfg.dir, CI: '1' }, timeout: 900_000 });

  beforeAll(async () => {
    const all = binsOf(dirs!);
    // the command driver's file (cluster.yaml in the config dir) with the cell's templates; ready: kv health through it
    t = await startCluster({
      members: 'real',
      size: 3,
      bins: Object.fromEntries(Object.entries(all).filter(([m]) => m >= cell.from && m <= cell.to)),
      version: cell.from,
      configDir: cfg.dir,
      file: (real) => ({
        extra: [...(cell.trial ? ['trial: sh -s'] : []), ...(cell.settings ? [`settings: echo --config-file=${real.dir}/{name}/etcd.yaml`] : [])],
      }),
    });
    c = t.real;
    file = t.file;
  }, 120_000);

  afterAll(async () => {
    await t?.destroy();
    cfg.cleanup();
  });

  it('finishes (every member on the target, 0 lost, never two down) or is refused before its first stop', async () => {
    // the monitoring's /health probe (every 200 ms) starts at a random moment of the run, as a Prometheus blackbox
    // or a liveness probe begins whenever it begins: before the checks, between them and the first stop, or during a
    // hop (OPSCTL_PATHS_PROBE_AT=ms replays a moment; the row says which)
    const probeAt = Number(process.env.OPSCTL_PATHS_PROBE_AT ?? Math.floor(Math.random() * 20_000));
    let probes = 0;
    let probe: NodeJS.Timeout | undefined;
    const probeStart = setTimeout(() => {
      probe = setInterval(() => {
        for (const e of c.endpoints)
          void fetch(`${e}/health`).then(
            (r) => (r.ok ? probes++ : undefined),
            () => undefined,
          );
      }, 200);
    }, probeAt);
    // (a writer beside the run, paced: the load client back to back, as much as a cluster takes, is kv-load-ladder's)
    const load = startLoad({ endpoints: c.endpoints, pauseMs: 100 });
    const pids = c.members.map((m) => c.pid(m));
    const t0 = Date.now();
    let outcome = 'unknown';
    let said = '';
    try {
      await until(() => load.acknowledgedIn('before') >= 20, 60_000, '20 acknowledged writes');
      if (cell.killRehearsal) await killDuringRehearsal(c, cell, { cfg: cfg.dir, file, pids });
      const dry = await opsctl('kv', 'upgrade', '--to', cell.to, '--dry-run', '--no-backup', '--cluster', file);
      const plan = String(dry.stdout).replace(/\s+/g, ' ');
      const { maxDown, result: up } = await watchDown(c, () => opsctl('kv', 'upgrade', '--to', cell.to, '--yes', '--no-backup', '--cluster', file));
      said = `${String(up.stdout)}\n${String(up.stderr)}`;
      load.phase('after');
      const v = JSON.parse(String((await opsctl('kv', 'version', '--cluster', file, '--json')).stdout) || '[]') as Array<{ server: string; cluster: string }>;
      const onTarget = v.length === 3 && v.every((m) => m.server === PINNED_ETCD[cell.to] && m.cluster === `${cell.to}.0`);
      const untouched = c.members.every((m, i) => c.pid(m) === pids[i]);
      const up3 = c.members.every((m) => c.alive(m));
      outcome =
        up.exitCode === 0 && onTarget && maxDown <= 1
          ? 'finished'
          : up.exitCode !== 0 && untouched && up3
            ? 'refused before the first stop'
            : !up3
              ? 'member left down'
              : 'stopped half-way';
      // a dry run that says nothing blocks it is a promise the run keeps
      if (dry.exitCode === 0 && /Nothing blocks it/.test(plan)) expect(outcome, said).toBe('finished');
      if (outcome === 'finished') await until(() => load.acknowledgedIn('after') >= 10, 60_000, `10 acknowledged writes on ${cell.to}`);
      expect(['finished', 'refused before the first stop'], said).toContain(outcome);
      if (outcome === 'refused before the first stop') expect(String(up.stderr)).not.toMatch(/what etcd's words name/);
      // with the start per version known, the whole plan ran on a clone first (the same executor), else each member's trials
      if (cell.settings) expect(said).toMatch(/rehearsal: passed on a clone of the cluster in [\d.]+ s \(copy [\d.]+ s\): .*, \d+ writes acknowledged, 0 lost/);
      else expect(plan).toMatch(/rehearsal: not run \(the command driver's start on each version is not known to opsctl/);
    } finally {
      clearTimeout(probeStart);
      clearInterval(probe);
      const r = await load.stop();
      const past = [...said.matchAll(/written past on (3\.\d): ([\d,]+) raft entries in (\d+) ms/g)].map(
        (m) => `${m[1]}: ${m[2]} in ${(Number(m[3]) / 1000).toFixed(1)} s`,
      );
      const row = {
        cell: name(cell),
        outcome,
        seconds: Math.round((Date.now() - t0) / 1000),
        acknowledged: r.acknowledged,
        lost: r.lost,
        probes,
        probeAtMs: probeAt,
        writtenPast: past,
        rehearsal: /rehearsal: passed on a clone of the cluster in ([\d.]+ s)/.exec(said)?.[1] ?? 'not run',
      };
      process.stderr.write(`[kv paths] ${JSON.stringify(row)}\n`);
      if (OUT) appendFileSync(OUT, `${JSON.stringify(row)}\n`);
      expect(r.lost, r.lostKeys.join(', ')).toBe(0);
    }
  }, 900_000);
});

/** The etcd processes that read one of the cluster's config files: its members' and, in namespaces of their own, the clone's. */
function etcdsOf(c: RealCluster): number {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8');
        return c.members.some((m) => cmd.includes(m.configFile)) && cmd.includes('/etcd\0');
      } catch {
        return false;
      }
    }).length;
}

/** The etcd processes started from a scratch dir under `tmp` (the killed run's TMPDIR): the clone's members and the members' trials. */
function scratchEtcds(tmp: string): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8');
        return cmd.includes(tmp) && /(^|\/)etcd\0/.test(cmd);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/**
 * opsctl killed -9 once the clone's members run beside the cluster's: they die with it (none answers on, none
 * outlives it), nor does a member's trial start that ran then; the cluster's members are the same processes, and the
 * run the cell then makes is the identical command.
 */
async function killDuringRehearsal(c: RealCluster, cell: Cell, o: { cfg: string; file: string; pids: Array<number | undefined> }): Promise<void> {
  // (its scratch dirs, the clone's and the trials', in a TMPDIR of its own: what outlives it is counted there)
  const tmp = join(o.cfg, 'tmp');
  mkdirSync(tmp, { recursive: true });
  const child = execa(process.execPath, [BIN, 'kv', 'upgrade', '--to', cell.to, '--yes', '--no-backup', '--cluster', o.file], {
    env: { ...process.env, OPSCTL_CONFIG_DIR: o.cfg, CI: '1', TMPDIR: tmp },
    reject: false,
    all: true,
  });
  let seen = '';
  child.all?.on('data', (b: Buffer) => (seen += b.toString()));
  await until(() => etcdsOf(c) > 3 || child.exitCode !== null, 300_000, "the clone's members started");
  expect(child.exitCode, seen).toBeNull();
  child.kill('SIGKILL');
  await child;
  await until(() => etcdsOf(c) === 3 && scratchEtcds(tmp).length === 0, 60_000, "the clone's and the trials' processes gone with opsctl");
  expect(c.members.map((m) => c.pid(m))).toEqual(o.pids);
}
