import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { crashReal, crashSandbox } from '../helpers/crash-cluster.js';
import { byPosition, crashRun, POSITIONS, positionsText, sweep, type Sweep } from '../helpers/crash-points.js';
import { etcdLadderDirs } from '../helpers/etcd-releases.js';

/**
 * Kill -9 on real etcd (issue 44): three members run by a control script through the command driver
 * (stop/start/running/backup templates, as an operator's hosts), a writer every 100 ms and a monitor of
 * every member's process every 20 ms. Every state of a real 3.5.35 → 3.6.16 hop, and of the second hop of a 3.4 →
 * 3.5.35 → 3.6.16 ladder (with the ladder's move into it): each member's by its position in the hop's
 * order (first, middle, last: chosen, printed and asserted by position), and the cluster's after them.
 * The identical command is run again each time (the ladder's with --target-bin for both hops, the first
 * one finished: accepted, noted). The simulated sweeps (kv-crash-hop-sim, -ladder-sim, -back-sim) cover
 * every state of every hop, the downgrade and the rollback.
 *
 * CI runs the ladder's second hop (every state of the 3.5.35 → 3.6.16 hop's members by position, the move into it)
 * and the regression; the sweep of the same hop run alone (`--to 3.6` from 3.5: the hop's journal without the
 * ladder's, whose every state kv-crash-hop-sim sweeps on simulated members in CI) repeats the second hop's states
 * on the same binaries, driver and control script, so it runs in `npm run test:crash` (OPSCTL_CRASH=all), with
 * the other exhaustive sweeps.
 *
 * The tests run at once, each on a cluster of its own: a sweep mostly waits on etcd (elections,
 * health, the cluster version), and none of them reads a clock (conditions, generous deadlines).
 */
const dirs = etcdLadderDirs();
const ALL = process.env.OPSCTL_CRASH === 'all';
const FAST = ['--poll-interval', '50ms', '--settle', '0s'];
const HOP = '3.5→3.6';
const HOP37 = '3.6→3.7';

/** The sweep's figures, and each run's wall time (the listing run, each killed run, the last). */
function report(label: string, r: Sweep, seen: { acked: string[]; failedWrites: number; maxDown: number }, hop = HOP): void {
  const killed = r.times.filter((t) => t.run !== 'listing' && t.run !== 'last').map((t) => t.ms);
  const sum = killed.reduce((a, b) => a + b, 0);
  console.log(
    `crash points (${label}): ${r.points} points, ${r.states.length} states killed at (${r.reached.filter((x) => x.how === 'reset').length} on a fresh cluster), ${r.runs} runs; ` +
      `by member position: ${positionsText(r.states, hop)}; ${seen.acked.length} writes acknowledged, ${seen.failedWrites} not, at most ${seen.maxDown} member down\n` +
      `  run times (ms): listing ${r.times[0]!.ms}; killed runs ${killed.join(' ')} (sum ${sum}, mean ${Math.round(sum / Math.max(1, killed.length))}); last ${r.times.at(-1)!.ms}`,
  );
}

/** Every position's member has its stop and its start among the states killed at (and every state was reached). */
function expectEveryPosition(r: Sweep, hop = HOP): void {
  expect(r.last.exitCode, r.last.stderr).toBe(0);
  expect(r.reached.map((x) => x.state)).toEqual(r.states);
  const p = byPosition(r.states, hop);
  for (const at of POSITIONS)
    for (const call of ['stop', 'start']) expect(r.states, `${at} (${p.names[at]}): ${call}`).toContain(`${hop} after ${call} ${p.names[at]} (changes)`);
  expect(r.states.filter((x) => p.of(x) === 'cluster').length).toBeGreaterThanOrEqual(2);
}

describe.runIf(Boolean(dirs))('kill -9 at every crash point on real etcd, resumed by the identical command', () => {
  // Made when the block runs, never while it is collected: a skipped block's body runs too, with `dirs` undefined.
  const made: Array<{ down: () => Promise<void> }> = [];
  let hop!: ReturnType<typeof crashReal>;
  let ladder!: ReturnType<typeof crashReal>;
  let regression!: ReturnType<typeof crashReal>;
  let fix37!: ReturnType<typeof crashReal>;
  let sandbox37!: ReturnType<typeof crashSandbox>;
  beforeAll(() => {
    const bins = { '3.4': dirs!.v34, '3.5': dirs!.v35, '3.6': dirs!.v36 };
    // (npm run test:crash: a 3.5 cluster to 3.7 in one command, through the WAL fix before 3.7, under writes)
    if (ALL) made.push((fix37 = crashReal({ ...bins, '3.7': dirs!.v37 }, '3.5', { writeEveryMs: 100 })));
    // (and a sandbox of real 3.5.35 members, whose fix before 3.7 restarts each on 3.6 with snapshot-count 1)
    if (ALL) made.push((sandbox37 = crashSandbox(3, { etcdBin: dirs!.v35 })));
    // (a write every 100 ms: a few dozen around each kill, at a fifth of the CPU of one every 20 ms)
    if (ALL) made.push((hop = crashReal(bins, '3.5', { writeEveryMs: 100 })));
    made.push((ladder = crashReal(bins, '3.4', { writeEveryMs: 100 })));
    made.push((regression = crashReal(bins, '3.4')));
  });
  afterAll(async () => {
    for (const s of made) await s.down();
  });
  const ladderArgs = (file: string) => [
    'kv',
    'upgrade',
    '--to',
    '3.6',
    '--yes',
    '--cluster',
    file,
    '--target-bin',
    `3.5=${dirs!.v35}`,
    '--target-bin',
    `3.6=${dirs!.v36}`,
    ...FAST,
  ];

  describe.concurrent('each on a cluster of its own, at once', () => {
    // (npm run test:crash: the same hop's states, with the hop's journal alone)
    if (ALL)
      it('a 3.5.35 → 3.6.16 hop: every state of its first, middle and last member, and the cluster version and final health after them', async () => {
        hop.start();
        const r = await sweep({
          args: ['kv', 'upgrade', '--to', '3.6', '--yes', '--cluster', hop.file, '--target-bin', `3.6=${dirs!.v36}`, ...FAST],
          env: hop.env,
          reset: () => hop.reset(),
          only: (state, all) => byPosition(all, HOP).of(state) !== undefined,
        });
        await hop.stopWatching();
        report('real 3.5 → 3.6', r, hop.seen);
        expectEveryPosition(r);
        for (const v of await hop.versions()) expect(v.cluster).toMatch(/^3\.6\./);
        expect(hop.seen.maxDown).toBeLessThanOrEqual(1);
        expect(await hop.lostWrites()).toEqual([]);
      }, 2_400_000);

    if (ALL)
      it('3.5.35 → 3.7.3 in one command under writes: the move into the 3.7 hop and every state of its first, middle and last member, each resume through the WAL fix (written past) again', async () => {
        fix37.start();
        const args = ['kv', 'upgrade', '--to', '3.7', '--yes', '--cluster', fix37.file, '--target-bin', `3.6=${dirs!.v36}`, '--target-bin', `3.7=${dirs!.v37}`];
        const r = await sweep({
          args: [...args, ...FAST],
          env: fix37.env,
          reset: () => fix37.reset(),
          // (the command driver's fix before 3.7 is written past, no stop: it has no point of its own, and every
          // resume inside the 3.7 hop goes through its check, and the writing past where a member needs it, again)
          only: (state, all) => / after journal ladder\.json running:hop1:/.test(state) || byPosition(all, HOP37).of(state) !== undefined,
        });
        await fix37.stopWatching();
        report('real 3.5 → 3.7, its 3.6 → 3.7 hop', r, fix37.seen, HOP37);
        expectEveryPosition(r, HOP37);
        for (const v of await fix37.versions()) expect(v.cluster).toMatch(/^3\.7\./);
        expect(fix37.seen.maxDown).toBeLessThanOrEqual(1);
        expect(await fix37.lostWrites()).toEqual([]);
      }, 2_400_000);

    if (ALL)
      it('3.5.35 → 3.7.3 in one command on a sandbox under writes: every state of the WAL fix before 3.7 (each member restarted on 3.6 with snapshot-count 1, its config put back)', async () => {
        sandbox37.start();
        const args = ['kv', 'upgrade', '--to', '3.7', '--yes', '--target-bin', `3.6=${dirs!.v36}`, '--target-bin', `3.7=${dirs!.v37}`, ...FAST];
        const r = await sweep({ args, env: sandbox37.env, reset: () => sandbox37.reset('3.5'), only: (state) => state.startsWith('fix-3.6 ') });
        await sandbox37.stopWatching();
        console.log(
          `crash points (real sandbox 3.5 → 3.7, the WAL fix before 3.7): ${r.states.length} states, ${r.runs} runs: ${r.states.join(' | ')}; ${sandbox37.seen.acked.length} writes acknowledged, at most ${sandbox37.seen.maxDown} member down`,
        );
        expect(r.last.exitCode, r.last.stderr).toBe(0);
        expect(r.reached.map((x) => x.state)).toEqual(r.states);
        // each member's stop and start in the fix (on its edited config, then on its own) among the states killed at
        expect(r.states.filter((x) => / after (stop|start) \S+ \(changes\)$/.test(x)).length).toBeGreaterThanOrEqual(6);
        const configs = (readdirSync(sandbox37.dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.conf.yml'));
        for (const f of configs) expect(readFileSync(join(sandbox37.dir, f), 'utf8'), f).not.toMatch(/snapshot-count: 1\b/);
        expect((readdirSync(sandbox37.dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.opsctl-kept'))).toEqual([]);
        expect(sandbox37.seen.maxDown).toBeLessThanOrEqual(1);
        expect(await sandbox37.lostWrites()).toEqual([]);
      }, 2_400_000);

    it("regression: after a ladder's first hop, the identical command (--target-bin for both hops) goes on, the finished hop's binary noted", async () => {
      await regression.reset();
      const args = ladderArgs(regression.file);
      const killed = await crashRun(args, { ...regression.env, OPSCTL_CRASH_AT: '* after journal ladder.json running:hop1:* (changes)' });
      expect(killed.signal, killed.stderr).toBe('SIGKILL');
      const again = await crashRun(args, regression.env);
      // the identical command is taken: the finished hop's --target-bin noted, not refused
      expect(again.stderr).toMatch(/--target-bin 3\.5=\S+: the hop to 3\.5 is done; not used by this run/);
      expect(again.stderr).not.toMatch(/no hop of this ladder goes to 3\.5/);
      // (the harness's 3.4 cluster had a v3 write, as a cluster in use has: see crash-cluster.ts and
      // kv-v3-membership-etcd.test.ts for one that had none, refused before any stop)
      expect(again.exitCode, again.stderr).toBe(0);
      for (const v of await regression.versions()) {
        expect(v.server).toMatch(/^3\.6\./);
        expect(v.cluster).toMatch(/^3\.6\./);
      }
    }, 600_000);

    it("a ladder's second hop (3.4 → 3.5.35 → 3.6.16): the move into it, and every state of its first, middle and last member and of the cluster", async () => {
      ladder.start();
      const r = await sweep({
        args: ladderArgs(ladder.file),
        env: ladder.env,
        reset: () => ladder.reset(),
        // the ladder's record of its first hop done (the second running), then the whole second hop
        only: (state, all) => / after journal ladder\.json running:hop1:/.test(state) || byPosition(all, HOP).of(state) !== undefined,
      });
      await ladder.stopWatching();
      report('real ladder, its 3.5 → 3.6 hop', r, ladder.seen);
      expect(r.states[0]).toMatch(/^3\.4→3\.5 after journal ladder\.json running:hop1:/);
      expectEveryPosition(r);
      for (const v of await ladder.versions()) expect(v.cluster).toMatch(/^3\.6\./);
      expect(ladder.seen.maxDown).toBeLessThanOrEqual(1);
      expect(await ladder.lostWrites()).toEqual([]);
    }, 2_400_000);
  });
});
