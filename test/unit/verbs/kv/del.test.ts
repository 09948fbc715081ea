import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useKvGateway } from '../../../helpers/kv-gateway-mock.js';
import { b64, header, kv } from '../../../helpers/kv-gateway-shapes.js';

/** kv del (src/commands/kv/del.ts) against a fake 3.6 member; beside etcdctl on real etcd: test/e2e/kv-etcdctl-verbs.test.ts. */
const etcd1 = { name: 'etcd1', version: '3.6.16', id: '10501334649042878790' };
const start = useKvGateway({ beforeEach, afterEach });

describe('kv del (a fake member)', () => {
  it('a range [KEY, END): one deleterange with range_end; the count printed (a field and its value when piped)', async () => {
    const gw = await start([{ ...etcd1, routes: { '/kv/deleterange': { header: header(etcd1, 20), deleted: '2' } } }]);
    const r = await gw.kv(['del', 'config/a', 'config/m']);
    expect([r.code, r.stdout]).toEqual([0, 'deleted\t2\n']);
    expect(gw.paths()).toEqual(['etcd1 /kv/deleterange']);
    expect(gw.asked[0]!.body).toEqual({ key: b64('config/a'), range_end: b64('config/m') });
  });

  it('--prefix --prev-kv -w simple: the count, then each key and value deleted (etcdctl lines)', async () => {
    const prev = [kv({ key: 'config/a', value: '1', create: 3, mod: 3 }), kv({ key: 'config/b', value: '2', create: 4, mod: 4 })];
    const gw = await start([{ ...etcd1, routes: { '/kv/deleterange': { header: header(etcd1, 21), deleted: '2', prev_kvs: prev } } }]);
    const r = await gw.kv(['del', 'config/', '--prefix', '--prev-kv', '-w', 'simple']);
    expect([r.code, r.stdout]).toEqual([0, '2\nconfig/a\n1\nconfig/b\n2\n']);
    expect(gw.asked[0]!.body).toEqual({ key: b64('config/'), range_end: b64('config0'), prev_kv: true });
  });

  it('--prev-kv --json: each deleted key as kv get --json writes it (snake_case, revisions as numbers, the lease in hex or null)', async () => {
    const prev = [
      kv({ key: 'config/a', value: '1', create: 3, mod: 5, version: 2 }),
      { ...kv({ key: 'config/b', value: '2', create: 4, mod: 4 }), lease: '7587869440520062479' },
    ];
    const gw = await start([{ ...etcd1, routes: { '/kv/deleterange': { header: header(etcd1, 21), deleted: '2', prev_kvs: prev } } }]);
    const r = await gw.kv(['del', 'config/', '--prefix', '--prev-kv', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      deleted: 2,
      prev_kvs: [
        { key: 'config/a', value: '1', create_revision: 3, mod_revision: 5, version: 2, lease: null },
        { key: 'config/b', value: '2', create_revision: 4, mod_revision: 4, version: 1, lease: '694d870dcc3d860f' },
      ],
    });
  });

  it('nothing matched: 0 deleted (the zero count is left out of the answer), exit 0', async () => {
    const gw = await start([{ ...etcd1, routes: { '/kv/deleterange': { header: header(etcd1, 21) } } }]);
    const r = await gw.kv(['del', 'config/none']);
    expect([r.code, r.stdout]).toEqual([0, 'deleted\t0\n']);
  });
});
