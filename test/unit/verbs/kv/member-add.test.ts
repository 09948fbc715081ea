import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useKvGateway } from '../../../helpers/kv-gateway-mock.js';
import { grpcError, GRPC, header } from '../../../helpers/kv-gateway-shapes.js';

/** kv member add (src/commands/kv/member-add.ts) against fake 3.4 and 3.3 members; beside etcdctl: test/e2e/kv-etcdctl-verbs.test.ts. */
const etcd1 = { name: 'etcd1', version: '3.4.30', id: '10501334649042878790' };
const start = useKvGateway({ beforeEach, afterEach });
const NEW = '1311738121';
const peer = 'http://10.0.0.4:2380';
const added = {
  header: header(etcd1, 5),
  member: { ID: NEW, peerURLs: [peer], isLearner: true },
  members: [
    { ID: etcd1.id, name: 'etcd1', peerURLs: ['http://10.0.0.1:2380'], clientURLs: ['http://10.0.0.1:2379'] },
    { ID: NEW, peerURLs: [peer], isLearner: true },
  ],
};

describe('kv member add (a fake member)', () => {
  it('--learner: the peer URLs and isLearner asked (after the version); etcdctl’s lines with the ETCD_* settings; --json', async () => {
    const gw = await start([{ ...etcd1, routes: { '/cluster/member/add': added } }]);
    const r = await gw.kv(['member', 'add', 'etcd4', '--peer-urls', peer, '--learner']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      [
        'Member         4e2f8909 added as learner to cluster cdf818194e3a8c32',
        '',
        'ETCD_NAME="etcd4"',
        'ETCD_INITIAL_CLUSTER="etcd1=http://10.0.0.1:2380,etcd4=http://10.0.0.4:2380"',
        'ETCD_INITIAL_ADVERTISE_PEER_URLS="http://10.0.0.4:2380"',
        'ETCD_INITIAL_CLUSTER_STATE="existing"',
        '',
      ].join('\n'),
    );
    expect(gw.paths()).toEqual(['etcd1 /version', 'etcd1 /cluster/member/add']);
    expect(gw.asked[1]!.body).toEqual({ peerURLs: [peer], isLearner: true });
    const json = await gw.kv(['member', 'add', 'etcd4', '--peer-urls', peer, '--learner', '--json']);
    expect(JSON.parse(json.stdout)).toEqual({
      id: '4e2f8909',
      name: 'etcd4',
      peer_urls: [peer],
      learner: true,
      cluster_id: 'cdf818194e3a8c32',
      settings: [
        'ETCD_NAME="etcd4"',
        'ETCD_INITIAL_CLUSTER="etcd1=http://10.0.0.1:2380,etcd4=http://10.0.0.4:2380"',
        'ETCD_INITIAL_ADVERTISE_PEER_URLS="http://10.0.0.4:2380"',
        'ETCD_INITIAL_CLUSTER_STATE="existing"',
      ],
    });
  });

  it('etcd refuses a peer URL already in use: exit 1 with etcd’s words', async () => {
    const gw = await start([
      { ...etcd1, routes: { '/cluster/member/add': grpcError(etcd1, GRPC.failedPrecondition, 'etcdserver: Peer URLs already exists') } },
    ]);
    const r = await gw.kv(['member', 'add', 'etcd4', '--peer-urls', 'http://10.0.0.1:2380']);
    expect([r.code, r.stdout]).toEqual([1, '']);
    expect(r.stderr).toContain('member add etcd4: etcd refused: etcdserver: Peer URLs already exists');
    expect(gw.asked[0]!.body).toEqual({ peerURLs: ['http://10.0.0.1:2380'] });
  });

  it('a peer URL that is not http(s): exit 2 naming --peer-urls and an example, before any request', async () => {
    const gw = await start([etcd1]);
    const r = await gw.kv(['member', 'add', 'etcd4', '--peer-urls', '10.0.0.4:2380']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--peer-urls: "10.0.0.4:2380" is not an http(s) URL');
    expect(r.stderr).toContain('--peer-urls http://10.0.0.4:2380');
    expect(gw.asked).toEqual([]);
  });

  it('--learner on a 3.3 member: exit 1 naming its version, nothing added', async () => {
    const gw = await start([{ ...etcd1, version: '3.3.27' }]);
    const r = await gw.kv(['member', 'add', 'etcd4', '--peer-urls', peer, '--learner']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('member add --learner: etcd 3.3.27 does not have this call (it came in 3.4)');
    expect(gw.paths()).toEqual(['etcd1 /version']);
  });
});
