import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useKvGateway } from '../../../helpers/kv-gateway-mock.js';
import { header } from '../../../helpers/kv-gateway-shapes.js';

/** kv alarm list (src/commands/kv/alarm-list.ts) against a fake 3.5 member; beside etcdctl: test/e2e/kv-etcdctl-verbs.test.ts. */
const etcd1 = { name: 'etcd1', version: '3.5.35', id: '10501334649042878790' };
const start = useKvGateway({ beforeEach, afterEach });

describe('kv alarm list (a fake member)', () => {
  it('asks GET; the member id in hex and the alarm; -w simple: etcdctl line (decimal id, trailing space)', async () => {
    const alarms = { header: header(etcd1, 5), alarms: [{ memberID: etcd1.id, alarm: 'NOSPACE' }] };
    const gw = await start([{ ...etcd1, routes: { '/maintenance/alarm': alarms } }]);
    const r = await gw.kv(['alarm', 'list']);
    expect([r.code, r.stdout]).toEqual([0, '91bc3c398fb3c146\tNOSPACE\n']);
    expect(gw.asked[0]!.body).toEqual({ action: 'GET' });
    expect((await gw.kv(['alarm', 'list', '-w', 'simple'])).stdout).toBe(`memberID:${etcd1.id} alarm:NOSPACE \n`);
  });

  it('no alarm: nothing on stdout, exit 0', async () => {
    const gw = await start([{ ...etcd1, routes: { '/maintenance/alarm': { header: header(etcd1, 5) } } }]);
    const r = await gw.kv(['alarm', 'list']);
    expect([r.code, r.stdout]).toEqual([0, '']);
    expect(r.stderr).toContain('no alarm raised');
  });
});
