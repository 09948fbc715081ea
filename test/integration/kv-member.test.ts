import { execa, type ResultPromise } from 'execa';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { KvClient } from '../../src/kv/cluster/client.js';
import { observeMember } from '../../src/kv/cluster/observe.js';
import { KvSession } from '../../src/kv/cluster/session.js';
import { freePort } from '../../src/kv/sandbox/sandbox.js';
import { verifyTrailer } from '../../src/kv/snapshot/save.js';
import { snapshotBuffer } from '../../src/kv/snapshot/stream.js';
import { until } from '../helpers/kv.js';

/** The simulated member with the tests' conditions (test/helpers/sim-member.ts, built by the global setup), else the product's. */
const MEMBER = process.env.OPSCTL_KV_MEMBER ?? fileURLToPath(new URL('../../dist/kv-member.cjs', import.meta.url));
const started: ResultPromise[] = [];
let dir: string;

afterEach(async () => {
  for (const p of started.splice(0)) {
    if (p.exitCode === null && p.pid) process.kill(p.pid, 'SIGTERM');
    await p.catch(() => undefined);
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Lays out n members and starts the chosen ones (by index) on `version`. */
async function cluster(n: number, version: string, start = [...Array(n).keys()], extra: string[] = []) {
  dir = mkdtempSync(join(tmpdir(), 'kv-member-'));
  const ms: Array<{ name: string; client: number; peer: number; data: string }> = [];
  for (let i = 0; i < n; i++) ms.push({ name: `m${i + 1}`, client: await freePort(), peer: await freePort(), data: join(dir, `m${i + 1}`) });
  const initial = ms.map((m) => `${m.name}=http://127.0.0.1:${m.peer}`).join(',');
  const run = (i: number, v = version, more: string[] = extra) => {
    const m = ms[i]!;
    const p = execa(
      process.execPath,
      [
        MEMBER,
        '--kv-version',
        v,
        '--name',
        m.name,
        '--data-dir',
        m.data,
        '--listen-client-urls',
        `http://127.0.0.1:${m.client}`,
        '--listen-peer-urls',
        `http://127.0.0.1:${m.peer}`,
        '--initial-cluster',
        initial,
        '--heartbeat-interval',
        '100',
        ...more,
      ],
      { reject: false, all: true },
    );
    started.push(p);
    return p;
  };
  const procs = start.map((i) => run(i));
  const url = (i: number) => `http://127.0.0.1:${ms[i]!.client}`;
  return { ms, run, procs, url };
}

const raw = async (url: string, init?: RequestInit) => {
  const r = await fetch(url, init);
  return { status: r.status, text: await r.text(), url: r.url };
};

describe('the simulated kv member', () => {
  it('3.2: health body with a space, 503 without quorum; /v3alpha gateway; snapshot with a SHA-256 trailer', async () => {
    const c = await cluster(3, '3.2', [0]);
    await until(() => raw(`${c.url(0)}/health`).catch(() => undefined), 10_000, 'member up');
    expect(await raw(`${c.url(0)}/health`)).toMatchObject({ status: 503, text: '{"health": "false"}' });
    c.procs.push(c.run(1));
    await until(async () => (await raw(`${c.url(0)}/health`)).status === 200, 10_000, 'quorum');
    // Each member learns of the leader on its own heartbeat: wait for the second one too.
    await until(async () => (await raw(`${c.url(1)}/health`).catch(() => ({ status: 0 }))).status === 200, 10_000, 'second member healthy');
    expect((await raw(`${c.url(0)}/health`)).text).toBe('{"health": "true"}');
    expect(JSON.parse((await raw(`${c.url(0)}/version`)).text)).toMatchObject({ kvserver: '3.2.32' });
    expect((await raw(`${c.url(0)}/v3beta/kv/range`, { method: 'POST', body: '{}' })).status).toBe(404);
    const k = new KvClient(c.url(1));
    expect(await k.gatewayPrefix()).toBe('/v3alpha');
    await k.put('a', 'b');
    expect((await new KvClient(c.url(0)).get('a'))?.value).toBe('b');
    const snap = await snapshotBuffer(new KvClient(c.url(0)), 5000);
    expect(snap.length % 512).toBe(32);
    expect(() => verifyTrailer(snap)).not.toThrow();
  });

  it('3.3: string health body, /v3alpha redirects to /v3beta, writes over --max-request-bytes are "request is too large"', async () => {
    const c = await cluster(1, '3.3', [0], ['--max-request-bytes', '1024']);
    await until(async () => (await raw(`${c.url(0)}/health`).catch(() => ({ status: 0 }))).status === 200, 10_000, 'healthy');
    expect((await raw(`${c.url(0)}/health`)).text).toBe('{"health":"true"}');
    const body = JSON.stringify({ key: Buffer.from('k').toString('base64'), value: Buffer.from('v').toString('base64') });
    const r = await raw(`${c.url(0)}/v3alpha/kv/put`, { method: 'POST', body });
    expect(r.status).toBe(200);
    expect(r.url).toBe(`${c.url(0)}/v3beta/kv/put`);
    await expect(new KvClient(c.url(0)).put('big', 'x'.repeat(2000))).rejects.toThrow(/request is too large/);
  });

  it('the leader moves when the leader stops; the cluster version is raised only when all are reachable', async () => {
    const c = await cluster(3, '3.2');
    const leaderOf = async (i: number) => (await new KvClient(c.url(i)).status()).leaderId;
    await until(
      async () => {
        const ls = await Promise.all([0, 1, 2].map((i) => leaderOf(i).catch(() => undefined)));
        return ls[0] && ls[0] !== '0' && ls.every((l) => l === ls[0]);
      },
      10_000,
      'one leader',
    );
    const ids = await Promise.all([0, 1, 2].map(async (i) => (await new KvClient(c.url(i)).status()).memberId));
    const leader = ids.indexOf((await leaderOf(0))!);
    process.kill(c.procs[leader]!.pid!, 'SIGTERM');
    await c.procs[leader];
    const others = [0, 1, 2].filter((i) => i !== leader);
    await until(
      async () => {
        const l = await leaderOf(others[0]!).catch(() => undefined);
        return l && l !== ids[leader] && l !== '0' ? l : undefined;
      },
      10_000,
      'a new leader',
    );
    // Restart the old leader as 3.3: cluster stays 3.2 until... all three are reachable and 3.3.
    c.procs[leader] = c.run(leader, '3.3');
    await until(async () => (await raw(`${c.url(leader)}/health`).catch(() => ({ status: 0 }))).status === 200, 10_000, 'back');
    // A member killed right after the cluster formed may not have stored the cluster version yet; the
    // restarted one learns it from the leader's next heartbeat. It must then be 3.2, never 3.3.
    const cv = await until(
      async () => {
        const v = JSON.parse((await raw(`${c.url(leader)}/version`)).text).kvcluster as string;
        return v === 'not_decided' ? undefined : v;
      },
      10_000,
      'the cluster version',
    );
    expect(cv).toBe('3.2.0');
  });

  it('a restarted member knows the leader, and answers healthy, only once the leader itself reached it (as etcd/raft)', async () => {
    const c = await cluster(3, '3.2');
    const status = (i: number) => new KvClient(c.url(i)).status();
    await until(
      async () => {
        const ls = await Promise.all(
          [0, 1, 2].map((i) =>
            status(i).then(
              (s) => s.leaderId,
              () => undefined,
            ),
          ),
        );
        return ls[0] && ls[0] !== '0' && ls.every((l) => l === ls[0]);
      },
      10_000,
      'one leader',
    );
    const ids = await Promise.all([0, 1, 2].map(async (i) => (await status(i)).memberId));
    const leader = ids.indexOf((await status(0)).leaderId!);
    const follower = [0, 1, 2].find((i) => i !== leader)!;
    // The leader's heartbeats stop naming it; no write is made, so no append reaches anyone either.
    writeFileSync(join(c.ms[leader]!.data, 'CONDITIONS.json'), JSON.stringify({ muteHeartbeats: true }));
    process.kill(c.procs[follower]!.pid!, 'SIGTERM');
    await c.procs[follower];
    let log = '';
    c.procs[follower] = c.run(follower);
    c.procs[follower].all.on('data', (b: Buffer) => (log += b.toString()));
    // Its own look at the peers already shows who claims to lead...
    await until(() => /elected leader/.test(log), 10_000, 'the restarted member to see the claimed leader');
    // ...but that is not hearing from the leader: no leader known, not healthy, nothing published.
    expect(await raw(`${c.url(follower)}/health`)).toMatchObject({ status: 503, text: '{"health": "false"}' });
    expect((await status(follower)).leaderId).toBe('0');
    expect(log).not.toMatch(/published \{Name:/);
    // The leader's next heartbeat names it: the member knows its leader, publishes itself, is healthy.
    rmSync(join(c.ms[leader]!.data, 'CONDITIONS.json'));
    await until(async () => (await raw(`${c.url(follower)}/health`)).status === 200, 10_000, 'healthy after a heartbeat');
    expect((await status(follower)).leaderId).toBe(ids[leader]);
    await until(() => /published \{Name:m\d ClientURLs:\[http:\/\/127\.0\.0\.1:\d+\]\} to cluster \d+/.test(log), 10_000, 'the published line');
  });

  it('a look at a member that went back from 3.3 to 3.2 (a roll-back) finds its gateway again: the remembered /v3beta answers 404, the prefix is discovered anew', async () => {
    const c = await cluster(3, '3.2');
    const spec = { name: 'm1', endpoint: c.url(0) };
    // One session for the whole test, as one command has: it remembers the prefixes learnt.
    const session = new KvSession();
    const healthy = async () => (await observeMember(spec, { session, timeoutMs: 3000 })).healthy || undefined;
    await until(healthy, 10_000, 'm1 healthy on 3.2');
    const seen: string[] = [];
    const look = () => observeMember(spec, { session, timeoutMs: 3000, debug: (l) => seen.push(l) });
    // The kv client's one line per exchange (the HTTP client's own --debug lines have no arrow).
    const exchanges = () => seen.filter((l) => l.includes('/maintenance/status') && l.includes(' → '));
    // The session has learnt /v3alpha on 3.2 (a busy machine can time a look out before it has): looked until it answers there
    await until(
      async () => {
        seen.length = 0;
        await look();
        return exchanges().some((l) => /\/v3alpha\/maintenance\/status → 200$/.test(l));
      },
      30_000,
      'the session knows /v3alpha',
    );
    seen.length = 0;
    const restart = async (v: string) => {
      process.kill(c.procs[0]!.pid!, 'SIGTERM');
      await c.procs[0];
      c.procs[0] = c.run(0, v);
      // Asked without the kv client, which would learn the new prefix from the version.
      await until(
        async () => {
          const h = await raw(`${c.url(0)}/health`).catch(() => ({ status: 0, text: '' }));
          return h.status === 200 && JSON.parse((await raw(`${c.url(0)}/version`)).text).kvserver.startsWith(v);
        },
        10_000,
        `m1 healthy on ${v}`,
      );
    };
    await restart('3.3');
    seen.length = 0;
    // Up from 3.2: the remembered /v3alpha answers a redirect to /v3beta, which is not followed (a
    // POST is never sent again on a redirect): the prefix is found again, then /v3beta is asked.
    expect((await look()).serverVersion).toBe('3.3.27');
    // (on a loaded machine the session may have found the prefix anew instead of through the remembered one)
    expect(exchanges()[0]).toMatch(/POST .*\/v3(alpha\/maintenance\/status → 308|\/maintenance\/status → 404|beta\/maintenance\/status → 200)$/);
    expect(exchanges().some((l) => l.includes('(via '))).toBe(false);
    expect(exchanges().at(-1)).toMatch(/POST .*\/v3beta\/maintenance\/status → 200$/);
    seen.length = 0;
    expect((await look()).healthy).toBe(true);
    expect(exchanges()).toEqual([expect.stringMatching(/POST .*\/v3beta\/maintenance\/status → 200$/)]);
    await restart('3.2');
    seen.length = 0;
    const back = await look();
    expect(back).toMatchObject({ reachable: true, healthy: true, serverVersion: '3.2.32' });
    expect(back.id).toMatch(/^\d{19,20}$/);
    expect(back.leaderId).toMatch(/^\d{19,20}$/);
    expect(seen.some((l) => /\/v3beta\/maintenance\/status → 404/.test(l))).toBe(true);
    // Remembered now: the next look is one round trip on /v3alpha, without a discovery.
    seen.length = 0;
    expect((await look()).healthy).toBe(true);
    expect(exchanges()).toEqual([expect.stringMatching(/\/v3alpha\/maintenance\/status → 200$/)]);
  });

  it('a member that stalls for less than an election timeout costs the cluster nothing: no leader change, writes through it succeed', async () => {
    // The CI flake: a member busy for a moment (GC, a stalled disk, a loaded CPU) missed a heartbeat,
    // the leader gave it up at once, lost its quorum and answered "no leader". etcd waits an election
    // timeout before giving a peer up; so does the member. SIGSTOP makes the stall, held until the other
    // member has seen a heartbeat go unanswered (a condition: a whole ping timeout, half the election
    // timeout, not a guess at a pause). No wall-clock figure is assumed: a busy machine may stretch any
    // pause past the election timeout, so each member says how long a peer was silent when it gives it up.
    // That is held to "never before an election timeout" in every round; a round with no give-up must have
    // cost the cluster nothing; a round the machine stretched into a give-up is done again, until three
    // stalls of each member were short ones (a condition with a deadline).
    const electionMs = 5000;
    const c = await cluster(3, '3.2', [0, 1], ['--election-timeout', String(electionMs)]);
    const logs = ['', ''];
    c.procs.forEach((p, i) => p.all?.on('data', (chunk: Buffer) => (logs[i] += chunk.toString())));
    const healthy = (i: number) =>
      raw(`${c.url(i)}/health`).then(
        (r) => r.status === 200,
        () => false,
      );
    await until(async () => (await healthy(0)) && (await healthy(1)), 15_000, 'two members healthy');
    const short = [0, 0];
    let stretched = 0;
    for (let round = 0; short[0]! < 3 || short[1]! < 3; round++) {
      if (round >= 30) throw new Error(`only ${short.join(' and ')} of the stalls stayed short in 30 rounds (${stretched} stretched by the machine)`);
      const stalled = short[0]! <= short[1]! ? 0 : 1;
      const observer = 1 - stalled;
      await until(async () => (await healthy(0)) && (await healthy(1)), 60_000, 'two members healthy before the stall');
      const leaderBefore = (await new KvClient(c.url(observer)).status()).leaderId;
      const from = logs.map((l) => l.length);
      process.kill(c.procs[stalled]!.pid!, 'SIGSTOP');
      const missed = new RegExp(`peer ${c.ms[stalled]!.name} (did not answer a heartbeat|has not answered for)`);
      await until(() => missed.test(logs[observer]!.slice(from[observer])), 60_000, 'the other member to see a heartbeat go unanswered');
      process.kill(c.procs[stalled]!.pid!, 'SIGCONT');
      const wrote = await new KvClient(c.url(observer)).put(`k${round}`, 'v').then(
        () => undefined,
        (err: Error) => err.message,
      );
      const since = logs.map((l, i) => l.slice(from[i])).join('');
      const gaveUp = [...since.matchAll(/has not answered for (\d+) ms \(election timeout (\d+) ms\)/g)];
      // never before an election timeout, however loaded the machine
      for (const m of gaveUp) expect(Number(m[1]), m[0]).toBeGreaterThanOrEqual(Number(m[2]));
      // the machine stretched the stall past an election timeout (a peer given up), or held the leader so long
      // that the write's own deadline passed: not a short stall, so it proves nothing either way; again
      if (gaveUp.length > 0 || wrote?.includes('request timed out')) {
        stretched++;
        continue;
      }
      // no peer given up: the stall cost the cluster nothing
      expect(wrote, `round ${round}: a write through the other member`).toBeUndefined();
      expect(since).toMatch(/did not answer a heartbeat \(silent for \d+ ms; kept until the election timeout/);
      expect(await healthy(0)).toBe(true);
      expect(await healthy(1)).toBe(true);
      expect((await new KvClient(c.url(observer)).status()).leaderId).toBe(leaderBefore);
      expect((await new KvClient(c.url(stalled)).get(`k${round}`))?.value).toBe('v');
      expect(since).not.toMatch(/lost quorum|stepped down|starting a new election/);
      short[stalled]!++;
    }
    for (const p of c.procs) process.kill(p.pid!, 'SIGTERM');
    await Promise.all(c.procs);
    expect(logs.join('')).toMatch(/elected leader/);
  });

  it('3.3 refuses a numeric auto-compaction-retention in its config file; a quoted one is fine; 3.2 cannot restart once the cluster is 3.3', async () => {
    const c = await cluster(1, '3.3', []);
    const conf = join(dir, 'conf.yml');
    writeFileSync(conf, 'auto-compaction-mode: periodic\nauto-compaction-retention: 24\n');
    const bad = await c.run(0, '3.3', ['--config-file', conf]);
    expect(bad.exitCode).toBe(1);
    expect(bad.all).toMatch(/auto-compaction-retention must be a string in 3.3/);
    writeFileSync(conf, 'auto-compaction-mode: periodic\nauto-compaction-retention: "24h"\n');
    const ok = c.run(0, '3.3', ['--config-file', conf]);
    await until(async () => (await raw(`${c.url(0)}/version`).catch(() => undefined))?.text.includes('3.3.0'), 10_000, 'cluster version 3.3');
    process.kill(ok.pid!, 'SIGTERM');
    await ok;
    mkdirSync(c.ms[0]!.data, { recursive: true });
    const old = await c.run(0, '3.2', []);
    expect(old.exitCode).toBe(1);
    expect(old.all).toMatch(/cluster cannot be downgraded/);
  });
});
