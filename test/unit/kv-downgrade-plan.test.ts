import { describe, expect, it } from 'vitest';
import { describePlan, planUpgrade } from '../../src/kv/upgrade/planner.js';
import type { ClusterObservation, MemberObservation } from '../../src/kv/cluster/types.js';

const LEADER = '18000000000000000001';
function member(name: string, over: Partial<MemberObservation> = {}): MemberObservation {
  return {
    name,
    id: `1800000000000000000${name.slice(-1)}`,
    endpoint: `http://127.0.0.1:2${name.slice(-1)}379`,
    reachable: true,
    healthy: true,
    healthDetail: 'healthy',
    serverVersion: '3.6.16',
    clusterVersion: '3.5.0',
    leaderId: LEADER,
    revision: '10',
    ...over,
  };
}
const cluster = (...members: MemberObservation[]): ClusterObservation => ({ members, alarms: [] });

describe('planner: the downgrade 3.6 → 3.5 (kv downgrade)', () => {
  it('after enable (cluster version 3.5): every 3.6 member goes down, followers first and the leader last; a member on 3.5 is skipped', () => {
    const r = planUpgrade(cluster(member('m1'), member('m2', { serverVersion: '3.5.35' }), member('m3')), { to: '3.5', downgrade: true });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.plan).toMatchObject({ source: '3.6', target: '3.5', clusterVersion: '3.5', downgrade: true });
    expect(r.plan.members.map((m) => `${m.name}:${m.action}`)).toEqual(['m2:skip', 'm3:upgrade', 'm1:upgrade']);
    expect(describePlan(r.plan, 'auto')).toMatch(/^Plan: downgrade 3\.6 → 3\.5/);
  });

  it('before enable (a dry run): the cluster version 3.6 with every member on 3.6 is planned; a mixed cluster at 3.6 is not', () => {
    const all36 = [member('m1', { clusterVersion: '3.6.0' }), member('m2', { clusterVersion: '3.6.0' }), member('m3', { clusterVersion: '3.6.0' })];
    expect(planUpgrade(cluster(...all36), { to: '3.5', downgrade: true }).ok).toBe(true);
    const mixed = planUpgrade(cluster(all36[0]!, { ...all36[1]!, serverVersion: '3.5.35' }, all36[2]!), { to: '3.5', downgrade: true });
    expect(mixed.ok).toBe(false);
    if (!mixed.ok) expect(mixed.reasons.join(' ')).toMatch(/the cluster version is 3\.6, not 3\.5/);
  });

  it('without the downgrade flag the same cluster is refused as a downgrade (kv upgrade never downgrades)', () => {
    const r = planUpgrade(cluster(member('m1'), member('m2'), member('m3')), { to: '3.5' });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reasons.join(' ')).toMatch(/that is a downgrade, which kv upgrade does not do/);
  });
});
