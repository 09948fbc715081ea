import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useKvGateway } from '../../../helpers/kv-gateway-mock.js';
import { grpcError, GRPC, header, rangeReply } from '../../../helpers/kv-gateway-shapes.js';

/** kv endpoint health (src/commands/kv/endpoint-health.ts) against three fake 3.5 members; beside etcdctl: test/e2e/kv-etcdctl-status.test.ts. */
const ids = ['10501334649042878790', '2282330823735441402', '13668033151171901709'];
const defs = ids.map((id, i) => ({ name: `etcd${i + 1}`, version: '3.5.35', id }));
const start = useKvGateway({ beforeEach, afterEach });
const healthy = (m: (typeof defs)[number]) => ({ ...m, routes: { '/kv/range': rangeReply(m, 9, []), '/maintenance/alarm': { header: header(m, 9) } } });

describe('kv endpoint health (fake members)', () => {
  it('one member whose quorum read is refused: its row unhealthy with etcd’s words, exit 1; the others asked their alarms', async () => {
    const sick = { ...defs[1]!, routes: { '/kv/range': grpcError(defs[1]!, GRPC.unavailable, 'etcdserver: request timed out') } };
    const gw = await start([healthy(defs[0]!), sick, healthy(defs[2]!)]);
    const r = await gw.kv(['endpoint', 'health']);
    expect(r.code).toBe(1);
    const rows = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('\t'));
    expect(rows.map((x) => [x[0], x[1], x[3]])).toEqual([
      [gw.members[0]!.hostPort, 'true', ''],
      [gw.members[1]!.hostPort, 'false', 'quorum read failed: etcdserver: request timed out'],
      [gw.members[2]!.hostPort, 'true', ''],
    ]);
    expect(gw.paths().sort()).toEqual(['etcd1 /kv/range', 'etcd1 /maintenance/alarm', 'etcd2 /kv/range', 'etcd3 /kv/range', 'etcd3 /maintenance/alarm']);
    // the read is etcdctl's: a count-only linearizable range
    expect(gw.asked.find((a) => a.path === '/kv/range')!.body).toMatchObject({ count_only: true });
  });

  it('-w simple: etcdctl’s lines; a raised alarm makes a member unhealthy (3.5+)', async () => {
    const alarmed = {
      ...defs[2]!,
      routes: {
        '/kv/range': rangeReply(defs[2]!, 9, []),
        '/maintenance/alarm': { header: header(defs[2]!, 9), alarms: [{ memberID: ids[2], alarm: 'NOSPACE' }] },
      },
    };
    const gw = await start([healthy(defs[0]!), alarmed]);
    const r = await gw.kv(['endpoint', 'health', '-w', 'simple']);
    expect(r.code).toBe(1);
    const lines = r.stdout.split('\n').filter(Boolean);
    expect(lines[0]).toMatch(new RegExp(`^${gw.members[0]!.hostPort} is healthy: successfully committed proposal: took = \\S+$`));
    expect(lines[1]).toMatch(new RegExp(`^${gw.members[1]!.hostPort} is unhealthy: failed to commit proposal: Active Alarm\\(s\\): NOSPACE $`));
  });

  it('every member healthy: exit 0', async () => {
    const gw = await start(defs.map(healthy));
    expect((await gw.kv(['endpoint', 'health'])).code).toBe(0);
  });
});
