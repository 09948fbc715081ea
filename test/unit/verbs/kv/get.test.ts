import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useKvGateway } from '../../../helpers/kv-gateway-mock.js';
import { b64, rangeReply } from '../../../helpers/kv-gateway-shapes.js';

/**
 * kv get (src/commands/kv/get.ts) against a fake 3.6 member: the request each flag makes and what is
 * printed. etcdctl's own output beside opsctl's, on real etcd: test/e2e/kv-etcdctl-get.test.ts.
 */
const etcd1 = { name: 'etcd1', version: '3.6.16', id: '10501334649042878790' };
const mode = { key: 'config/mode', value: 'fast', create: 4, mod: 7, version: 2 };
const port = { key: 'config/port', value: '8080', create: 5, mod: 5, lease: '7587852521871779343' };
const start = useKvGateway({ beforeEach, afterEach });

describe('kv get (a fake member)', () => {
  it('a key: its value alone; one range of that key, nothing else asked', async () => {
    const gw = await start([{ ...etcd1, routes: { '/kv/range': rangeReply(etcd1, 9, [mode]) } }]);
    const r = await gw.kv(['get', 'config/mode']);
    expect([r.code, r.stdout, r.stderr]).toEqual([0, 'fast\n', '']);
    expect(gw.paths()).toEqual(['etcd1 /kv/range']);
    expect(gw.asked[0]!.body).toEqual({ key: b64('config/mode') });
  });

  it('--prefix: the range [prefix, prefix+1) and tab-separated rows when piped, no header (lease in hex)', async () => {
    const gw = await start([{ ...etcd1, routes: { '/kv/range': rangeReply(etcd1, 9, [mode, port]) } }]);
    const r = await gw.kv(['get', 'config/', '--prefix']);
    expect(r.code).toBe(0);
    expect(gw.asked[0]!.body).toEqual({ key: b64('config/'), range_end: b64('config0') });
    expect(r.stdout).toBe('config/mode\tfast\t4\t7\t2\t\nconfig/port\t8080\t5\t5\t1\t694d77aa9e38260f\n');
  });

  it('a missing key: nothing printed, exit 0 (etcdctl); --require: exit 1 and says which key', async () => {
    const gw = await start([{ ...etcd1, routes: { '/kv/range': rangeReply(etcd1, 9, []) } }]);
    const quiet = await gw.kv(['get', 'config/none']);
    expect([quiet.code, quiet.stdout, quiet.stderr]).toEqual([0, '', '']);
    const required = await gw.kv(['get', 'config/none', '--require']);
    expect([required.code, required.stdout]).toEqual([1, '']);
    expect(required.stderr).toContain('no key matches "config/none" (--require)');
    expect(gw.paths()).toEqual(['etcd1 /kv/range', 'etcd1 /kv/range']);
  });

  it('-w simple: key and value lines as etcdctl prints them; --print-value-only: the values', async () => {
    const gw = await start([{ ...etcd1, routes: { '/kv/range': rangeReply(etcd1, 9, [mode, port]) } }]);
    expect((await gw.kv(['get', 'config/', '--prefix', '-w', 'simple'])).stdout).toBe('config/mode\nfast\nconfig/port\n8080\n');
    expect((await gw.kv(['get', 'config/', '--prefix', '-w', 'simple', '--print-value-only'])).stdout).toBe('fast\n8080\n');
  });

  it('--rev, --limit, --sort-by and --consistency s: the fields of the range request', async () => {
    const gw = await start([{ ...etcd1, routes: { '/kv/range': rangeReply(etcd1, 9, [mode]) } }]);
    const r = await gw.kv(['get', 'config/', '--prefix', '--rev', '7', '--limit', '1', '--sort-by', 'modify', '--order', 'descend', '--consistency', 's']);
    expect(r.code).toBe(0);
    expect(gw.asked[0]!.body).toEqual({
      key: b64('config/'),
      range_end: b64('config0'),
      limit: '1',
      revision: '7',
      sort_order: 'DESCEND',
      sort_target: 'MOD',
      serializable: true,
    });
  });

  it('a bad flag is refused before any request (exit 2, naming the flag)', async () => {
    const gw = await start([{ ...etcd1 }]);
    const r = await gw.kv(['get', 'config/', '--prefix', '--from-key']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--prefix and --from-key');
    expect(gw.asked).toEqual([]);
  });
});
