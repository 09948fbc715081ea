import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useKvGateway } from '../../../helpers/kv-gateway-mock.js';
import { b64, grpcError, GRPC, memberListReply, rangeReply, statusReply } from '../../../helpers/kv-gateway-shapes.js';

/** kv health (src/commands/kv/health.ts) against fake 3.5 members; on real etcd: test/e2e/kv-etcd.test.ts. */
const ids = ['10501334649042878790', '2282330823735441402'];
const defs = ids.map((id, i) => ({ name: `etcd${i + 1}`, version: '3.5.35', id }));
const start = useKvGateway({ beforeEach, afterEach });

async function members(routes: Array<Record<string, unknown>>) {
  const gw = await start(defs.map((m, i) => ({ ...m, routes: routes[i] })));
  for (const m of gw.members)
    m.routes['/cluster/member/list'] = memberListReply(
      m,
      9,
      gw.members.map((x, i) => ({ id: x.id, name: x.name, peer: `http://10.0.0.${i + 1}:2380`, client: x.url })),
    );
  return gw;
}
const ok = (m: (typeof defs)[number], leader = ids[0]!) => ({
  '/maintenance/status': statusReply(m, { leader, revision: 9 }),
  '/kv/range': rangeReply(m, 9, []),
});

describe('kv health (fake members)', () => {
  it('each member’s status, then a count-only read of "health"; a row per member; --json field names', async () => {
    const gw = await members(defs.map((m) => ok(m)));
    const r = await gw.kv(['health']);
    expect(r.code).toBe(0);
    const rows = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('\t'));
    expect(rows.map((x) => x.slice(0, 4))).toEqual([
      ['etcd1', gw.members[0]!.url, 'true', 'healthy'],
      ['etcd2', gw.members[1]!.url, 'true', 'healthy'],
    ]);
    const of = (name: string) => gw.asked.filter((a) => a.member === name && a.path !== '/cluster/member/list');
    for (const name of ['etcd1', 'etcd2']) expect(of(name).map((a) => a.path)).toEqual(['/maintenance/status', '/kv/range']);
    expect(of('etcd1')[1]!.body).toEqual({ key: b64('health'), count_only: true });
    const json = JSON.parse((await gw.kv(['health', '--json'])).stdout) as Array<Record<string, unknown>>;
    expect(json.map((x) => Object.keys(x))).toEqual([
      ['name', 'endpoint', 'healthy', 'detail', 'took_ms'],
      ['name', 'endpoint', 'healthy', 'detail', 'took_ms'],
    ]);
  });

  it('a member with no leader, and one whose read is refused: each row says why, exit 1', async () => {
    const gw = await members([
      { '/maintenance/status': statusReply(defs[0]!, { leader: '0', revision: 9 }) },
      {
        '/maintenance/status': statusReply(defs[1]!, { leader: ids[1]!, revision: 9 }),
        '/kv/range': grpcError(defs[1]!, GRPC.unavailable, 'etcdserver: request timed out'),
      },
    ]);
    const r = await gw.kv(['health', '--json']);
    expect(r.code).toBe(1);
    const rows = JSON.parse(r.stdout) as Array<Record<string, unknown>>;
    expect(rows.map((x) => [x.name, x.healthy, x.detail])).toEqual([
      ['etcd1', false, 'no leader'],
      ['etcd2', false, 'quorum read failed: etcdserver: request timed out'],
    ]);
    expect(gw.asked.filter((a) => a.member === 'etcd1').map((a) => a.path)).not.toContain('/kv/range');
  });
});
