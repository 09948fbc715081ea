import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useKvGateway } from '../../../helpers/kv-gateway-mock.js';
import { grpcError, GRPC, header } from '../../../helpers/kv-gateway-shapes.js';

/** kv compact (src/commands/kv/compact.ts) against fake 3.4 and 3.6 members; beside etcdctl: test/e2e/kv-etcdctl-verbs.test.ts. */
const v34 = { name: 'etcd1', version: '3.4.30', id: '10501334649042878790' };
const v36 = { name: 'etcd1', version: '3.6.16', id: '10501334649042878790' };
const start = useKvGateway({ beforeEach, afterEach });

describe('kv compact (a fake member)', () => {
  it('the revision as a decimal string, physical as asked; -w simple: etcdctl line; --json: revision and compacted', async () => {
    const gw = await start([{ ...v34, routes: { '/kv/compaction': { header: header(v34, 40) } } }]);
    const r = await gw.kv(['compact', '30', '--physical', '-w', 'simple']);
    expect([r.code, r.stdout]).toEqual([0, 'compacted revision 30\n']);
    expect(gw.paths()).toEqual(['etcd1 /kv/compaction']);
    expect(gw.asked[0]!.body).toEqual({ revision: '30', physical: true });
    const json = await gw.kv(['compact', '31', '--json']);
    expect(JSON.parse(json.stdout)).toEqual({ revision: 31, compacted: true });
    expect(gw.asked[1]!.body).toEqual({ revision: '31', physical: false });
  });

  it.each([v34, v36])('a revision already compacted ($version error shape): exit 1 with etcd’s words', async (m) => {
    const gw = await start([{ ...m, routes: { '/kv/compaction': grpcError(m, GRPC.outOfRange, 'etcdserver: mvcc: required revision has been compacted') } }]);
    const r = await gw.kv(['compact', '5']);
    expect([r.code, r.stdout]).toEqual([1, '']);
    expect(r.stderr).toContain('compact 5: etcd refused: etcdserver: mvcc: required revision has been compacted');
  });

  it('a revision that is not a positive whole number: exit 2 naming it, before any request', async () => {
    const gw = await start([v34]);
    const r = await gw.kv(['compact', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('revision: "0" is not a revision');
    expect(gw.asked).toEqual([]);
  });
});
