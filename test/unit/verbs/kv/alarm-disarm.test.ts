import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useKvGateway } from '../../../helpers/kv-gateway-mock.js';
import { header } from '../../../helpers/kv-gateway-shapes.js';

/** kv alarm disarm (src/commands/kv/alarm-disarm.ts) against a fake 3.5 member; beside etcdctl on real etcd: test/e2e/kv-alarm-etcd.test.ts. */
const etcd1 = { name: 'etcd1', version: '3.5.35', id: '10501334649042878790' };
const start = useKvGateway({ beforeEach, afterEach });
const nospace = { memberID: etcd1.id, alarm: 'NOSPACE' };

describe('kv alarm disarm (a fake member)', () => {
  it('lists the alarms, then DEACTIVATE for each by its member (decimal) and kind; the member in hex; -w simple: etcdctl line', async () => {
    // etcd answers both the GET and the DEACTIVATE with the alarm
    const gw = await start([{ ...etcd1, routes: { '/maintenance/alarm': { header: header(etcd1, 5), alarms: [nospace] } } }]);
    const r = await gw.kv(['alarm', 'disarm']);
    expect([r.code, r.stdout]).toEqual([0, '91bc3c398fb3c146\tNOSPACE\n']);
    expect(gw.asked.map((a) => a.body)).toEqual([{ action: 'GET' }, { action: 'DEACTIVATE', memberID: etcd1.id, alarm: 'NOSPACE' }]);
    expect(gw.paths()).toEqual(['etcd1 /maintenance/alarm', 'etcd1 /maintenance/alarm']);
    expect((await gw.kv(['alarm', 'disarm', '-w', 'simple'])).stdout).toBe(`memberID:${etcd1.id} alarm:NOSPACE \n`);
  });

  it('--json: member_id in hex and alarm', async () => {
    const gw = await start([{ ...etcd1, routes: { '/maintenance/alarm': { header: header(etcd1, 5), alarms: [nospace] } } }]);
    const r = await gw.kv(['alarm', 'disarm', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([{ member_id: '91bc3c398fb3c146', alarm: 'NOSPACE' }]);
  });

  it('no alarm raised: nothing deactivated, nothing on stdout, said on stderr, exit 0', async () => {
    const gw = await start([{ ...etcd1, routes: { '/maintenance/alarm': { header: header(etcd1, 5) } } }]);
    const r = await gw.kv(['alarm', 'disarm']);
    expect([r.code, r.stdout]).toEqual([0, '']);
    expect(r.stderr).toContain('no alarm raised');
    expect(gw.asked.map((a) => a.body)).toEqual([{ action: 'GET' }]);
  });
});
