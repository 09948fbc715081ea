import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useKvGateway } from '../../../helpers/kv-gateway-mock.js';
import { header, memberListReply } from '../../../helpers/kv-gateway-shapes.js';

/** kv member update (src/commands/kv/member-update.ts) against a fake 3.6 member; beside etcdctl: test/e2e/kv-etcdctl-verbs.test.ts. */
const etcd1 = { name: 'etcd1', version: '3.6.16', id: '10501334649042878790' };
const start = useKvGateway({ beforeEach, afterEach });
const list = memberListReply(etcd1, 5, [{ id: etcd1.id, name: 'etcd1', peer: 'http://10.0.0.1:2380', client: 'http://10.0.0.1:2379' }]);
const urls = 'http://10.0.0.9:2380,https://etcd1.internal:2380';

describe('kv member update (a fake member)', () => {
  it('by name: the id in decimal and every peer URL; -w simple: etcdctl line; --json: id and peer_urls', async () => {
    const gw = await start([{ ...etcd1, routes: { '/cluster/member/list': list, '/cluster/member/update': { header: header(etcd1, 6), members: [] } } }]);
    const r = await gw.kv(['member', 'update', 'etcd1', '--peer-urls', urls, '-w', 'simple']);
    expect([r.code, r.stdout]).toEqual([0, 'Member 91bc3c398fb3c146 updated in cluster cdf818194e3a8c32\n']);
    expect(gw.paths()).toEqual(['etcd1 /cluster/member/list', 'etcd1 /cluster/member/update']);
    expect(gw.asked[1]!.body).toEqual({ ID: etcd1.id, peerURLs: ['http://10.0.0.9:2380', 'https://etcd1.internal:2380'] });
    expect(JSON.parse((await gw.kv(['member', 'update', 'etcd1', '--peer-urls', urls, '--json'])).stdout)).toEqual({
      id: '91bc3c398fb3c146',
      peer_urls: ['http://10.0.0.9:2380', 'https://etcd1.internal:2380'],
    });
  });

  it('a peer URL that is not http(s): exit 2 naming --peer-urls, before any request', async () => {
    const gw = await start([etcd1]);
    const r = await gw.kv(['member', 'update', 'etcd1', '--peer-urls', 'ftp://10.0.0.9:2380']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--peer-urls: "ftp://10.0.0.9:2380" is not an http(s) URL');
    expect(gw.asked).toEqual([]);
  });
});
