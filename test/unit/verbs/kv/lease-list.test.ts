import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useKvGateway } from '../../../helpers/kv-gateway-mock.js';
import { header } from '../../../helpers/kv-gateway-shapes.js';

/** kv lease list (src/commands/kv/lease-list.ts) against fake 3.4 and 3.2 members; beside etcdctl: test/e2e/kv-etcdctl-verbs.test.ts. */
const etcd1 = { name: 'etcd1', version: '3.4.30', id: '10501334649042878790' };
const start = useKvGateway({ beforeEach, afterEach });
const leases = { header: header(etcd1, 5), leases: [{ ID: '7587852521871779343' }, { ID: '255' }] };

describe('kv lease list (a fake member)', () => {
  it('the member’s version, then the leases; ids in 16 hex digits; -w simple: etcdctl lines; --json: id', async () => {
    const gw = await start([{ ...etcd1, routes: { '/kv/lease/leases': leases } }]);
    const r = await gw.kv(['lease', 'list']);
    expect([r.code, r.stdout]).toEqual([0, '694d77aa9e38260f\n00000000000000ff\n']);
    expect(gw.paths()).toEqual(['etcd1 /version', 'etcd1 /kv/lease/leases']);
    expect(gw.asked[1]!.body).toEqual({});
    expect((await gw.kv(['lease', 'list', '-w', 'simple'])).stdout).toBe('found 2 leases\n694d77aa9e38260f\n00000000000000ff\n');
    expect(JSON.parse((await gw.kv(['lease', 'list', '--json'])).stdout)).toEqual([{ id: '694d77aa9e38260f' }, { id: '00000000000000ff' }]);
  });

  it('a 3.2 member (no lease list on its gateway): exit 1 naming its version and the fix, the list never asked', async () => {
    const gw = await start([{ ...etcd1, version: '3.2.32' }]);
    const r = await gw.kv(['lease', 'list']);
    expect([r.code, r.stdout]).toEqual([1, '']);
    expect(r.stderr).toContain('lease list: etcd 3.2.32 does not have this call (it came in 3.3)');
    expect(r.stderr).toContain('opsctl kv upgrade --to 3.3');
    expect(gw.paths()).toEqual(['etcd1 /version']);
  });
});
