import { describe, expect, it } from 'vitest';
import { checkHop } from '../../src/kv/rules/index.js';
import type { HopFacts } from '../../src/kv/rules/types.js';
import { hexId } from '../../src/kv/ladder/v3-membership.js';
import { hopReads } from '../../src/kv/ladder/facts.js';

/**
 * The v3 store's membership before 3.5.26+ and 3.6 read it (src/kv/ladder/v3-membership.ts): a 3.4 cluster
 * that never had a v3 write keeps no consistent index, 3.5.26+ then marks its other members removed in the
 * v3 store, and 3.6 refuses them (measured on 3.4.23 → 3.5.35 → 3.6.16).
 */
const facts = (from: string, to: string, extra: Partial<HopFacts>): HopFacts => ({
  from,
  to,
  members: [{ name: 'etcd1' }, { name: 'etcd2' }, { name: 'etcd3' }],
  current: true,
  auth: false,
  ...extra,
});
const row = async (f: HopFacts, rule: string) => (await checkHop(f)).filter((r) => r.rule === rule);

describe('the v3 store membership rules', () => {
  it("3.4 → 3.5.26+: no consistent index in the leader's v3 store refuses the hop, naming the cause and the v3 write that fixes it", async () => {
    const rows = await row(facts('3.4', '3.5', { binaryVersion: '3.5.35', v3Membership: { on: 'etcd1', members: 3, removedLive: [] } }), 'v3-consistent-index');
    expect(rows).toHaveLength(1);
    expect(rows[0]!.status).toBe('refuse');
    expect(rows[0]!.detail).toMatch(/etcd1's v3 store holds no consistent index .*3\.5\.35 would .* mark the other members removed/);
    expect(rows[0]!.fix).toMatch(/while the cluster is on 3\.4, make one v3 write .*etcdctl put KEY VALUE/);
  });

  it('3.4 → 3.5: a consistent index, a 3.5 older than 3.5.26, or a single member is ok; a later hop is read when it starts; no v3 store to read is not checked', async () => {
    const ok = async (extra: Partial<HopFacts>) => (await row(facts('3.4', '3.5', extra), 'v3-consistent-index'))[0]!;
    expect((await ok({ binaryVersion: '3.5.35', v3Membership: { on: 'etcd1', consistentIndex: '12', members: 3, removedLive: [] } })).status).toBe('ok');
    expect((await ok({ binaryVersion: '3.5.21', v3Membership: { on: 'etcd1', members: 3, removedLive: [] } })).detail).toMatch(
      /3\.5\.21: it has no zombie-member cleanup/,
    );
    expect((await ok({ binaryVersion: '3.5.35', v3Membership: { on: 'etcd1', members: 1, removedLive: [] } })).status).toBe('ok');
    expect((await ok({ current: false })).status).toBe('before the hop');
    expect((await ok({ v3Membership: { why: 'no healthy member to take a snapshot of its v3 store from' } })).status).toBe('not checked');
    expect((await ok({ v3Membership: { why: 'simulated members keep no etcd v3 store', none: true } })).status).toBe('ok');
  });

  it('3.5 → 3.6: each member marked removed in the v3 store refuses the hop by name, with the replacement that clears it', async () => {
    const rows = await row(
      facts('3.5', '3.6', {
        v3Membership: {
          on: 'etcd1',
          members: 3,
          removedLive: [
            { id: '65e1c4a77261127a', name: 'etcd2' },
            { id: 'be406a85915057b2', name: 'etcd3' },
          ],
        },
      }),
      'v3-removed-members',
    );
    expect(rows.map((r) => [r.member, r.status])).toEqual([
      ['etcd2', 'refuse'],
      ['etcd3', 'refuse'],
    ]);
    expect(rows[0]!.detail).toMatch(/etcd2 \(65e1c4a77261127a\) is a member, and marked removed in etcd1's v3 store/);
    expect(rows[0]!.fix).toMatch(/replace each named member.*member remove ID/);
    const clean = await row(facts('3.5', '3.6', { v3Membership: { on: 'etcd1', members: 3, removedLive: [] } }), 'v3-removed-members');
    expect(clean.map((r) => r.status)).toEqual(['ok']);
  });

  it("a member id as the API gives it (decimal) is the bucket's key (hex)", () => {
    expect(hexId('7341365091048166010')).toBe('65e1c4a77261127a');
    expect(hexId('13709074387616946098')).toBe('be406a85915057b2');
  });

  it("inside a rehearsal's clone, the first hop takes no snapshot of the v3 store again (the run that rehearses read it beside the copy); every other read takes one", async () => {
    const obs = {
      members: [{ name: 'etcd1', id: '1', endpoint: 'http://127.0.0.1:1', reachable: true, healthy: true, healthDetail: '', leaderId: '1', real: true }],
      alarms: [],
    };
    // (no timeouts: a snapshot begun here fails at once, and says so, before any request)
    const o = { cluster: { key: 'k', members: [{ name: 'etcd1', endpoint: 'http://127.0.0.1:1' }] }, snapshotVia: 'gateway' } as unknown as Parameters<
      typeof hopReads
    >[0];
    const hop = { from: '3.4', to: '3.5', patch: false };
    const judged = await hopReads(o, hop, { obs, bins: {}, current: true, judgedBeforeCopy: true });
    expect(judged.v3Membership).toEqual({ why: expect.stringMatching(/read by the run that rehearses this one/), none: true });
    const rows = await row(facts('3.4', '3.5', { binaryVersion: '3.5.35', v3Membership: judged.v3Membership }), 'v3-consistent-index');
    expect(rows.map((r) => r.status)).toEqual(['ok']);
    const read = await hopReads(o, hop, { obs, bins: {}, current: true });
    expect(read.v3Membership).toEqual({ why: expect.stringMatching(/a snapshot of etcd1's v3 store could not be read/) });
  });
});
