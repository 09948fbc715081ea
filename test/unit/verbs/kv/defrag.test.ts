import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useKvGateway } from '../../../helpers/kv-gateway-mock.js';
import { grpcError, GRPC, header, memberListReply } from '../../../helpers/kv-gateway-shapes.js';

/** kv defrag (src/commands/kv/defrag.ts) against fake 3.6 and 3.5 members; beside etcdctl: test/e2e/kv-etcdctl-verbs.test.ts. */
const ids = ['10501334649042878790', '2282330823735441402'];
const defs = ids.map((id, i) => ({ name: `etcd${i + 1}`, version: i ? '3.5.35' : '3.6.16', id }));
const start = useKvGateway({ beforeEach, afterEach });
const done = (m: (typeof defs)[number]) => ({ header: header(m, 9) });

/** The members, each listing both by their client URLs (the names the rows take). */
async function members(defrag: Array<unknown>) {
  const gw = await start(defs.map((m, i) => ({ ...m, routes: { '/maintenance/defragment': defrag[i] } })));
  const list = (m: (typeof defs)[number]) =>
    memberListReply(
      m,
      9,
      gw.members.map((x, i) => ({ id: x.id, name: x.name, peer: `http://10.0.0.${i + 1}:2380`, client: x.url })),
    );
  for (const m of gw.members) m.routes['/cluster/member/list'] = list(m);
  return gw;
}

describe('kv defrag (fake members)', () => {
  it('each member in turn, named from the member list; a row per member (name, endpoint, ok)', async () => {
    const gw = await members(defs.map(done));
    const r = await gw.kv(['defrag']);
    expect(r.code).toBe(0);
    const rows = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('\t'));
    expect(rows.map((x) => x.slice(0, 3))).toEqual([
      ['etcd1', gw.members[0]!.url, 'true'],
      ['etcd2', gw.members[1]!.url, 'true'],
    ]);
    expect(rows.map((x) => x[3])).toEqual([expect.stringMatching(/^[\d.]+ ms$/), expect.stringMatching(/^[\d.]+ ms$/)]);
    expect(gw.paths()).toEqual(['etcd1 /cluster/member/list', 'etcd1 /maintenance/defragment', 'etcd2 /maintenance/defragment']);
    expect(gw.asked[1]!.body).toEqual({});
  });

  it('-w simple: etcdctl’s line per member (3.6’s with the time, 3.5’s without), each member’s version asked', async () => {
    const gw = await members(defs.map(done));
    const r = await gw.kv(['defrag', '-w', 'simple']);
    expect(r.code).toBe(0);
    const [a, b, ...rest] = r.stdout.split('\n');
    expect(a).toMatch(new RegExp(`^Finished defragmenting etcd member\\[${gw.members[0]!.hostPort}\\]\\. took \\S+$`));
    expect(b).toBe(`Finished defragmenting etcd member[${gw.members[1]!.hostPort}]`);
    expect(rest).toEqual(['']);
    expect(gw.paths().filter((p) => p.endsWith('/version'))).toEqual(['etcd1 /version', 'etcd2 /version']);
  });

  it('one member refuses: its row says why, the other is still defragmented, exit 1; -w simple: the failure on stderr', async () => {
    const gw = await members([grpcError(defs[0]!, GRPC.unavailable, 'etcdserver: request timed out'), done(defs[1]!)]);
    const r = await gw.kv(['defrag', '--json']);
    expect(r.code).toBe(1);
    const rows = JSON.parse(r.stdout) as Array<Record<string, unknown>>;
    expect(rows.map((x) => [x.name, x.ok, x.error])).toEqual([
      ['etcd1', false, `${gw.members[0]!.url}: etcdserver: request timed out (HTTP 503)`],
      ['etcd2', true, undefined],
    ]);
    const simple = await gw.kv(['defrag', '-w', 'simple']);
    expect(simple.code).toBe(1);
    expect(simple.stdout).toBe(`Finished defragmenting etcd member[${gw.members[1]!.hostPort}]\n`);
    expect(simple.stderr).toMatch(
      new RegExp(`Failed to defragment etcd member\\[${gw.members[0]!.hostPort}\\]\\. took \\S+\\. \\(.*etcdserver: request timed out \\(HTTP 503\\)\\)`),
    );
  });
});
