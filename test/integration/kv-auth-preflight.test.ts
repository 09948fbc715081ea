import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli, tempConfigDir } from '../helpers/cli.js';

/**
 * The pre-flight's auth rule through the real command and real HTTP: three members that answer
 * like etcd 3.2 (health, version, the /v3alpha gateway) with auth on (a token-less range is
 * refused with "user name is empty"); one of them runs 3.2.30. Their member list is the three of them.
 */
const servers: Server[] = [];
const cfg = tempConfigDir('opsctl-kv-authpre-');
let endpoints: string[] = [];
let authOn = true;

function member(id: string, version: string): Promise<string> {
  const srv = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const json = (status: number, o: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(o));
      const header = { cluster_id: '1', member_id: id, revision: '7', raft_term: '2' };
      if (req.url === '/health') return json(200, { health: 'true' });
      if (req.url === '/version') return json(200, { etcdserver: version, etcdcluster: '3.2.0' });
      if (req.url === '/v3alpha/maintenance/status') return json(200, { header, version, leader: '11', raftIndex: '9' });
      if (req.url === '/v3alpha/maintenance/alarm') return json(200, { header });
      // The whole cluster as it reports itself: the three members, no other.
      if (req.url === '/v3alpha/cluster/member/list')
        return json(200, {
          header,
          members: endpoints.map((u, i) => ({ ID: String(11 + i), name: `m${11 + i}`, peerURLs: [`http://127.0.0.1:${2380 + i}`], clientURLs: [u] })),
        });
      if (req.url === '/v3alpha/kv/range') return authOn ? json(400, { error: 'etcdserver: user name is empty', code: 3 }) : json(200, { header });
      return json(404, { error: 'not found' });
    });
  });
  servers.push(srv);
  return new Promise((r) => srv.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${(srv.address() as AddressInfo).port}`)));
}

beforeAll(async () => {
  endpoints = [await member('11', '3.2.32'), await member('12', '3.2.30'), await member('13', '3.2.32')];
});
afterAll(async () => {
  for (const s of servers) await new Promise((r) => s.close(r));
  cfg.cleanup();
});

const upgrade = () => runCli(['kv', 'upgrade', '--to', '3.3', '--dry-run', '--endpoints', endpoints.join(',')], { env: { OPSCTL_CONFIG_DIR: cfg.dir } });

it("auth on and a member on 3.2.30: refused before any change, with the seed's reason", async () => {
  const r = await upgrade();
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/runs 3\.2\.30 and auth is enabled: .*unauthorized lease revoke.*upgrade every member to 3\.2\.31 or later first/);
});

it('the same cluster with auth off: the rule passes; without a driver no member can be proven, so the dry run exits 1 as the run would', async () => {
  authOn = false;
  const r = await upgrade();
  expect(r.code, r.stderr).toBe(1);
  // (a rule every member passed is one line of the plan; each member's words are in --json)
  expect(r.stderr).toMatch(/\[auth-3\.2\.31\] ok on m11, m12, m13: /);
  expect(r.stderr).not.toMatch(/auth is enabled/);
  // the plan: its summary says what blocks it, each finding once (the members with the same words on one line)
  expect(r.stderr).toMatch(/^Blocked by 6 findings: \[trial-start\] m11, m12, m13; \[data-trial\] m11, m12, m13 \(each below, with its fix\)$/m);
  expect(r.stderr.match(/m11, m12, m13: not checked: no driver/g)).toHaveLength(1);
  // then the refusal: each rule once, with its members (their words are in the plan just above, not repeated)
  expect(r.stderr).toMatch(/- 3\.2 → 3\.3 \[trial-start\] m11, m12, m13: not proven \(each above, with its fix\)/);
  expect(r.stderr).not.toMatch(/member m11: not proven/);
  // --json: the refusal keeps every reason, as a list too
  const j = await runCli(['kv', 'upgrade', '--to', '3.3', '--dry-run', '--json', '--endpoints', endpoints.join(',')], { env: { OPSCTL_CONFIG_DIR: cfg.dir } });
  expect(j.code).toBe(1);
  const err = JSON.parse(j.stderr.trim().split('\n').at(-1)!) as { error: { code: string; reasons: string[] } };
  expect(err.error.code).toBe('preflight');
  for (const m of ['m11', 'm12', 'm13'])
    expect(err.error.reasons).toContainEqual(expect.stringMatching(new RegExp(`\\[trial-start\\] member ${m}: not proven: no driver`)));
});
