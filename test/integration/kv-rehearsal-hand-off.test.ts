import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MemberSpec } from '../../src/kv/cluster/cluster-file.js';
import { KvSession } from '../../src/kv/cluster/session.js';
import { handOffLeader } from '../../src/kv/rehearsal/hand-off.js';

/**
 * The clone's leader hand-off at a hop's wait for the cluster version (kv/rehearsal/hand-off.ts), against three
 * members that answer etcd's /version, status and transfer-leadership over real HTTP: it hands off only once every
 * member runs the target and the cluster version is not there yet, from the leader to another member; anything
 * else (a member behind, the version there, a member silent, etcd refusing) leaves the raise to etcd's own check.
 */
interface Fake {
  id: string;
  server: string;
  cluster: string;
  leader: string;
  silent?: boolean;
  refuse?: boolean;
  moves: string[];
}

const fakes: Fake[] = ['1', '2', '3'].map((id) => ({ id, server: '3.6.16', cluster: '3.5.0', leader: '2', moves: [] }));
const servers: Server[] = [];
let members: MemberSpec[];

beforeAll(async () => {
  members = await Promise.all(
    fakes.map(async (f, i) => {
      const s = createServer((req, res) => {
        let body = '';
        req.on('data', (c: Buffer) => (body += String(c)));
        req.on('end', () => {
          if (f.silent) return void req.socket.destroy();
          res.setHeader('content-type', 'application/json');
          if (req.url === '/version') return void res.end(JSON.stringify({ etcdserver: f.server, etcdcluster: f.cluster }));
          if (req.url === '/v3/maintenance/status')
            return void res.end(JSON.stringify({ header: { member_id: f.id, revision: '5', raft_term: '2' }, version: f.server, leader: f.leader }));
          if (req.url === '/v3/maintenance/transfer-leadership') {
            if (f.refuse) {
              res.statusCode = 500;
              return void res.end(JSON.stringify({ code: 2, message: 'etcdserver: not leader' }));
            }
            f.moves.push(String((JSON.parse(body) as { targetID: string }).targetID));
            return void res.end(JSON.stringify({ header: {} }));
          }
          res.statusCode = 404;
          res.end('{}');
        });
      });
      await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
      servers.push(s);
      return { name: `kv${i + 1}`, endpoint: `http://127.0.0.1:${(s.address() as AddressInfo).port}` };
    }),
  );
});
afterAll(() => servers.forEach((s) => s.close()));

const reset = () => fakes.forEach((f) => Object.assign(f, { server: '3.6.16', cluster: '3.5.0', leader: '2', silent: false, refuse: false, moves: [] }));

describe("the clone's leader hand-off at the wait for the cluster version", () => {
  it('every member on the target, the cluster version behind: the leader hands off to another member', async () => {
    reset();
    expect(await handOffLeader(members, new KvSession(), '3.6')).toEqual({ moved: true, detail: 'leadership handed from kv2 to kv1' });
    expect(fakes.map((f) => f.moves)).toEqual([[], ['1'], []]);
  });

  it('a member still behind, the version there already, a member silent: no hand-off, saying why', async () => {
    reset();
    fakes[2]!.server = '3.5.35';
    expect(await handOffLeader(members, new KvSession(), '3.6')).toEqual({ moved: false, why: 'kv3 runs 3.5.35' });
    reset();
    fakes.forEach((f) => (f.cluster = '3.6.0'));
    expect(await handOffLeader(members, new KvSession(), '3.6')).toEqual({ moved: false, why: 'the cluster version is 3.6 already' });
    reset();
    fakes[0]!.silent = true;
    expect(await handOffLeader(members, new KvSession(), '3.6')).toEqual({ moved: false, why: 'not every member answered' });
    expect(fakes.flatMap((f) => f.moves)).toEqual([]);
  });

  it('etcd refusing the move, or no member answering as the leader: no hand-off, with its words', async () => {
    reset();
    fakes[1]!.refuse = true;
    const refused = await handOffLeader(members, new KvSession(), '3.6');
    expect(refused.moved).toBe(false);
    expect(!refused.moved && refused.why).toMatch(/^move-leader: .*not leader/);
    reset();
    fakes.forEach((f) => (f.leader = '0'));
    expect(await handOffLeader(members, new KvSession(), '3.6')).toEqual({ moved: false, why: 'no one leader seen' });
  });
});
