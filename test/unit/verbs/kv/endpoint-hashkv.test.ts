import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useKvGateway } from '../../../helpers/kv-gateway-mock.js';
import { header, memberListReply } from '../../../helpers/kv-gateway-shapes.js';

/** kv endpoint hashkv (src/commands/kv/endpoint-hashkv.ts) against fake 3.6, 3.5 and 3.2 members; beside etcdctl: test/e2e/kv-etcdctl-verbs.test.ts. */
const ids = ['10501334649042878790', '2282330823735441402', '13668033151171901709'];
const start = useKvGateway({ beforeEach, afterEach });
const v36 = { name: 'etcd1', version: '3.6.16', id: ids[0]! };
const v35 = { name: 'etcd2', version: '3.5.35', id: ids[1]! };
// 3.5's gateway writes the hash as a number and the compact revision as a string; 3.6 adds hash_revision
const hash36 = { header: header(v36, 40), hash: 3618394875, compact_revision: '12', hash_revision: '40' };
const hash35 = { header: header(v35, 40), hash: 3618394875, compact_revision: '12' };

async function members(defs: Array<{ name: string; version: string; id: string; routes?: Record<string, unknown> }>) {
  const gw = await start(defs);
  for (const m of gw.members)
    m.routes['/cluster/member/list'] = memberListReply(
      m,
      40,
      gw.members.map((x, i) => ({ id: x.id, name: x.name, peer: `http://10.0.0.${i + 1}:2380`, client: x.url })),
    );
  return gw;
}

describe('kv endpoint hashkv (fake members)', () => {
  it('--rev: asked on each 3.5+ gateway as a decimal string; a row per member; -w simple: etcdctl lines (3.6 with the revision); --json', async () => {
    const gw = await members([
      { ...v36, routes: { '/maintenance/hashkv': hash36 } },
      { ...v35, routes: { '/maintenance/hashkv': hash35 } },
    ]);
    const r = await gw.kv(['endpoint', 'hashkv', '--rev', '40']);
    expect(r.code).toBe(0);
    const [a, b] = gw.members.map((m) => m.hostPort);
    expect(r.stdout).toBe(`${a}\t3618394875\t40\t12\t\n${b}\t3618394875\t\t12\t\n`);
    expect(gw.asked.filter((x) => x.path === '/maintenance/hashkv').map((x) => x.body)).toEqual([{ revision: '40' }, { revision: '40' }]);
    expect((await gw.kv(['endpoint', 'hashkv', '--rev', '40', '-w', 'simple'])).stdout).toBe(`${a}, 3618394875, 40\n${b}, 3618394875\n`);
    expect(JSON.parse((await gw.kv(['endpoint', 'hashkv', '--json'])).stdout)).toEqual([
      { endpoint: a, hash: '3618394875', compact_revision: 12, hash_revision: 40 },
      { endpoint: b, hash: '3618394875', compact_revision: 12 },
    ]);
    // without --rev: no revision in the request (the latest)
    expect(
      gw.asked
        .filter((x) => x.path === '/maintenance/hashkv')
        .map((x) => x.body)
        .slice(4),
    ).toEqual([{}, {}]);
  });

  it('a 3.2 member (no HashKV): its row says so on stderr, the other’s hash shown, exit 1', async () => {
    const gw = await members([
      { ...v36, routes: { '/maintenance/hashkv': hash36 } },
      { name: 'etcd3', version: '3.2.32', id: ids[2]! },
    ]);
    const r = await gw.kv(['endpoint', 'hashkv', '-w', 'simple']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(`${gw.members[0]!.hostPort}, 3618394875, 40\n`);
    expect(r.stderr).toContain(`Failed to get the hash of endpoint ${gw.members[1]!.hostPort} (etcd 3.2.32 has no HashKV (it came in 3.3))`);
    expect(gw.paths().filter((p) => p.startsWith('etcd3'))).toEqual(['etcd3 /version']);
  });

  it('--rev that is not a whole number: exit 2 naming --rev, before any request', async () => {
    const gw = await members([v36]);
    const r = await gw.kv(['endpoint', 'hashkv', '--rev', 'latest']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--rev: "latest" is not a revision');
    expect(gw.asked).toEqual([]);
  });
});
