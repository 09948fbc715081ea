import { afterAll, describe, expect, it } from 'vitest';
import { crashSandbox } from '../helpers/crash-cluster.js';
import { byPosition, sweep } from '../helpers/crash-points.js';

/**
 * Kill -9 anywhere in a two-hop ladder (3.2 → 3.3 → 3.4, simulated members), then the identical command
 * finishes (issue 44): every state of both hops and of the ladder's own record (its hop done, the next
 * one running), each resumed by the identical `kv upgrade --to 3.4 --yes`. Never two members down, no
 * acknowledged write lost, every member on 3.4 at the end.
 *
 * CI kills at every state of the second hop but its middle member's, and at every write of the ladder's record (its
 * first hop done, the second running: the move into a later hop), the first hop passed unkilled: its states are a
 * 3.2 → 3.3 hop's, each of which kv-crash-hop-sim kills at on the same simulated members, and a resume inside a
 * ladder's hop is the second hop's. The second hop's middle member passes the steps its first member does (one
 * member cycle, the cluster mixed), which kv-crash-hop-sim kills at for its middle member and kv-crash-etcd for a
 * ladder's second hop's on real etcd. `npm run test:crash` (OPSCTL_CRASH=all) kills at every state of both hops.
 */
const ALL = process.env.OPSCTL_CRASH === 'all';
const FAST = ['--poll-interval', '50ms', '--healthy-timeout', '60s', '--stop-timeout', '30s', '--settle', '0s'];

describe('kill -9 at every crash point of a two-hop ladder, resumed by the identical command (simulated members)', () => {
  const s = crashSandbox();
  afterAll(() => s.down());

  it('kv upgrade --to 3.4 from 3.2: every state of both hops and of the ladder file', async () => {
    s.start();
    let middle = '';
    const r = await sweep({
      args: ['kv', 'upgrade', '--to', '3.4', '--yes', ...FAST],
      env: s.env,
      reset: () => s.reset('3.2'),
      only: (state, all) => {
        if (ALL) return true;
        if (state.startsWith('3.2→3.3 ')) return / after journal ladder\.json /.test(state);
        const second = byPosition(all, '3.3→3.4');
        middle = second.names.middle;
        return second.of(state) !== 'middle';
      },
    });
    await s.stopWatching();
    console.log(
      `crash points (ladder): ${r.points} points of a fresh run, ${r.states.length} states killed at (${r.reached.filter((x) => x.how === 'chain').length} in the chain, ${r.reached.filter((x) => x.how === 'reset').length} on a fresh cluster), ${r.runs} runs; ${s.seen.acked.length} writes acknowledged, at most ${s.seen.maxDown} member down`,
    );
    expect(r.last.exitCode, r.last.stderr).toBe(0);
    expect(r.reached.map((x) => x.state)).toEqual(r.states);
    // the ladder's own record: each of its writes is a state too
    expect(r.states.filter((x) => / after journal ladder\.json /.test(x)).length).toBeGreaterThanOrEqual(3);
    // every member's stop and start of the second hop is a state of its own, its middle member's under OPSCTL_CRASH=all
    // (as every member's of the first)
    for (const hop of ALL ? ['3.2→3.3', '3.3→3.4'] : ['3.3→3.4'])
      for (const m of s.spec().members.filter((x) => ALL || x.name !== middle))
        for (const call of ['stop', 'start']) expect(r.states, `${hop} ${call} ${m.name}`).toContain(`${hop} after ${call} ${m.name} (changes)`);
    if (!ALL) expect(r.states.filter((x) => x.startsWith('3.3→3.4 ') && x.includes(` ${middle} `))).toEqual([]);
    for (const v of await s.versions()) {
      expect(v.server).toMatch(/^3\.4\./);
      expect(v.cluster).toMatch(/^3\.4\./);
    }
    expect(s.seen.maxDown).toBeLessThanOrEqual(1);
    expect(await s.lostWrites()).toEqual([]);
  }, 1_800_000);
});
