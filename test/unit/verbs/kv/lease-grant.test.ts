import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useKvGateway } from '../../../helpers/kv-gateway-mock.js';
import { header } from '../../../helpers/kv-gateway-shapes.js';

/** kv lease grant (src/commands/kv/lease-grant.ts) against a fake 3.4 member; beside etcdctl: test/e2e/kv-etcdctl-verbs.test.ts. */
const etcd1 = { name: 'etcd1', version: '3.4.30', id: '10501334649042878790' };
const start = useKvGateway({ beforeEach, afterEach });
const granted = { header: header(etcd1, 5), ID: '7587852521871779343', TTL: '60' };

describe('kv lease grant (a fake member)', () => {
  it('asks for the TTL as a decimal string; piped, one line as etcdctl prints it (-w simple the same; --json the fields)', async () => {
    const gw = await start([{ ...etcd1, routes: { '/lease/grant': granted } }]);
    const r = await gw.kv(['lease', 'grant', '60']);
    expect([r.code, r.stdout]).toEqual([0, 'lease 694d77aa9e38260f granted with TTL(60s)\n']);
    expect(gw.asked[0]!.body).toEqual({ TTL: '60' });
    expect((await gw.kv(['lease', 'grant', '60', '-w', 'simple'])).stdout).toBe('lease 694d77aa9e38260f granted with TTL(60s)\n');
    expect(JSON.parse((await gw.kv(['lease', 'grant', '60', '--json'])).stdout)).toEqual({ id: '694d77aa9e38260f', ttl: 60 });
    expect(gw.paths()).toEqual(['etcd1 /lease/grant', 'etcd1 /lease/grant', 'etcd1 /lease/grant']);
  });

  it('a TTL that is not whole seconds is refused before any request', async () => {
    const gw = await start([etcd1]);
    const r = await gw.kv(['lease', 'grant', '1m']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('TTL: "1m" is not a number of seconds');
    expect(gw.asked).toEqual([]);
  });
});
