import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MemberSpec } from '../../src/kv/cluster/cluster-file.js';
import { KvSession } from '../../src/kv/cluster/session.js';
import type { Journal } from '../../src/kv/journal/journal.js';
import type { UpgradeOptions } from '../../src/kv/upgrade/options.js';
import { snapshotStep } from '../../src/kv/upgrade/steps.js';

/**
 * The executor's snapshot before a stop, when neither the member nor the leader can give one and no other member
 * is healthy: the step fails naming each member and why it was passed over (a port nothing listens on, a
 * member that answers without a leader), as `kv snapshot save` does, not a bare "no healthy member".
 */
let closed: string;
let leaderless: Server;
let noLeader: string;

beforeAll(async () => {
  const port = createNetServer();
  await new Promise<void>((r) => port.listen(0, '127.0.0.1', r));
  closed = `http://127.0.0.1:${(port.address() as AddressInfo).port}`;
  await new Promise<void>((r) => port.close(() => r()));
  // a member between leaders: its status names no leader
  leaderless = createServer((req, res) => {
    req.resume();
    res.setHeader('content-type', 'application/json');
    if (req.url === '/version') return void res.end(JSON.stringify({ etcdserver: '3.5.35', etcdcluster: '3.5.0' }));
    if (req.url === '/v3/maintenance/status')
      return void res.end(JSON.stringify({ header: { member_id: '1', revision: '5', raft_term: '2' }, version: '3.5.35', leader: '0' }));
    res.statusCode = 404;
    res.end('{}');
  });
  await new Promise<void>((r) => leaderless.listen(0, '127.0.0.1', r));
  noLeader = `http://127.0.0.1:${(leaderless.address() as AddressInfo).port}`;
});
afterAll(() => leaderless.close());

describe('the snapshot step with no member to take it from', () => {
  it('fails naming each member and why it was passed over', async () => {
    const members: MemberSpec[] = [
      { name: 'kv1', endpoint: closed },
      { name: 'kv2', endpoint: noLeader },
    ];
    const o = {
      cluster: { source: 'file', key: 'k', members },
      session: new KvSession(),
      timeouts: { requestMs: 10_000 },
      dataDir: '/nonexistent-opsctl-test',
      snapshotVia: 'gateway',
      now: () => Date.now(),
    } as unknown as UpgradeOptions;
    const env = { o, journal: { id: 'j1' } as Journal, real: true, membership: [], checkpoint: async () => {} } as unknown as Parameters<
      typeof snapshotStep
    >[0];
    const err = await snapshotStep(env, members[0]!).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(new RegExp(`^no healthy member to take a snapshot from: kv1 \\(${closed}\\): .+; kv2 \\(${noLeader}\\): no leader$`));
  });
});
