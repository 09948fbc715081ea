import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useKvGateway } from '../../../helpers/kv-gateway-mock.js';
import { header, memberListReply, rangeReply, statusReply } from '../../../helpers/kv-gateway-shapes.js';

/** kv status (src/commands/kv/status.ts) against fake members; on real etcd: test/e2e/kv-etcdctl-status.test.ts. */
const ids = ['10501334649042878790', '2282330823735441402'];
const defs = ids.map((id, i) => ({ name: `etcd${i + 1}`, version: i ? '3.4.30' : '3.5.35', id }));
const start = useKvGateway({ beforeEach, afterEach });

describe('kv status (fake members)', () => {
  it('a row per member named from the member list: id in hex, versions, the leader, the revision', async () => {
    const gw = await start(
      defs.map((m) => ({
        ...m,
        routes: {
          '/maintenance/status': statusReply(m, { leader: ids[0]!, revision: 40 }),
          '/kv/range': rangeReply(m, 40, []),
          '/maintenance/alarm': { header: header(m, 40) },
        },
      })),
    );
    for (const m of gw.members)
      m.routes['/cluster/member/list'] = memberListReply(
        m,
        40,
        gw.members.map((x) => ({ id: x.id, name: x.name, peer: `http://10.0.0.1:${x.hostPort.split(':')[1]}`, client: x.url })),
      );
    const r = await gw.kv(['status']);
    expect(r.code).toBe(0);
    const rows = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('\t'));
    expect(rows.map((x) => x.slice(0, 8))).toEqual([
      ['etcd1', gw.members[0]!.url, '91bc3c398fb3c146', '3.5.35', '3.5.0', 'true', '40', 'true'],
      ['etcd2', gw.members[1]!.url, '1fac77cab8acf7fa', '3.4.30', '3.4.0', 'false', '40', 'true'],
    ]);
  });
});
