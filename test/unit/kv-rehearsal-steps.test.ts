import { describe, expect, it } from 'vitest';
import { stepTimes } from '../../src/kv/ladder/rehearsal.js';

const cycle = (member: string, ms: number[]) =>
  ['stop', 'wait-stopped', 'start', 'wait-healthy'].map((kind, i) => ({ kind, member, status: 'done', ms: ms[i] }));

describe("the rehearsal's steps as the real run's estimate", () => {
  it('one hop: each member its cycle summed, the cluster-version wait, skipped steps left out', () => {
    const steps = [
      { kind: 'snapshot', member: 'kv1', status: 'skipped' },
      ...cycle('kv1', [30, 300, 500, 170]),
      ...cycle('kv2', [20, 100, 400, 80]),
      { kind: 'wait-cluster-version', status: 'done', ms: 1700 },
      { kind: 'final-health', status: 'done', ms: 20 },
    ];
    expect(stepTimes({ status: 'done', steps })).toBe('kv1 1.0 s, kv2 0.6 s, cluster version 1.7 s, final-health 0.0 s; 3.3 s in all');
  });

  it("a ladder: per hop, in the order they ran; none reported: undefined (the plan's line says nothing of it)", () => {
    const hops = [
      { from: '3.5', to: '3.6', report: { steps: [...cycle('kv1', [10, 90, 400, 500]), { kind: 'wait-cluster-version', status: 'done', ms: 2000 }] } },
      { from: '3.6', to: '3.7', report: { steps: cycle('kv1', [10, 90, 300, 100]) } },
    ];
    expect(stepTimes({ status: 'done', hops })).toBe('3.5 → 3.6: kv1 1.0 s, cluster version 2.0 s; 3.6 → 3.7: kv1 0.5 s; 3.5 s in all');
    expect(stepTimes({ status: 'done' })).toBeUndefined();
    expect(stepTimes(undefined)).toBeUndefined();
  });

  it("the clone's cluster version raised by a leader hand-off: said beside its time, which the cluster's own may exceed by etcd's 4 s check", () => {
    const steps = [...cycle('kv1', [10, 90, 400, 500]), { kind: 'wait-cluster-version', status: 'done', ms: 300 }];
    const rehearsal = { writes: { acked: 3, lost: 0, failed: 0 }, probes: 2, probeFailures: 0, upMs: 500 };
    expect(stepTimes({ status: 'done', steps, rehearsal: { ...rehearsal, handOffs: 1 } })).toBe(
      "kv1 1.0 s, cluster version 0.3 s (the clone's leader handed off; on the cluster up to 4 s more); 1.3 s in all",
    );
    expect(stepTimes({ status: 'done', steps, rehearsal: { ...rehearsal, handOffs: 0 } })).toBe('kv1 1.0 s, cluster version 0.3 s; 1.3 s in all');
  });
});
