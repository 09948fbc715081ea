import { describe, expect, it } from 'vitest';
import { planLadder } from '../../src/kv/ladder/plan.js';
import { gatewayPrefixFor, parseHealth, parseVersion } from '../../src/kv/cluster/parse.js';
import type { ClusterObservation } from '../../src/kv/cluster/types.js';
import { planFromJournal } from '../../src/kv/ladder/resume.js';
import type { Journal } from '../../src/kv/journal/journal.js';

function cluster(versions: string[], clusterVersion: string): ClusterObservation {
  return {
    members: versions.map((v, i) => ({
      name: `kv${i + 1}`,
      id: String(i + 1),
      endpoint: `http://127.0.0.1:${2379 + i}`,
      reachable: true,
      healthy: true,
      healthDetail: 'healthy',
      serverVersion: v,
      clusterVersion,
      leaderId: '1',
    })),
    alarms: [],
  };
}

describe('planLadder: one hop per minor from the cluster to the target', () => {
  it('3.2 → 3.7: five hops', () => {
    const r = planLadder(cluster(['3.2.32', '3.2.32', '3.2.32'], '3.2.0'), '3.7');
    expect(r).toEqual({
      ok: true,
      from: '3.2',
      hops: [
        { from: '3.2', to: '3.3', patch: false },
        { from: '3.3', to: '3.4', patch: false },
        { from: '3.4', to: '3.5', patch: false },
        { from: '3.5', to: '3.6', patch: false },
        { from: '3.6', to: '3.7', patch: false },
      ],
    });
  });
  it('a hop stopped half-way (3.3 and 3.4, cluster 3.3) is the first hop', () => {
    const r = planLadder(cluster(['3.4.23', '3.3.27', '3.3.27'], '3.3.0'), '3.5');
    expect(r.ok && r.hops.map((h) => `${h.from}>${h.to}`)).toEqual(['3.3>3.4', '3.4>3.5']);
  });
  it('a 3.5 member before 3.5.26 gets a patch hop before 3.6, not before 3.5 targets', () => {
    const r = planLadder(cluster(['3.5.21', '3.5.35', '3.5.35'], '3.5.0'), '3.6');
    expect(r.ok && r.hops).toEqual([
      { from: '3.5', to: '3.5', patch: true },
      { from: '3.5', to: '3.6', patch: false },
    ]);
    const same = planLadder(cluster(['3.5.35', '3.5.35', '3.5.35'], '3.5.0'), '3.6');
    expect(same.ok && same.hops).toHaveLength(1);
    // the floor is the table's (3.5.32 since August 2026): 3.5.31 is below it, and a 3.5 target needs none
    const below = planLadder(cluster(['3.5.31', '3.5.35', '3.5.35'], '3.5.0'), '3.7');
    expect(below.ok && below.hops.map((h) => `${h.from}>${h.to}${h.patch ? ' (patch)' : ''}`)).toEqual(['3.5>3.5 (patch)', '3.5>3.6', '3.6>3.7']);
    const stay = planLadder(cluster(['3.5.21', '3.5.21', '3.5.21'], '3.5.0'), '3.5');
    expect(stay).toEqual({ ok: true, from: '3.5', hops: [] });
  });
  it('inside 3.6 before 3.7 exactly as inside 3.5 before 3.6: a member before 3.6.11 gets a patch hop first; 3.6 targets do not', () => {
    const r = planLadder(cluster(['3.6.10', '3.6.16', '3.6.16'], '3.6.0'), '3.7');
    expect(r.ok && r.hops).toEqual([
      { from: '3.6', to: '3.6', patch: true },
      { from: '3.6', to: '3.7', patch: false },
    ]);
    expect(planLadder(cluster(['3.6.11', '3.6.11', '3.6.16'], '3.6.0'), '3.7')).toMatchObject({ ok: true, hops: [{ from: '3.6', to: '3.7', patch: false }] });
    expect(planLadder(cluster(['3.6.2', '3.6.2', '3.6.2'], '3.6.0'), '3.6')).toEqual({ ok: true, from: '3.6', hops: [] });
  });
  it('refuses members more than one hop apart, a cluster version above the lowest member, a downgrade', () => {
    const apart = planLadder(cluster(['3.2.32', '3.4.23', '3.2.32'], '3.2.0'), '3.6');
    expect(!apart.ok && apart.reasons.join()).toMatch(/more than one hop apart/);
    const cv = planLadder(cluster(['3.3.27', '3.4.23', '3.4.23'], '3.4.0'), '3.6');
    expect(!cv.ok && cv.reasons.join()).toMatch(/cluster version is 3\.4 while the lowest member runs 3\.3/);
    const down = planLadder(cluster(['3.5.35', '3.5.35', '3.5.35'], '3.5.0'), '3.4');
    expect(!down.ok && down.reasons.join()).toMatch(/downgrade/);
    const unknown = planLadder(cluster(['3.2.32'], '3.2.0'), '3.8');
    expect(!unknown.ok && unknown.reasons.join()).toMatch(/the ladder knows 3\.2, 3\.3, 3\.4, 3\.5, 3\.6, 3\.7$/);
    const newer = planLadder(cluster(['3.8.0', '3.8.0'], '3.8.0'), '3.7');
    expect(!newer.ok && newer.reasons.join()).toMatch(/member kv1 runs 3\.8\.0, which the ladder does not know/);
  });
  it('nothing to do when every member and the cluster are at the target', () => {
    const r = planLadder(cluster(['3.6.16', '3.6.16', '3.6.16'], '3.6.0'), '3.6');
    expect(r).toEqual({ ok: true, from: '3.6', hops: [] });
  });
});

describe('per-version shapes (measured on 3.2.32, 3.3.27, 3.4.23, 3.5.35, 3.6.16)', () => {
  it('the gateway path by version, from one function', () => {
    expect(['3.2.32', '3.3.27', '3.4.23', '3.5.35', '3.6.16', '3.1.0', 'x'].map(gatewayPrefixFor)).toEqual([
      '/v3alpha',
      '/v3beta',
      '/v3',
      '/v3',
      '/v3',
      undefined,
      undefined,
    ]);
  });
  it('/health with a reason (3.5+), /version with storage (3.6)', () => {
    expect(parseHealth(200, '{"health":"true","reason":""}')).toEqual({ healthy: true, detail: 'healthy' });
    expect(parseHealth(503, '{"health":"false","reason":"RAFT NO LEADER"}').detail).toContain('RAFT NO LEADER');
    expect(parseVersion('{"etcdserver":"3.6.16","etcdcluster":"3.6.0","storage":"3.6.0"}')).toEqual({
      server: '3.6.16',
      cluster: '3.6.0',
      real: true,
      storage: '3.6.0',
    });
    expect(parseVersion('{"etcdserver":"3.4.23","etcdcluster":"3.4.0"}')).toEqual({ server: '3.4.23', cluster: '3.4.0', real: true });
  });
});

describe('planFromJournal: a recorded hop in flight', () => {
  // every member finished by the journal's hop 3.2 → 3.3: stop, start, wait, each done
  const steps = ['kv1', 'kv2', 'kv3'].flatMap((member) =>
    ['stop', 'start', 'wait-healthy'].map((kind) => ({ id: `${member}/${kind}`, member, kind, status: 'done' })),
  );
  const journal = {
    source: '3.2.32',
    target: '3.3',
    allowSameVersion: false,
    members: ['kv1', 'kv2', 'kv3'].map((name) => ({ name, action: 'upgrade' })),
    steps,
  } as unknown as Journal;
  const withCluster = (cv: string[]) => {
    const c = cluster(['3.3.27', '3.3.27', '3.3.27'], '3.3.0');
    c.members.forEach((m, i) => (m.clusterVersion = cv[i]));
    return c;
  };

  it('every member on the target, the leader moving the cluster version (some 3.3, some 3.2): resumed, not refused', () => {
    const r = planFromJournal(withCluster(['3.3.0', '3.2.0', '3.2.0']), journal, '3.3', 'J');
    expect(r).toEqual({ ok: true, from: '3.2', hops: [{ from: '3.2', to: '3.3', patch: false }] });
  });
  it('a disagreement the hop cannot leave (3.4 among 3.2) is still refused, by name', () => {
    const r = planFromJournal(withCluster(['3.4.0', '3.2.0', '3.2.0']), journal, '3.3', 'J');
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reasons.join('\n')).toContain('members disagree on the cluster version (3.4, 3.2)');
  });
});
