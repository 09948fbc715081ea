import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useKvGateway } from '../../../helpers/kv-gateway-mock.js';
import { grpcError, GRPC, header, memberListReply } from '../../../helpers/kv-gateway-shapes.js';

/** kv member promote (src/commands/kv/member-promote.ts) against fake 3.5 and 3.6 members; beside etcdctl: test/e2e/kv-etcdctl-verbs.test.ts. */
const v35 = { name: 'etcd1', version: '3.5.35', id: '10501334649042878790' };
const v36 = { ...v35, version: '3.6.16' };
const start = useKvGateway({ beforeEach, afterEach });
const LEARNER = '1311738121';
const list = memberListReply(v35, 5, [
  { id: v35.id, name: 'etcd1', peer: 'http://10.0.0.1:2380', client: 'http://10.0.0.1:2379' },
  { id: LEARNER, name: 'etcd4', peer: 'http://10.0.0.4:2380', client: 'http://10.0.0.4:2379', isLearner: true },
]);

describe('kv member promote (a fake member)', () => {
  it('by name: the id from the member list sent in decimal; -w simple: etcdctl line; --json', async () => {
    const gw = await start([{ ...v35, routes: { '/cluster/member/list': list, '/cluster/member/promote': { header: header(v35, 6), members: [] } } }]);
    const r = await gw.kv(['member', 'promote', 'etcd4', '-w', 'simple']);
    expect([r.code, r.stdout]).toEqual([0, 'Member         4e2f8909 promoted in cluster cdf818194e3a8c32\n']);
    expect(gw.paths()).toEqual(['etcd1 /cluster/member/list', 'etcd1 /version', 'etcd1 /cluster/member/promote']);
    expect(gw.asked[2]!.body).toEqual({ ID: LEARNER });
    expect(JSON.parse((await gw.kv(['member', 'promote', '4e2f8909', '--json'])).stdout)).toEqual({ id: '4e2f8909', promoted: true });
  });

  it.each([v35, v36])('a learner not yet caught up ($version error shape): exit 1 with etcd’s words', async (m) => {
    const refused = grpcError(m, GRPC.failedPrecondition, 'etcdserver: can only promote a learner member which is in sync with leader');
    const gw = await start([{ ...m, routes: { '/cluster/member/list': list, '/cluster/member/promote': refused } }]);
    const r = await gw.kv(['member', 'promote', 'etcd4']);
    expect([r.code, r.stdout]).toEqual([1, '']);
    expect(r.stderr).toContain('member promote etcd4: etcd refused: etcdserver: can only promote a learner member which is in sync with leader');
  });

  it('neither a name nor an id: exit 2 naming the members there are, nothing promoted', async () => {
    const gw = await start([{ ...v35, routes: { '/cluster/member/list': list } }]);
    const r = await gw.kv(['member', 'promote', 'etcd9']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('member: "etcd9" is neither a member\'s name nor an id');
    expect(r.stderr).toContain('etcd1 91bc3c398fb3c146, etcd4 4e2f8909');
    expect(gw.paths()).toEqual(['etcd1 /cluster/member/list']);
  });
});
