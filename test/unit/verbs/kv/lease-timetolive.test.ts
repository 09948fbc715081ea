import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useKvGateway } from '../../../helpers/kv-gateway-mock.js';
import { b64, header } from '../../../helpers/kv-gateway-shapes.js';

/** kv lease timetolive (src/commands/kv/lease-timetolive.ts) against a fake 3.5 member; beside etcdctl: test/e2e/kv-etcdctl-verbs.test.ts. */
const etcd1 = { name: 'etcd1', version: '3.5.35', id: '10501334649042878790' };
const start = useKvGateway({ beforeEach, afterEach });
const ID = '7587852521871779343';

describe('kv lease timetolive (a fake member)', () => {
  it('--keys: the id in decimal and keys asked; granted and remaining TTL, the keys (field lines, -w simple, --json)', async () => {
    const ttl = { header: header(etcd1, 8), ID, TTL: '42', grantedTTL: '60', keys: [b64('config/a'), b64('config/b')] };
    const gw = await start([{ ...etcd1, routes: { '/kv/lease/timetolive': ttl } }]);
    const r = await gw.kv(['lease', 'timetolive', '694d77aa9e38260f', '--keys']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('id\t694d77aa9e38260f\ngranted_ttl\t60\nremaining_ttl\t42\nkeys\tconfig/a,config/b\n');
    expect(gw.paths()).toEqual(['etcd1 /kv/lease/timetolive']);
    expect(gw.asked[0]!.body).toEqual({ ID, keys: true });
    expect((await gw.kv(['lease', 'timetolive', '694d77aa9e38260f', '--keys', '-w', 'simple'])).stdout).toBe(
      'lease 694d77aa9e38260f granted with TTL(60s), remaining(42s), attached keys([config/a config/b])\n',
    );
    expect(JSON.parse((await gw.kv(['lease', 'timetolive', '694d77aa9e38260f', '--keys', '--json'])).stdout)).toEqual({
      id: '694d77aa9e38260f',
      expired: false,
      granted_ttl: 60,
      remaining_ttl: 42,
      keys: ['config/a', 'config/b'],
    });
  });

  it('a lease etcd no longer has (TTL -1, no granted TTL): "already expired", exit 0 as etcdctl', async () => {
    const gw = await start([{ ...etcd1, routes: { '/kv/lease/timetolive': { header: header(etcd1, 8), ID, TTL: '-1' } } }]);
    const r = await gw.kv(['lease', 'timetolive', '694d77aa9e38260f', '-w', 'simple']);
    expect([r.code, r.stdout]).toEqual([0, 'lease 694d77aa9e38260f already expired\n']);
    expect(gw.asked[0]!.body).toEqual({ ID, keys: false });
  });

  it('an id that is not hex: exit 2 naming lease-id, before any request', async () => {
    const gw = await start([etcd1]);
    const r = await gw.kv(['lease', 'timetolive', 'nope']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('lease-id: "nope" is not an id');
    expect(gw.asked).toEqual([]);
  });
});
