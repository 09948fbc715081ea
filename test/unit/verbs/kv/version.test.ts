import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useKvGateway, reply } from '../../../helpers/kv-gateway-mock.js';
import { memberListReply } from '../../../helpers/kv-gateway-shapes.js';

/** kv version (src/commands/kv/version.ts) against a fake 3.6 and a fake 3.4 member (mid-upgrade); on real etcd: test/e2e/kv-etcd.test.ts. */
const ids = ['10501334649042878790', '2282330823735441402'];
const defs = ids.map((id, i) => ({ name: `etcd${i + 1}`, version: i ? '3.4.30' : '3.6.16', id }));
const start = useKvGateway({ beforeEach, afterEach });

async function members(extra: Record<string, unknown> = {}) {
  const gw = await start(defs.map((m, i) => ({ ...m, routes: i ? extra : {} })));
  for (const m of gw.members)
    m.routes['/cluster/member/list'] = memberListReply(
      m,
      9,
      gw.members.map((x, i) => ({ id: x.id, name: x.name, peer: `http://10.0.0.${i + 1}:2380`, client: x.url })),
    );
  return gw;
}

describe('kv version (fake members)', () => {
  it('each member’s /version: a row per member with its server and cluster version; --json field names', async () => {
    const gw = await members();
    const r = await gw.kv(['version']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`etcd1\t${gw.members[0]!.url}\t3.6.16\t3.6.0\t\netcd2\t${gw.members[1]!.url}\t3.4.30\t3.4.0\t\n`);
    expect(gw.asked.filter((a) => a.path === '/version').map((a) => [a.member, a.method])).toEqual([
      ['etcd1', 'GET'],
      ['etcd2', 'GET'],
    ]);
    expect(JSON.parse((await gw.kv(['version', '--json'])).stdout)).toEqual([
      { name: 'etcd1', endpoint: gw.members[0]!.url, server: '3.6.16', cluster: '3.6.0', error: null },
      { name: 'etcd2', endpoint: gw.members[1]!.url, server: '3.4.30', cluster: '3.4.0', error: null },
    ]);
  });

  it('a member whose /version is not etcd’s: its row says so, the other is shown, exit 1', async () => {
    const gw = await members({ '/version': reply(404, '404 page not found\n') });
    const r = await gw.kv(['version', '--json']);
    expect(r.code).toBe(1);
    const rows = JSON.parse(r.stdout) as Array<Record<string, unknown>>;
    expect(rows[0]).toMatchObject({ name: 'etcd1', server: '3.6.16', error: null });
    expect(rows[1]).toMatchObject({ server: null, cluster: null, error: `${gw.members[1]!.url}/version: HTTP 404` });
  });
});
