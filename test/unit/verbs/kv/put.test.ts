import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useKvGateway } from '../../../helpers/kv-gateway-mock.js';
import { b64, grpcError, GRPC, header, kv } from '../../../helpers/kv-gateway-shapes.js';

/** kv put (src/commands/kv/put.ts) against a fake 3.4 member; beside etcdctl on real etcd: test/e2e/kv-etcdctl-verbs.test.ts. */
const etcd1 = { name: 'etcd1', version: '3.4.30', id: '10501334649042878790' };
const start = useKvGateway({ beforeEach, afterEach });

describe('kv put (a fake member)', () => {
  it('--lease in hex: the lease sent in decimal, key and value base64; -w simple prints OK', async () => {
    const gw = await start([{ ...etcd1, routes: { '/kv/put': { header: header(etcd1, 12) } } }]);
    const r = await gw.kv(['put', 'config/mode', 'fast', '--lease', '694d77aa9e38260f', '-w', 'simple']);
    expect([r.code, r.stdout]).toEqual([0, 'OK\n']);
    expect(gw.paths()).toEqual(['etcd1 /kv/put']);
    expect(gw.asked[0]!.body).toEqual({ key: b64('config/mode'), value: b64('fast'), lease: '7587852521871779343' });
  });

  it('without -w: nothing on stdout, the revision and the member on stderr; --prev-kv prints the value before', async () => {
    const prev = kv({ key: 'config/mode', value: 'slow', create: 4, mod: 7 });
    const gw = await start([
      {
        ...etcd1,
        routes: { '/kv/put': (a: { body: Record<string, unknown> }) => ({ header: header(etcd1, 13), ...(a.body.prev_kv ? { prev_kv: prev } : {}) }) },
      },
    ]);
    const plain = await gw.kv(['put', 'config/mode', 'fast']);
    expect([plain.code, plain.stdout]).toEqual([0, '']);
    expect(plain.stderr).toContain('put config/mode (revision 13) via 127.0.0.1:');
    const before = await gw.kv(['put', 'config/mode', 'fast', '--prev-kv']);
    expect(before.stdout).toBe('slow\n');
    expect(gw.asked[1]!.body).toMatchObject({ prev_kv: true });
    // --json: the key as it was in kv get --json's shape (etcdctl's field names)
    const json = await gw.kv(['put', 'config/mode', 'fast', '--prev-kv', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({
      key: 'config/mode',
      revision: 13,
      prev_kv: { key: 'config/mode', value: 'slow', create_revision: 4, mod_revision: 7, version: 1, lease: null },
    });
  });

  it('a lease etcd does not have: etcd refused, exit 1, the fix names lease grant', async () => {
    const gw = await start([{ ...etcd1, routes: { '/kv/put': grpcError(etcd1, GRPC.notFound, 'etcdserver: requested lease not found') } }]);
    const r = await gw.kv(['put', 'config/mode', 'fast', '--lease', '694d77aa9e38260f']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('etcd refused: etcdserver: requested lease not found');
    expect(r.stderr).toContain('opsctl kv lease grant');
  });

  it('a lease id that is not hex is refused before any request', async () => {
    const gw = await start([etcd1]);
    const r = await gw.kv(['put', 'config/mode', 'fast', '--lease', 'xyz']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--lease');
    expect(gw.asked).toEqual([]);
  });
});
