import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
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
    // each member's requests on one connection, written at once: its version, its status, (the first member)
    // the member list the names come from, the quorum read last. No alarm list: a 3.4+ status lists the
    // alarms among its errors (an alarm list is a raft proposal on 3.4 and 3.5).
    const of = (name: string) => gw.asked.filter((a) => a.member === name).map((a) => a.path);
    expect(of('etcd1')).toEqual(['/version', '/maintenance/status', '/cluster/member/list', '/kv/range']);
    expect(of('etcd2')).toEqual(['/version', '/maintenance/status', '/kv/range']);
    for (const name of ['etcd1', 'etcd2']) expect(new Set(gw.asked.filter((a) => a.member === name).map((a) => a.connection)).size, name).toBe(1);
  });

  it('the first member down: named from the next member that answers, its row says why, exit 1', async () => {
    // etcd1's client URL: a port nothing listens on
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const down = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((r) => closed.close(() => r()));
    const m = defs[1]!;
    const gw = await start([
      {
        ...m,
        routes: {
          '/maintenance/status': statusReply(m, { leader: ids[1]!, revision: 40 }),
          '/kv/range': rangeReply(m, 40, []),
          '/maintenance/alarm': { header: header(m, 40) },
        },
      },
    ]);
    const etcd2 = gw.members[0]!;
    etcd2.routes['/cluster/member/list'] = memberListReply(etcd2, 40, [
      { id: ids[0]!, name: 'etcd1', peer: 'http://10.0.0.1:2380', client: down },
      { id: etcd2.id, name: etcd2.name, peer: 'http://10.0.0.1:2381', client: etcd2.url },
    ]);
    const r = await gw.kv(['status'], { endpoints: `${down},${etcd2.url}` });
    expect(r.code).toBe(1);
    const rows = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('\t'));
    expect(rows.map((x) => [x[0], x[1], x[7]])).toEqual([
      ['etcd1', down, 'false'],
      ['etcd2', etcd2.url, 'true'],
    ]);
    expect(rows[0]![8]).toMatch(/unreachable/);
    // (etcd1's member list failed with it: the names come from the next member that answers)
    expect(gw.paths()).toEqual(['etcd2 /version', 'etcd2 /maintenance/status', 'etcd2 /kv/range', 'etcd2 /cluster/member/list']);
  });

  it('the first member has no leader: its quorum read (last on its connection, still out) is not waited for; the member list before it answered', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    const gw = await start(
      defs.map((m, i) => ({
        ...m,
        routes: {
          '/maintenance/status': statusReply(m, { leader: i ? ids[1]! : '0', revision: 12 }),
          // etcd1's read waits for a leader it has not got (answered only when the test ends)
          '/kv/range': i ? rangeReply(m, 12, []) : () => held.then(() => rangeReply(m, 12, [])),
        },
      })),
    );
    for (const m of gw.members)
      m.routes['/cluster/member/list'] = memberListReply(
        m,
        12,
        gw.members.map((x) => ({ id: x.id, name: x.name, peer: `http://10.0.0.1:${x.hostPort.split(':')[1]}`, client: x.url })),
      );
    try {
      // (a read waited for would hold the verb for the whole request timeout)
      const r = await gw.kv(['status', '--request-timeout', '120s']);
      expect(r.code).toBe(1);
      const rows = r.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('\t'));
      expect(rows.map((x) => [x[0], x[5], x[7], x[8]])).toEqual([
        ['etcd1', 'false', 'false', 'no leader'],
        ['etcd2', 'true', 'true', ''],
      ]);
      const etcd1 = gw.asked.filter((a) => a.member === 'etcd1');
      expect(etcd1.map((a) => a.path)).toEqual(['/version', '/maintenance/status', '/cluster/member/list', '/kv/range']);
      expect(new Set(etcd1.map((a) => a.connection)).size).toBe(1);
    } finally {
      release();
    }
  });

  it("an alarm raised: read from a 3.4+ member's status errors (no alarm list asked), said on stderr, exit 1", async () => {
    const nospace = `memberID:${ids[1]} alarm:NOSPACE `;
    const gw = await start(
      defs.map((m) => ({
        ...m,
        routes: {
          '/maintenance/status': statusReply(m, { leader: ids[0]!, revision: 7, errors: [nospace] }),
          '/kv/range': rangeReply(m, 7, []),
        },
      })),
    );
    gw.members[0]!.routes['/cluster/member/list'] = memberListReply(gw.members[0]!, 7, []);
    const r = await gw.kv(['status']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/alarm NOSPACE on member 1fac77cab8acf7fa/);
    expect(gw.paths().filter((p) => p.endsWith('/maintenance/alarm'))).toEqual([]);
    // the rows are whole: every member healthy, the exit code is the alarm's
    expect(
      r.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('\t')[7]),
    ).toEqual(['true', 'true']);
  });

  it("a 3.3 member first: its status (asked under 3.4's prefix first, then under the one its version names) carries no alarms: the alarm list is asked", async () => {
    const old = [
      { name: 'etcd1', version: '3.3.27', id: ids[0]! },
      { name: 'etcd2', version: '3.3.27', id: ids[1]! },
    ];
    const gw = await start(
      old.map((m) => ({
        ...m,
        routes: {
          '/maintenance/status': statusReply(m, { leader: ids[0]!, revision: 9 }),
          '/kv/range': rangeReply(m, 9, []),
          '/maintenance/alarm': { header: header(m, 9), alarms: [{ memberID: ids[0], alarm: 'NOSPACE' }] },
        },
      })),
    );
    gw.members[0]!.routes['/cluster/member/list'] = memberListReply(gw.members[0]!, 9, []);
    const r = await gw.kv(['status']);
    expect(r.code).toBe(1);
    expect(
      r.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('\t').slice(3, 8)),
    ).toEqual([
      ['3.3.27', '3.3.0', 'true', '9', 'true'],
      ['3.3.27', '3.3.0', 'false', '9', 'true'],
    ]);
    expect(r.stderr).toMatch(/alarm NOSPACE on member 91bc3c398fb3c146/);
    expect(gw.asked.filter((a) => a.member === 'etcd1').map((a) => a.path)).toEqual([
      '/version',
      '/maintenance/status',
      '/cluster/member/list',
      '/kv/range',
      '/maintenance/alarm',
    ]);
  });
});
