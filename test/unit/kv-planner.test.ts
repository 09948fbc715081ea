import { describe, expect, it } from 'vitest';
import { nextMember, planUpgrade } from '../../src/kv/upgrade/planner.js';
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
    serverVersion: '3.2.32',
    clusterVersion: '3.2.0',
    leaderId: LEADER,
    revision: '10',
    ...over,
  };
}
const cluster = (...members: MemberObservation[]): ClusterObservation => ({ members, alarms: [] });

describe('planner: order and skips', () => {
  it('followers first, the leader last', () => {
    const r = planUpgrade(cluster(member('m1'), member('m2'), member('m3')), { to: '3.3' });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.plan.members.map((m) => m.name)).toEqual(['m2', 'm3', 'm1']);
    expect(r.plan.members.map((m) => m.action)).toEqual(['upgrade', 'upgrade', 'upgrade']);
    expect(r.plan.members[2]?.wasLeader).toBe(true);
    expect(r.plan.source).toBe('3.2');
  });

  it('members already at the target are skipped (a resumed or partly done upgrade)', () => {
    const r = planUpgrade(cluster(member('m1'), member('m2', { serverVersion: '3.3.27' }), member('m3')), { to: '3.3' });
    expect(r.ok && r.plan.members.map((m) => `${m.name}:${m.action}`)).toEqual(['m2:skip', 'm3:upgrade', 'm1:upgrade']);
  });

  it('nothing to do when all run the target and the cluster version moved', () => {
    const at = { serverVersion: '3.3.27', clusterVersion: '3.3.0' };
    const r = planUpgrade(cluster(member('m1', at), member('m2', at), member('m3', at)), { to: '3.3' });
    expect(r.ok && r.plan.members.every((m) => m.action === 'skip')).toBe(true);
  });

  it('every member on the target while the cluster version moves (applied on some members only): a plan, not a disagreement', () => {
    const on = { serverVersion: '3.3.27' };
    const r = planUpgrade(cluster(member('m1', { ...on, clusterVersion: '3.3.0' }), member('m2', on), member('m3', on)), { to: '3.3' });
    expect(r.ok && r.plan.clusterVersion).toBe('3.2');
    expect(r.ok && r.plan.members.every((m) => m.action === 'skip')).toBe(true);
    // with a member still on the source, the same split is a disagreement
    const mixed = planUpgrade(cluster(member('m1', { ...on, clusterVersion: '3.3.0' }), member('m2', on), member('m3')), { to: '3.3' });
    expect(mixed.ok ? '' : mixed.reasons.join()).toMatch(/disagree on the cluster version \(3.3, 3.2\)/);
  });

  it('same version: a rolling restart of every member only with allowSameVersion', () => {
    const at = { serverVersion: '3.4.23', clusterVersion: '3.4.0' };
    const c = cluster(member('m1', at), member('m2', at), member('m3', at));
    const plain = planUpgrade(c, { to: '3.4' });
    expect(plain.ok && plain.plan.members.every((m) => m.action === 'skip')).toBe(true);
    const r = planUpgrade(c, { to: '3.4', allowSameVersion: true });
    expect(r.ok && r.plan.members.map((m) => `${m.name}:${m.action}`)).toEqual(['m2:restart', 'm3:restart', 'm1:restart']);
  });

  it('the next member is never the current leader while another is pending', () => {
    const pending = [
      { name: 'm2', id: 'a' },
      { name: 'm3', id: 'b' },
    ];
    expect(nextMember(pending, 'a')?.name).toBe('m3');
    expect(nextMember([{ name: 'm1', id: 'c' }], 'c')?.name).toBe('m1');
  });
});

describe('planner: refusals name every reason', () => {
  const refuse = (c: ClusterObservation, to = '3.3') => {
    const r = planUpgrade(c, { to });
    expect(r.ok).toBe(false);
    return r.ok ? [] : r.reasons;
  };
  it('an unreachable or unhealthy member', () => {
    const reasons = refuse(
      cluster(
        member('m1'),
        member('m2', { reachable: false, healthy: false, error: 'ECONNREFUSED' }),
        member('m3', { healthy: false, healthDetail: 'HTTP 503' }),
      ),
    );
    expect(reasons.join('\n')).toMatch(/m2 .* not reachable: ECONNREFUSED/);
    expect(reasons.join('\n')).toMatch(/m3 .* not healthy: HTTP 503/);
  });
  it('no leader, or two', () => {
    expect(refuse(cluster(member('m1', { leaderId: '0' }), member('m2', { leaderId: '0' })))).toContain('no member reports a leader');
    expect(refuse(cluster(member('m1'), member('m2', { leaderId: '18000000000000000002' }))).join()).toMatch(/disagree on the leader/);
  });
  it('a server not at the source minor', () => {
    expect(refuse(cluster(member('m1'), member('m2', { serverVersion: '3.1.20' }))).join()).toMatch(
      /m2 runs 3.1.20: .* must start from 3.2 \(upgrade to 3.2 first\)/,
    );
  });
  it('the cluster version not at the source', () => {
    expect(refuse(cluster(member('m1', { clusterVersion: '3.1.0' }), member('m2', { clusterVersion: '3.1.0' }))).join()).toMatch(
      /cluster version is 3.1, not 3.2/,
    );
  });
  it('an alarm', () => {
    const c = cluster(member('m1'), member('m2'));
    c.alarms = [{ memberId: '18000000000000000002', alarm: 'NOSPACE' }];
    expect(refuse(c).join()).toMatch(/alarm NOSPACE/);
  });
  it('a target that is not a minor', () => {
    expect(refuse(cluster(member('m1')), '3').join()).toMatch(/--to 3/);
  });
  it('on resume, the member an interrupted run stopped may be down, but quorum must hold', () => {
    const down = { reachable: false, healthy: false, error: 'ECONNREFUSED' };
    expect(planUpgrade(cluster(member('m1'), member('m2', down), member('m3')), { to: '3.3', mayBeDown: 'm2' }).ok).toBe(true);
    expect(planUpgrade(cluster(member('m1'), member('m2', down), member('m3', down)), { to: '3.3', mayBeDown: 'm2' }).ok).toBe(false);
  });
});
