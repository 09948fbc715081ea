import { afterAll, describe, expect, it } from 'vitest';
import { crashReal } from '../helpers/crash-cluster.js';
import { crashRun, sweep } from '../helpers/crash-points.js';
import { etcdLadderDirs } from '../helpers/etcd-releases.js';

/**
 * Kill -9 anywhere on real etcd (issue 44): three members run by a control script through the command
 * driver (stop/start/running/backup templates, as an operator's hosts), a writer every 20 ms and a
 * monitor of every member's process. opsctl is killed at every state of each member of a real 3.5.35 →
 * 3.6.16 hop, and of the second hop of a 3.4 → 3.5.35 → 3.6.16 ladder, and the identical command is run
 * again each time (the ladder's with --target-bin for both hops, the first one finished: accepted, noted).
 */
const dirs = etcdLadderDirs();
const FAST = ['--poll-interval', '50ms', '--settle', '0s'];

describe.runIf(Boolean(dirs))('kill -9 at every crash point on real etcd, resumed by the identical command', () => {
  const bins = () => ({ '3.4': dirs!.v34, '3.5': dirs!.v35, '3.6': dirs!.v36 });

  describe('a 3.5.35 → 3.6.16 hop', () => {
    const s = crashReal(bins(), '3.5');
    afterAll(() => s.down());
    it('every state of its first, middle and last member', async () => {
      s.start();
      const r = await sweep({
        args: ['kv', 'upgrade', '--to', '3.6', '--yes', '--cluster', s.file, '--target-bin', `3.6=${dirs!.v36}`, ...FAST],
        env: s.env,
        reset: () => s.reset(),
      });
      await s.stopWatching();
      console.log(
        `crash points (real 3.5 → 3.6): ${r.points} points, ${r.states.length} states killed at (${r.reached.filter((x) => x.how === 'reset').length} on a fresh cluster), ${r.runs} runs; ${s.seen.acked.length} writes acknowledged, ${s.seen.failedWrites} not, at most ${s.seen.maxDown} member down`,
      );
      expect(r.last.exitCode, r.last.stderr).toBe(0);
      expect(r.reached.map((x) => x.state)).toEqual(r.states);
      for (const m of s.cluster().members)
        for (const call of ['stop', 'start']) expect(r.states.some((x) => x.endsWith(` after ${call} ${m.name} (changes)`))).toBe(true);
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
      expect(again.exitCode, again.stderr).toBe(0);
      expect(again.stderr).toMatch(/--target-bin 3\.5=\S+: the hop to 3\.5 is done; not used by this run/);
      for (const v of await s.versions()) expect(v.cluster).toMatch(/^3\.6\./);
    }, 600_000);

    it('every state of the second hop', async () => {
      s.start();
      const r = await sweep({
        args: args(),
        env: s.env,
        reset: () => s.reset(),
        // the states of the second hop: its executor journal's and its members', once the ladder is at hop 2
        only: (state) => state.startsWith('3.5→3.6 ') || / ladder\.json running:hop1:/.test(state),
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
