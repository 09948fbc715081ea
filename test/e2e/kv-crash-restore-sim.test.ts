import { copyFileSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { MemberStore } from '@opsctl/etcd-sim/store.js';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KvClient } from '../../src/kv/cluster/client.js';
import { countKeys } from '../../src/kv/cluster/keys.js';
import { runBin } from '../helpers/bin.js';
import { crashSandbox } from '../helpers/crash-cluster.js';
import { crashRun, sweep } from '../helpers/crash-points.js';
import { readJournal } from '../helpers/kv.js';

/**
 * Kill -9 anywhere in `kv restore` (issue 44), simulated members: the restore point of a finished hop
 * 3.2 → 3.3 (a write made after it, which the restore drops), restored onto 3.2; opsctl killed at every
 * state a fresh run passes (each driver call and journal write that changes something), each resumed by
 * the identical command. It ends with every member healthy on 3.2 with the snapshot's revision and keys,
 * each member's old data dir kept once (the write after the snapshot in it) and no restored data left
 * staged: a resume finishes the same restore (its run id), never swaps a member's data twice. Then two
 * kills that a sweep without clients cannot judge: killed once every member is up on the restored data,
 * a client writes, and the identical command keeps that write (it does not restore twice); and a half-done
 * restore is not taken over by another snapshot (refused, naming both).
 */
const FAST = ['--poll-interval', '50ms', '--healthy-timeout', '60s', '--stop-timeout', '30s'];

describe('kill -9 at every crash point of kv restore, resumed by the identical command (simulated members)', () => {
  const s = crashSandbox();
  afterAll(() => s.down());
  // (one path for every reset's restore point: the identical command)
  const snapshot = join(s.dir, 'restore-point.db');
  const args = ['kv', 'restore', '--snapshot', snapshot, '--to-version', '3.2', '--yes', ...FAST];
  let point: { revision: string; liveKeys: number };
  const client = (i = 0) => new KvClient(s.spec().members[i]!.endpoint, { session: s.session, timeoutMs: 5000 });

  /**
   * 3.2, five keys, a finished hop to 3.3 (its restore point copied to `snapshot`), then a write the restore
   * drops. `hop: false` (the cases after the sweep, cheaper): a snapshot saved on 3.2 instead of the hop.
   */
  const reset = async (hop = true) => {
    await s.reset('3.2');
    for (let i = 0; i < 5; i++) await client().put(`before/${i}`, `v${i}`);
    if (hop) {
      const up = await runBin(['kv', 'upgrade', '--to', '3.3', '--yes', ...FAST, '--settle', '0s'], { env: s.env, timeout: 120_000 });
      expect(up.exitCode, String(up.stderr)).toBe(0);
      point = readJournal(s.dir).restorePoint as typeof point;
      copyFileSync(readJournal(s.dir).restorePoint.file as string, snapshot);
    } else {
      rmSync(snapshot, { force: true });
      const saved = await runBin(['kv', 'snapshot', 'save', snapshot], { env: s.env });
      expect(saved.exitCode, String(saved.stderr)).toBe(0);
      point = { revision: (await client().status()).revision, liveKeys: 5 };
    }
    await client().put('after/point', 'lost on restore');
  };

  /** Each member's dirs beside its data dir: the kept old ones and any restored data left staged. */
  const dirs = () =>
    s.spec().members.map((m) => {
      const all = readdirSync(dirname(m.dataDir));
      return { m, kept: all.filter((f) => f.startsWith('data.before-restore-')), staged: all.filter((f) => f.startsWith('data.restore-')) };
    });
  /** Whether a data dir holds the write made after the snapshot (the old data). */
  // (the member's state as it loads it: kv.json and the log of changes after it, packages/etcd-sim/src/store.ts)
  const old = (dir: string) =>
    existsSync(join(dir, 'member', 'kv.json')) &&
    JSON.stringify(new MemberStore(join(dir, 'member')).load().state ?? {}).includes(Buffer.from('after/point').toString('base64'));

  it('every state of kv restore --snapshot (a hop 3.2 → 3.3 restored onto 3.2)', async () => {
    const r = await sweep({
      args,
      env: s.env,
      reset: () => reset(),
      // After every kill: each member's old data is in one place (its data dir, or kept once), never two kept dirs.
      afterKill: (state) => {
        for (const d of dirs()) {
          expect(d.kept.length, `${d.m.name} after ${state}: ${d.kept.join(', ')}`).toBeLessThanOrEqual(1);
          const places = [d.m.dataDir, ...d.kept.map((k) => join(dirname(d.m.dataDir), k))].filter(old);
          expect(places, `${d.m.name}'s old data after ${state}`).toHaveLength(1);
        }
      },
    });
    console.log(
      `crash points (kv restore): ${r.points} points of a fresh run, ${r.states.length} states killed at (${r.reached.filter((x) => x.how === 'chain').length} in the chain, ${r.reached.filter((x) => x.how === 'reset').length} on a fresh cluster), ${r.runs} runs`,
    );
    expect(r.last.exitCode, r.last.stderr).toBe(0);
    expect(r.reached.map((x) => x.state)).toEqual(r.states);
    // every kind of change of the restore is among the states, for each member
    for (const call of ['prepareRestore', 'stop', 'restoreData', 'start'])
      for (const m of ['kv1', 'kv2', 'kv3']) expect(r.states).toContain(`restore after ${call} ${m} (changes)`);
    expect(r.states.some((x) => /after journal restore\.json /.test(x))).toBe(true);
    // every member on 3.2, the restored data: the snapshot's revision and keys
    for (const v of await s.versions()) {
      expect(v.server).toMatch(/^3\.2\./);
      expect(v.cluster).toMatch(/^3\.2\./);
    }
    for (const [i] of s.spec().members.entries()) expect((await client(i).status()).revision).toBe(point.revision);
    expect(await countKeys(client())).toBe(point.liveKeys);
    expect(await client().get('after/point')).toBeUndefined();
    expect((await client().get('before/3'))?.value).toBe('v3');
    // each old data dir kept once, with the write after the snapshot in it; nothing left staged
    for (const d of dirs()) {
      expect(d.kept, d.m.name).toHaveLength(1);
      expect(old(join(dirname(d.m.dataDir), d.kept[0]!)), d.m.name).toBe(true);
      expect(d.staged, d.m.name).toEqual([]);
    }
    // and once more, the restore done: nothing to do, nothing restored twice
    const twice = await crashRun(args, s.env);
    expect(twice.exitCode, twice.stderr).toBe(0);
    expect(twice.stderr).toMatch(/was restored by run \S+ .*nothing to do \(to restore it again, every write since lost: add --again\)/);
    for (const d of dirs()) expect(d.kept, d.m.name).toHaveLength(1);
  }, 600_000);

  it('killed once every member is up on the restored data, a client writes: the identical command keeps the write', async () => {
    await reset(false);
    const killed = await crashRun(args, { ...s.env, OPSCTL_CRASH_AT: 'restore after start kv3 (changes)' });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    // the cluster comes up on the restored data by itself; a client writes to it
    let served: { revision: string } | undefined;
    for (let i = 0; i < 400 && !served; i++)
      served = await client(i % 3)
        .put('after/restore', 'kept')
        .catch(() => new Promise<undefined>((ok) => setTimeout(ok, 50)));
    expect(served).toBeDefined();
    const again = await crashRun(args, s.env);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/restore \S+ finished; cluster restored/);
    expect(again.stderr).toMatch(/written since the restored members came up/);
    expect((await client().get('after/restore'))?.value).toBe('kept');
    expect(await client().get('after/point')).toBeUndefined();
    for (const d of dirs()) {
      expect(d.kept, d.m.name).toHaveLength(1);
      expect(d.staged, d.m.name).toEqual([]);
    }
  }, 300_000);

  it('a half-done restore (one member swapped) is not taken over by another snapshot: refused naming both, nothing changed', async () => {
    await reset(false);
    const other = join(s.dir, 'other-point.db');
    const saved = await runBin(['kv', 'snapshot', 'save', other], { env: s.env });
    expect(saved.exitCode, String(saved.stderr)).toBe(0);
    const killed = await crashRun(args, { ...s.env, OPSCTL_CRASH_AT: 'restore after restoreData kv1 (changes)' });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    const before = dirs().map((d) => [d.kept, d.staged]);
    const wrong = await crashRun(['kv', 'restore', '--snapshot', other, '--to-version', '3.2', '--yes', ...FAST], s.env);
    expect(wrong.exitCode, wrong.stderr).toBe(1);
    expect(wrong.stderr).toMatch(
      /refused before any change: a restore of \S+ \(run \S+, begun .*\) is half done: stopped: kv\d, kv\d, kv\d; data restored: none; started: none; next: restore-data\/kv1 \(begun\)/,
    );
    expect(wrong.stderr).toContain(snapshot);
    expect(wrong.stderr).toContain(other);
    expect(dirs().map((d) => [d.kept, d.staged])).toEqual(before);
    const same = await crashRun(args, s.env);
    expect(same.exitCode, same.stderr).toBe(0);
    for (const d of dirs()) expect(d.kept, d.m.name).toHaveLength(1);
    expect(await countKeys(client())).toBe(point.liveKeys);
  }, 300_000);
});
