import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useKvGateway } from '../../../helpers/kv-gateway-mock.js';
import { memberListReply } from '../../../helpers/kv-gateway-shapes.js';

/** kv member list (src/commands/kv/member-list.ts) against a fake 3.4 member; beside etcdctl: test/e2e/kv-etcdctl-verbs.test.ts. */
const etcd1 = { name: 'etcd1', version: '3.4.30', id: '10501334649042878790' };
const start = useKvGateway({ beforeEach, afterEach });
const members = [
  { id: etcd1.id, name: 'etcd1', peer: 'http://10.0.0.1:2380', client: 'http://10.0.0.1:2379' },
  { id: '1311738121', name: '', peer: 'http://10.0.0.4:2380', client: '', isLearner: true },
];

describe('kv member list (a fake member)', () => {
  it('ids in hex, an added member unstarted with no name, the learner flag', async () => {
    const gw = await start([{ ...etcd1, routes: { '/cluster/member/list': memberListReply(etcd1, 5, members) } }]);
    const r = await gw.kv(['member', 'list']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      '91bc3c398fb3c146\tstarted\tetcd1\thttp://10.0.0.1:2380\thttp://10.0.0.1:2379\tfalse\n4e2f8909\tunstarted\t\thttp://10.0.0.4:2380\t\ttrue\n',
    );
    expect(gw.paths()).toEqual(['etcd1 /cluster/member/list']);
    expect(gw.asked[0]!.body).toEqual({});
  });

  it('-w simple: etcdctl lines (hex id, status, name, urls, learner)', async () => {
    const gw = await start([{ ...etcd1, routes: { '/cluster/member/list': memberListReply(etcd1, 5, members) } }]);
    const r = await gw.kv(['member', 'list', '-w', 'simple']);
    expect(r.stdout).toBe(
      '91bc3c398fb3c146, started, etcd1, http://10.0.0.1:2380, http://10.0.0.1:2379, false\n4e2f8909, unstarted, , http://10.0.0.4:2380, , true\n',
    );
  });
});
