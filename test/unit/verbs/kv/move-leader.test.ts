import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useKvGateway } from '../../../helpers/kv-gateway-mock.js';
import { header, memberListReply, statusReply } from '../../../helpers/kv-gateway-shapes.js';

/** kv move-leader (src/commands/kv/move-leader.ts) against three fake 3.6 members; beside etcdctl: test/e2e/kv-etcdctl-verbs.test.ts. */
const ids = ['10501334649042878790', '2282330823735441402', '13668033151171901709'];
const defs = ids.map((id, i) => ({ name: `etcd${i + 1}`, version: '3.6.16', id }));
const list = memberListReply(
  defs[0]!,
  9,
  defs.map((m, i) => ({ id: m.id, name: m.name, peer: `http://10.0.0.${i + 1}:2380`, client: `http://10.0.0.${i + 1}:2379` })),
);
const start = useKvGateway({ beforeEach, afterEach });
const member = (m: (typeof defs)[number], leaderId: string, extra: Record<string, unknown> = {}) => ({
  ...m,
  routes: { '/cluster/member/list': list, '/maintenance/status': statusReply(m, { leader: leaderId, revision: 9 }), ...extra },
});

describe('kv move-leader (fake members)', () => {
  it('by name: the id from the member list, the transfer asked of the leader alone', async () => {
    const gw = await start([
      member(defs[0]!, ids[1]!),
      member(defs[1]!, ids[1]!, { '/maintenance/transfer-leadership': { header: header(defs[1]!, 9) } }),
      member(defs[2]!, ids[1]!),
    ]);
    const r = await gw.kv(['move-leader', 'etcd3', '-w', 'simple']);
    expect([r.code, r.stdout]).toEqual([0, 'Leadership transferred from 1fac77cab8acf7fa to bdae9bbc11dd390d\n']);
    const transfer = gw.asked.filter((a) => a.path === '/maintenance/transfer-leadership');
    expect(transfer.map((a) => [a.member, a.body])).toEqual([['etcd2', { targetID: ids[2] }]]);
    expect(gw.paths().filter((p) => p.endsWith('/cluster/member/list'))).toEqual(['etcd1 /cluster/member/list']);
  });

  it('the target is already the leader: said, nothing transferred', async () => {
    const gw = await start(defs.map((m) => member(m, ids[0]!)));
    const r = await gw.kv(['move-leader', 'etcd1', '-w', 'simple']);
    expect([r.code, r.stdout]).toEqual([0, '91bc3c398fb3c146 is already the leader\n']);
    expect(gw.paths().some((p) => p.endsWith('/maintenance/transfer-leadership'))).toBe(false);
  });

  it('a name no member has: refused naming the members, nothing transferred', async () => {
    const gw = await start(defs.map((m) => member(m, ids[0]!)));
    const r = await gw.kv(['move-leader', 'etcd9']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/etcd9/);
    expect(r.stderr).toMatch(/etcd1.*etcd2.*etcd3/s);
    expect(gw.paths()).toEqual(['etcd1 /cluster/member/list']);
  });
});
