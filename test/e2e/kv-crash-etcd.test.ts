import { afterAll, describe, expect, it } from 'vitest';
import { crashReal } from '../helpers/crash-cluster.js';
import { crashRun, sweep } from '../helpers/crash-points.js';
import { etcdLadderDirs } from '../helpers/etcd-releases.js';

/**
 * Kill -9 on real etcd (issue 44): three members run by a control script through the command driver
 * (stop/start/running/backup templates, as an operator's hosts), a writer every 20 ms and a monitor of
 * every member's process. The simulated sweeps (kv-crash-hop-sim, -ladder-sim, -back-sim) kill at every
 * state of every member; here, on real binaries, where they differ: every state from the last member's
 * stop of a real 3.5.35 → 3.6.16 hop on (the window the issue found: the last member down, the cluster
 * version still 3.5), and the crossing from the first hop of a 3.4 → 3.5.35 → 3.6.16 ladder into its
 * second, up to the first member started on 3.6; the identical command is run again each time (the
 * ladder's with --target-bin for both hops, the first one finished: accepted, noted).
 */
const dirs = etcdLadderDirs();
const FAST = ['--poll-interval', '50ms', '--settle', '0s'];

describe.runIf(Boolean(dirs))('kill -9 at every crash point on real etcd, resumed by the identical command', () => {
  const bins = () => ({ '3.4': dirs!.v34, '3.5': dirs!.v35, '3.6': dirs!.v36 });

  describe('a 3.5.35 → 3.6.16 hop', () => {
    const s = crashReal(bins(), '3.5');
    afterAll(() => s.down());
    it("every state from its last member's stop on: that member, the cluster version, the final health", async () => {
      s.start();
      const r = await sweep({
        args: ['kv', 'upgrade', '--to', '3.6', '--yes', '--cluster', s.file, '--target-bin', `3.6=${dirs!.v36}`, ...FAST],
        env: s.env,
        reset: () => s.reset(),
        only: (state, all) => all.indexOf(state) >= Math.max(...all.map((x, i) => (/ after stop \S+ \(changes\)$/.test(x) ? i : -1))),
      });
      await s.stopWatching();
      console.log(
        `crash points (real 3.5 → 3.6): ${r.points} points, ${r.states.length} states killed at (${r.reached.filter((x) => x.how === 'reset').length} on a fresh cluster), ${r.runs} runs; ${s.seen.acked.length} writes acknowledged, ${s.seen.failedWrites} not, at most ${s.seen.maxDown} member down`,
      );
      expect(r.last.exitCode, r.last.stderr).toBe(0);
      expect(r.reached.map((x) => x.state)).toEqual(r.states);
      const last = /after stop (\S+) \(changes\)$/.exec(r.states[0]!)?.[1];
      expect(last, r.states[0]).toBeDefined();
      for (const call of ['start']) expect(r.states.some((x) => x.endsWith(` after ${call} ${last} (changes)`))).toBe(true);
      expect(r.states.filter((x) => / after stop /.test(x))).toHaveLength(1);
      for (const v of await s.versions()) expect(v.cluster).toMatch(/^3\.6\./);
      expect(s.seen.maxDown).toBeLessThanOrEqual(1);
      expect(await s.lostWrites()).toEqual([]);
    }, 2_400_000);
  });

  describe('the second hop of a 3.4 → 3.5.35 → 3.6.16 ladder', () => {
    const s = crashReal(bins(), '3.4');
    afterAll(() => s.down());
    const args = () => [
      'kv',
      'upgrade',
      '--to',
      '3.6',
      '--yes',
      '--cluster',
      s.file,
      '--target-bin',
      `3.5=${dirs!.v35}`,
      '--target-bin',
      `3.6=${dirs!.v36}`,
      ...FAST,
    ];

    it("regression: after the first hop, the identical command (--target-bin for both hops) goes on, the finished hop's binary noted", async () => {
      await s.reset();
      const killed = await crashRun(args(), { ...s.env, OPSCTL_CRASH_AT: '* after journal ladder.json running:hop1:* (changes)' });
      expect(killed.signal, killed.stderr).toBe('SIGKILL');
      const again = await crashRun(args(), s.env);
      // the identical command is taken: the finished hop's --target-bin noted, not refused
      expect(again.stderr).toMatch(/--target-bin 3\.5=\S+: the hop to 3\.5 is done; not used by this run/);
      expect(again.stderr).not.toMatch(/no hop of this ladder goes to 3\.5/);
      // (the harness's 3.4 cluster had a v3 write, as a cluster in use has: see crash-cluster.ts and
      // kv-v3-membership-etcd.test.ts for one that had none, refused before any stop)
      expect(again.exitCode, again.stderr).toBe(0);
      for (const v of await s.versions()) {
        expect(v.server).toMatch(/^3\.6\./);
        expect(v.cluster).toMatch(/^3\.6\./);
      }
    }, 600_000);

    it("every state from the first hop done to the second hop's first member started on 3.6", async () => {
      s.start();
      const r = await sweep({
        args: args(),
        env: s.env,
        reset: () => s.reset(),
        // the ladder's move to hop 2, and hop 2 up to its first member's start on 3.6 (the rest of a hop: above, and the sims)
        only: (state, all) =>
          / ladder\.json running:hop1:/.test(state) ||
          (state.startsWith('3.5→3.6 ') && all.indexOf(state) <= all.findIndex((x) => x.startsWith('3.5→3.6 ') && / after start \S+ \(changes\)$/.test(x))),
      });
      await s.stopWatching();
      console.log(
        `crash points (real ladder, 3.5 → 3.6 hop): ${r.points} points, ${r.states.length} states killed at, ${r.runs} runs; ${s.seen.acked.length} writes acknowledged, at most ${s.seen.maxDown} member down`,
      );
      expect(r.last.exitCode, r.last.stderr).toBe(0);
      expect(r.reached.map((x) => x.state)).toEqual(r.states);
      for (const v of await s.versions()) expect(v.cluster).toMatch(/^3\.6\./);
      expect(s.seen.maxDown).toBeLessThanOrEqual(1);
      expect(await s.lostWrites()).toEqual([]);
    }, 2_400_000);
  });
});
