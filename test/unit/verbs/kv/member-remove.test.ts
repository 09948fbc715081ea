import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useKvGateway } from '../../../helpers/kv-gateway-mock.js';
import { grpcError, GRPC, header, memberListReply } from '../../../helpers/kv-gateway-shapes.js';

/** kv member remove (src/commands/kv/member-remove.ts) against a fake 3.4 member; beside etcdctl: test/e2e/kv-etcdctl-verbs.test.ts. */
const etcd1 = { name: 'etcd1', version: '3.4.30', id: '10501334649042878790' };
const start = useKvGateway({ beforeEach, afterEach });
const GONE = '2282330823735441402';
const list = memberListReply(etcd1, 5, [
  { id: etcd1.id, name: 'etcd1', peer: 'http://10.0.0.1:2380', client: 'http://10.0.0.1:2379' },
  { id: GONE, name: 'etcd2', peer: 'http://10.0.0.2:2380', client: 'http://10.0.0.2:2379' },
]);
const removed = { header: header(etcd1, 6), members: [] };

describe('kv member remove (a fake member)', () => {
  it('--yes by hex id: the id sent in decimal; -w simple: etcdctl line; --json', async () => {
    const gw = await start([{ ...etcd1, routes: { '/cluster/member/list': list, '/cluster/member/remove': removed } }]);
    const r = await gw.kv(['member', 'remove', '1fac77cab8acf7fa', '--yes', '-w', 'simple']);
    expect([r.code, r.stdout]).toEqual([0, 'Member 1fac77cab8acf7fa removed from cluster cdf818194e3a8c32\n']);
    expect(gw.paths()).toEqual(['etcd1 /cluster/member/list', 'etcd1 /cluster/member/remove']);
    expect(gw.asked[1]!.body).toEqual({ ID: GONE });
    expect(JSON.parse((await gw.kv(['member', 'remove', 'etcd2', '--yes', '--json'])).stdout)).toEqual({ id: '1fac77cab8acf7fa', removed: true });
  });

  it('piped, without --yes: exit 2 naming --yes and the member, nothing removed', async () => {
    const gw = await start([{ ...etcd1, routes: { '/cluster/member/list': list } }]);
    const r = await gw.kv(['member', 'remove', 'etcd2']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Remove member 1fac77cab8acf7fa from the cluster (2 members now): needs confirmation');
    expect(r.stderr).toContain('1fac77cab8acf7fa etcd2 http://10.0.0.2:2380');
    expect(r.stderr).toContain('--yes');
    expect(gw.paths()).toEqual(['etcd1 /cluster/member/list']);
  });

  it('an id etcd does not have: exit 1 with etcd’s words', async () => {
    const gw = await start([
      { ...etcd1, routes: { '/cluster/member/list': list, '/cluster/member/remove': grpcError(etcd1, GRPC.notFound, 'etcdserver: member not found') } },
    ]);
    const r = await gw.kv(['member', 'remove', 'abc', '--yes']);
    expect([r.code, r.stdout]).toEqual([1, '']);
    expect(r.stderr).toContain('member remove abc: etcd refused: etcdserver: member not found');
    expect(gw.asked[1]!.body).toEqual({ ID: '2748' });
  });
});
