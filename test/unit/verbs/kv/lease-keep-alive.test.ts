import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useKvGateway } from '../../../helpers/kv-gateway-mock.js';
import { header } from '../../../helpers/kv-gateway-shapes.js';

/** kv lease keep-alive (src/commands/kv/lease-keep-alive.ts) against a fake 3.4 member; beside etcdctl: test/e2e/kv-etcdctl-verbs.test.ts. */
const etcd1 = { name: 'etcd1', version: '3.4.30', id: '10501334649042878790' };
const start = useKvGateway({ beforeEach, afterEach });
const ID = '7587852521871779343';
// the gateway's keep-alive stream, one message each way: the answer wrapped in `result`
const renewed = { result: { header: header(etcd1, 5), ID, TTL: '60' } };

describe('kv lease keep-alive (a fake member)', () => {
  it('--once: the id in decimal; id and TTL (field lines), -w simple: etcdctl line, --json: id and ttl', async () => {
    const gw = await start([{ ...etcd1, routes: { '/lease/keepalive': renewed } }]);
    const r = await gw.kv(['lease', 'keep-alive', '694d77aa9e38260f', '--once']);
    expect([r.code, r.stdout]).toEqual([0, 'id\t694d77aa9e38260f\nttl\t60\n']);
    expect(gw.paths()).toEqual(['etcd1 /lease/keepalive']);
    expect(gw.asked[0]!.body).toEqual({ ID });
    expect((await gw.kv(['lease', 'keep-alive', '694d77aa9e38260f', '--once', '-w', 'simple'])).stdout).toBe(
      'lease 694d77aa9e38260f keepalived with TTL(60)\n',
    );
    expect(JSON.parse((await gw.kv(['lease', 'keep-alive', '694d77aa9e38260f', '--once', '--json'])).stdout)).toEqual({ id: '694d77aa9e38260f', ttl: 60 });
  });

  it('a lease that is gone (no TTL in the answer): exit 1 "expired or revoked", the fix names lease grant', async () => {
    const gw = await start([{ ...etcd1, routes: { '/lease/keepalive': { result: { header: header(etcd1, 5), ID } } } }]);
    const r = await gw.kv(['lease', 'keep-alive', '694d77aa9e38260f', '--once']);
    expect([r.code, r.stdout]).toEqual([1, '']);
    expect(r.stderr).toContain('lease 694d77aa9e38260f expired or revoked.');
    expect(r.stderr).toContain('opsctl kv lease grant TTL');
  });

  it('an id that is not hex: exit 2 naming lease-id, before any request', async () => {
    const gw = await start([etcd1]);
    const r = await gw.kv(['lease', 'keep-alive', '69x', '--once']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('lease-id: "69x" is not an id');
    expect(gw.asked).toEqual([]);
  });
});
