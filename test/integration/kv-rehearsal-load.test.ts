import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { MemberSpec } from '../../src/kv/cluster/cluster-file.js';
import { KvSession } from '../../src/kv/cluster/session.js';
import { startLoad } from '../../src/kv/rehearsal/load.js';
import { until } from '../helpers/kv.js';

/**
 * A fake member over real HTTP (the gateway's put, range and status, and /health): it keeps what is put, and answers
 * the read-back's range with a 503 while `failReads` says so (a member just restarted, a loaded machine).
 */
async function fakeMember(failReads: () => boolean): Promise<{ spec: MemberSpec; reads: () => number; puts: () => number; close: () => Promise<void> }> {
  const kv = new Map<string, string>();
  let reads = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += String(c)));
    req.on('end', () => {
      const json = (o: unknown, status = 200) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(o));
      const header = { cluster_id: '1', member_id: '1', revision: String(kv.size + 1), raft_term: '2' };
      if (req.url === '/health') return json({ health: 'true' });
      const q = body ? (JSON.parse(body) as { key?: string; value?: string }) : {};
      if (req.url === '/v3/maintenance/status') return json({ header, version: '3.5.35', leader: '1', raftIndex: '9', raftAppliedIndex: '9' });
      if (req.url === '/v3/kv/put') {
        kv.set(Buffer.from(q.key!, 'base64').toString(), Buffer.from(q.value!, 'base64').toString());
        return json({ header });
      }
      if (req.url === '/v3/kv/range') {
        reads++;
        if (failReads()) return json({ error: 'etcdserver: request timed out', code: 14, message: 'etcdserver: request timed out' }, 503);
        const kvs = [...kv].map(([k, v]) => ({ key: Buffer.from(k).toString('base64'), value: Buffer.from(v).toString('base64') }));
        return json({ header, kvs, count: String(kvs.length) });
      }
      json({ error: 'not found', code: 5 }, 404);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    spec: { name: 'm1', endpoint: url },
    reads: () => reads,
    puts: () => kv.size,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

describe("the rehearsal's load read back (kv/rehearsal/load.ts)", () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => close?.());

  it('a member that does not answer the first read-backs is asked again: every acknowledged write found, none lost', async () => {
    let failing = 3;
    const m = await fakeMember(() => failing-- > 0);
    close = m.close;
    const load = startLoad([m.spec], new KvSession(), { writeEveryMs: 5, probeEveryMs: 50 });
    await until(() => m.puts() >= 3, 20_000, 'three writes');
    const r = await load.stop();
    expect(r.writes.acked).toBeGreaterThan(0);
    expect(r.writes).toEqual({ acked: r.writes.acked, lost: 0, failed: 0 });
    expect(m.reads()).toBe(4);
  });

  it('no member answers the read-back before its deadline: said as unread, not as the acknowledged writes lost', async () => {
    const m = await fakeMember(() => true);
    close = m.close;
    const load = startLoad([m.spec], new KvSession(), { writeEveryMs: 5, probeEveryMs: 50, readBackMs: 1_500 });
    await until(() => m.puts() >= 3, 20_000, 'three writes');
    const r = await load.stop();
    expect(r.writes.acked).toBeGreaterThan(0);
    expect(r.writes).toMatchObject({ lost: 0, unread: true });
    expect(m.reads()).toBeGreaterThan(1);
  });
});
