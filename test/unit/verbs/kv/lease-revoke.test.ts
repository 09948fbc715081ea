import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useKvGateway } from '../../../helpers/kv-gateway-mock.js';
import { grpcError, GRPC, header } from '../../../helpers/kv-gateway-shapes.js';

/** kv lease revoke (src/commands/kv/lease-revoke.ts) against fake 3.4 and 3.6 members; beside etcdctl: test/e2e/kv-etcdctl-verbs.test.ts. */
const v34 = { name: 'etcd1', version: '3.4.30', id: '10501334649042878790' };
const v36 = { name: 'etcd1', version: '3.6.16', id: '10501334649042878790' };
const start = useKvGateway({ beforeEach, afterEach });

describe('kv lease revoke (a fake member)', () => {
  it('the hex id sent in decimal; etcdctl line on -w simple', async () => {
    const gw = await start([{ ...v34, routes: { '/kv/lease/revoke': { header: header(v34, 6) } } }]);
    const r = await gw.kv(['lease', 'revoke', '694d77aa9e38260f', '-w', 'simple']);
    expect([r.code, r.stdout]).toEqual([0, 'lease 694d77aa9e38260f revoked\n']);
    expect(gw.paths()).toEqual(['etcd1 /kv/lease/revoke']);
    expect(gw.asked[0]!.body).toEqual({ ID: '7587852521871779343' });
  });

  it.each([v34, v36])('an unknown lease ($version error shape): exit 1, etcd’s words and the fix (lease list)', async (m) => {
    const gw = await start([{ ...m, routes: { '/kv/lease/revoke': grpcError(m, GRPC.notFound, 'etcdserver: requested lease not found') } }]);
    const r = await gw.kv(['lease', 'revoke', '694d77aa9e38260f']);
    expect([r.code, r.stdout]).toEqual([1, '']);
    expect(r.stderr).toContain('lease revoke 694d77aa9e38260f: etcd refused: etcdserver: requested lease not found');
    expect(r.stderr).toContain('lease 694d77aa9e38260f is not found: it expired, was revoked, or never was');
  });
});
