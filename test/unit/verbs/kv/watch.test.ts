import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useKvGateway } from '../../../helpers/kv-gateway-mock.js';
import { b64, header, kv, statusReply } from '../../../helpers/kv-gateway-shapes.js';

/** kv watch (src/commands/kv/watch.ts) against a fake 3.5 member's watch stream; beside etcdctl: test/e2e/kv-etcdctl-verbs.test.ts. */
const etcd1 = { name: 'etcd1', version: '3.5.35', id: '10501334649042878790' };
const start = useKvGateway({ beforeEach, afterEach });
const a1 = { key: 'config/a', value: '1', create: 10, mod: 10 };
const a2 = { key: 'config/a', value: '2', create: 10, mod: 11, version: 2 };

/** The gateway's watch stream as a member writes it: one JSON message a line, the first saying the watch is created. */
const stream = (...msgs: unknown[]) => msgs.map((m) => `${JSON.stringify(m)}\n`).join('');
const created = { result: { header: header(etcd1, 9), created: true } };
const events = (rev: number, evs: unknown[]) => ({ result: { header: header(etcd1, rev), events: evs } });
const changes = stream(
  created,
  events(10, [{ kv: kv(a1) }]),
  events(11, [{ kv: kv(a2), prev_kv: kv(a1) }]),
  events(12, [{ type: 'DELETE', kv: { key: b64('config/a'), mod_revision: '12' }, prev_kv: kv(a2) }]),
);

/** The member: its status (the watch finds the gateway prefix by asking it) and its watch stream. */
const member = (watch: string) => ({ ...etcd1, routes: { '/maintenance/status': statusReply(etcd1, { leader: etcd1.id, revision: 9 }), '/watch': watch } });

describe('kv watch (a fake member’s stream)', () => {
  it('--prefix --rev --prev-kv: one create_request as the gateway takes it; a tab-separated line per event, --max-events ends it (exit 0)', async () => {
    const gw = await start([member(changes)]);
    const r = await gw.kv(['watch', 'config/', '--prefix', '--rev', '10', '--prev-kv', '--max-events', '3']);
    expect([r.code, r.stdout]).toEqual([0, 'PUT\tconfig/a\t1\t10\nPUT\tconfig/a\t2\t11\nDELETE\tconfig/a\t\t12\n']);
    expect(gw.paths()).toEqual(['etcd1 /maintenance/status', 'etcd1 /watch']);
    expect(gw.asked[1]!.body).toEqual({ create_request: { key: b64('config/'), range_end: b64('config0'), start_revision: '10', prev_kv: true } });
  });

  it('-w simple: etcdctl’s lines (type, the previous key and value, the key and value); --json: one object a line', async () => {
    const gw = await start([member(changes)]);
    const simple = await gw.kv(['watch', 'config/a', '--prev-kv', '--max-events', '2', '-w', 'simple']);
    expect([simple.code, simple.stdout]).toEqual([0, 'PUT\nconfig/a\n1\nPUT\nconfig/a\n1\nconfig/a\n2\n']);
    expect(gw.asked[1]!.body).toEqual({ create_request: { key: b64('config/a'), prev_kv: true } });
    const json = await gw.kv(['watch', 'config/a', '--max-events', '1', '--json']);
    expect(
      json.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as unknown),
    ).toEqual([{ type: 'PUT', key: 'config/a', value: '1', create_revision: 10, mod_revision: 10, version: 1, lease: null, revision: 10 }]);
  });

  it('a revision already compacted: exit 1 naming the first revision there is and the fix', async () => {
    const gw = await start([member(stream({ result: { header: header(etcd1, 40), compact_revision: '30', canceled: true } }))]);
    const r = await gw.kv(['watch', 'config/a', '--rev', '5']);
    expect([r.code, r.stdout]).toEqual([1, '']);
    expect(r.stderr).toContain('required revision has been compacted: the history before revision 30 is gone');
    expect(r.stderr).toContain('--rev 30');
  });

  it('--prefix with a range end: exit 2, before any request', async () => {
    const gw = await start([etcd1]);
    const r = await gw.kv(['watch', 'config/', 'config0', '--prefix']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--prefix and a range end: give one of them');
    expect(gw.asked).toEqual([]);
  });
});
