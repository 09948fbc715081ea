import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useKvGateway } from '../../../helpers/kv-gateway-mock.js';
import { statusReply } from '../../../helpers/kv-gateway-shapes.js';

/** kv endpoint status (src/commands/kv/endpoint-status.ts) against a fake 3.6 leader and a 3.4 follower (mid-upgrade); beside etcdctl: test/e2e/kv-etcdctl-status.test.ts. */
const leader = { name: 'etcd1', version: '3.6.16', id: '10501334649042878790' };
const old = { name: 'etcd2', version: '3.4.30', id: '2282330823735441402' };
const start = useKvGateway({ beforeEach, afterEach });

describe('kv endpoint status (fake members)', () => {
  it('a row per member with every column; a 3.4 member leaves the 3.6 facts (storage version, quota, downgrade) blank; not in use is 100 minus the whole percent in use (etcdctl 3.6)', async () => {
    const gw = await start([
      {
        ...leader,
        routes: { '/maintenance/status': statusReply(leader, { leader: leader.id, revision: 40, dbSize: 24576, dbSizeInUse: 16384, raftIndex: 55 }) },
      },
      { ...old, routes: { '/maintenance/status': statusReply(old, { leader: leader.id, revision: 40, dbSize: 20480, dbSizeInUse: 20480, raftIndex: 55 }) } },
    ]);
    const r = await gw.kv(['endpoint', 'status']);
    expect(r.code).toBe(0);
    expect(gw.paths().sort()).toEqual(['etcd1 /maintenance/status', 'etcd2 /maintenance/status']);
    const [a, b] = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('\t'));
    expect(a).toEqual([
      gw.members[0]!.hostPort,
      '91bc3c398fb3c146',
      '3.6.16',
      '3.6.0',
      '25 kB',
      '16 kB',
      '34%',
      '2.1 GB',
      'true',
      'false',
      '2',
      '55',
      '55',
      '',
      '',
      'false',
    ]);
    expect(b).toEqual([gw.members[1]!.hostPort, '1fac77cab8acf7fa', '3.4.30', '', '20 kB', '20 kB', '0%', '', 'false', 'false', '2', '55', '55', '', '', '']);
  });

  it('a member that does not answer: its row says why, the others are shown, exit 1', async () => {
    const gw = await start([{ ...leader, routes: { '/maintenance/status': statusReply(leader, { leader: leader.id, revision: 40 }) } }]);
    const r = await gw.kv(['endpoint', 'status'], { endpoints: `${gw.endpoints},http://127.0.0.1:1` });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Failed to get the status of endpoint 127.0.0.1:1 (');
    expect(r.stdout.split('\n')[0]!.split('\t')[0]).toBe(gw.members[0]!.hostPort);
  });
});
