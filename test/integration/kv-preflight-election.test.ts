import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { runCli, tempConfigDir } from '../helpers/cli.js';

/**
 * The pre-flight and an election under way, through the real command and real HTTP: three members that
 * answer like etcd 3.2. Member 13 names itself the leader for its first `stale` status answers (a leader
 * that missed its heartbeats and has not yet heard of the new term), then the leader the others name.
 * CI's flake: `kv sandbox up` then `kv upgrade` on a busy host refused "members disagree on the leader".
 */
const servers: Server[] = [];
const cfg = tempConfigDir('opsctl-kv-election-');
let endpoints: string[] = [];
let stale = 0;
let statusAsked = 0;

function member(id: string): Promise<string> {
  const srv = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const json = (status: number, o: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(o));
      const header = { cluster_id: '1', member_id: id, revision: '7', raft_term: '2' };
      if (req.url === '/v3alpha/kv/range') return json(200, { header, count: '0' });
      if (req.url === '/version') return json(200, { etcdserver: '3.2.32', etcdcluster: '3.2.0' });
      if (req.url === '/v3alpha/maintenance/status') {
        const leader = id === '13' && statusAsked++ < stale ? '13' : '11';
        return json(200, { header, version: '3.2.32', leader, raftIndex: '9' });
      }
      if (req.url === '/v3alpha/maintenance/alarm') return json(200, { header });
      if (req.url === '/v3alpha/cluster/member/list')
        return json(200, {
          header,
          members: endpoints.map((u, i) => ({ ID: String(11 + i), name: `m${11 + i}`, peerURLs: [`http://127.0.0.1:${2380 + i}`], clientURLs: [u] })),
        });
      return json(404, { error: 'not found' });
    });
  });
  servers.push(srv);
  return new Promise((r) => srv.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${(srv.address() as AddressInfo).port}`)));
}

beforeAll(async () => {
  endpoints = [await member('11'), await member('12'), await member('13')];
});
beforeEach(() => {
  statusAsked = 0;
});
afterAll(async () => {
  for (const s of servers) await new Promise((r) => s.close(r));
  cfg.cleanup();
});

const SKIP = ['--skip-trial', 'm11,m12,m13', '--skip-reason', 'stand-in members that answer HTTP only'];
const upgrade = (...extra: string[]) =>
  // (stand-in members answer HTTP only: no process to try the target on, said by name as an operator would)
  runCli(['kv', 'upgrade', '--to', '3.3', '--dry-run', '--poll-interval', '20ms', '--endpoints', endpoints.join(','), ...SKIP, ...extra], {
    env: { OPSCTL_CONFIG_DIR: cfg.dir },
  });

it('members between leaders for a moment: the pre-flight looks again until they agree, then plans', async () => {
  stale = 3;
  const r = await upgrade('--debug');
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toMatch(/Plan: upgrade 3\.2 → 3\.3/);
  expect(r.stderr).toContain('the members are between leaders (an election): looking again');
  expect(statusAsked).toBeGreaterThan(3);
});

it('an election that does not settle within the healthy timeout is refused, naming both leaders, nothing changed', async () => {
  stale = Number.MAX_SAFE_INTEGER;
  const r = await upgrade('--healthy-timeout', '300ms');
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('members disagree on the leader (11, 13): wait for the election to settle');
  expect(r.stderr).toContain('nothing was changed');
});
