import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KvClient } from '../../src/kv/cluster/client.js';
import { KvSession } from '../../src/kv/cluster/session.js';
import { runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { requireProgram } from '../helpers/e2e.js';
import { startCluster, type SimulatedTestCluster } from '../framework/index.js';

const hasEtcd = requireProgram('etcd', '/usr/bin/etcd') && requireProgram('etcdctl', '/usr/bin/etcdctl');

describe.runIf(hasEtcd)('kv against real etcd (the built binary, a 3-member sandbox from /usr/bin/etcd)', () => {
  const { dir, cleanup } = tempConfigDir('opsctl-kv-etcd-');
  const env = { OPSCTL_CONFIG_DIR: dir };
  const opsctl = (...args: string[]) => runBin(args, { env, timeout: 120_000 });
  let endpoints: string[] = [];
  let c: SimulatedTestCluster | undefined;

  beforeAll(async () => {
    c = await startCluster({ members: 'simulated', size: 3, etcdBin: '/usr/bin', configDir: dir });
    endpoints = c.endpoints;
  }, 300_000);

  afterAll(async () => {
    await c?.destroy();
    cleanup();
  }, 300_000);

  it('kv health, version and status read real etcd (etcdserver names, uint64 ids exact)', async () => {
    const h = await opsctl('kv', 'health', '--json');
    expect(h.exitCode, String(h.stderr)).toBe(0);
    expect(JSON.parse(String(h.stdout)).every((m: any) => m.healthy)).toBe(true);
    const v = JSON.parse(String((await opsctl('kv', 'version', '--json')).stdout));
    expect(v.every((m: any) => m.server.startsWith('3.4.'))).toBe(true);
    const s = JSON.parse(String((await opsctl('kv', 'status', '--json')).stdout));
    expect(s.filter((m: any) => m.leader)).toHaveLength(1);
    // The gateway's member list agrees with status, digit for digit.
    const list = await new KvClient(endpoints[0]!).members();
    expect(s.map((m: any) => m.id).sort()).toEqual(list.map((m) => BigInt(m.id).toString(16)).sort());
  });

  it('kv snapshot save writes a verified snapshot (SHA-256 trailer, revision)', async () => {
    expect((await opsctl('kv', 'put', 'snap/key', 'v')).exitCode).toBe(0);
    const file = join(dir, 'backup.db');
    const r = await opsctl('kv', 'snapshot', 'save', file, '--json');
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const out = JSON.parse(String(r.stdout));
    expect(out.via).toBe('etcdctl');
    expect(BigInt(out.revision) >= BigInt(out.sampledRevision)).toBe(true);
    const data = readFileSync(file);
    expect(
      createHash('sha256')
        .update(data.subarray(0, data.length - 32))
        .digest()
        .equals(data.subarray(data.length - 32)),
    ).toBe(true);
    const gw = await opsctl('kv', 'snapshot', 'save', join(dir, 'gw.db'), '--via', 'gateway', '--json');
    expect(gw.exitCode, String(gw.stderr)).toBe(0);
    expect(JSON.parse(String(gw.stdout)).via).toBe('gateway');
  });

  it('a rolling restart through kv upgrade --allow-same-version loses no acknowledged write', async () => {
    for (let i = 0; i < 20; i++) expect((await opsctl('kv', 'put', `before/${i}`, `v${i}`)).exitCode).toBe(0);

    // A writer hitting the cluster every 50 ms, trying the next member when one does not answer.
    const acked: string[] = [];
    let failures = 0;
    let stop = false;
    const clients = endpoints.map((e) => new KvClient(e, { session: new KvSession(), timeoutMs: 2000 }));
    const writer = (async () => {
      for (let i = 0; !stop; i++) {
        const key = `writer/${String(i).padStart(5, '0')}`;
        for (let a = 0; a < clients.length; a++) {
          try {
            await clients[(i + a) % clients.length]!.put(key, `w${i}`);
            acked.push(key);
            break;
          } catch {
            failures++;
          }
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    })();

    // --settle auto (the default): a 3.4 member serves no v2 API and has written no v2 snapshot file yet;
    // its WAL tells its v2 writes (src/kv/wal/v2-data.ts), so no blind 2-minute wait between members
    const r = await opsctl('kv', 'upgrade', '--to', '3.4', '--yes', '--allow-same-version', '--target-bin', '/usr/bin', '--poll-interval', '100ms', '--json');
    stop = true;
    await writer;
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const report = JSON.parse(String(r.stdout));
    expect(report.status).toBe('done');
    expect(report.steps.filter((s: any) => s.kind === 'start')).toHaveLength(3);
    expect(report.snapshots.every((s: any) => s.bytes > 0)).toBe(true);
    const settles = report.steps.filter((s: any) => s.kind === 'settle');
    for (const st of settles.slice(0, 2)) expect(st.detail).toMatch(/^0 ms \(v2 data \d+ bytes \(kv\d's (WAL: \d+ v2 writes|newest snapshot file)/);
    // every member's KV hash (etcdctl endpoint hashkv at the lowest revision all have) compared before
    // the first stop and after each member, the writer running: one hash each time
    expect(report.consistency.map((c: any) => `${c.at.split(' is back')[0]}:${c.result}`)).toEqual([
      'before the first stop:ok',
      ...report.plan.map((m: any) => `after ${m.name}:ok`),
    ]);
    for (const c of report.consistency) {
      expect(c.hashes).toHaveLength(3);
      expect(new Set(c.hashes.map((x: any) => x.hash)).size, JSON.stringify(c)).toBe(1);
    }

    const h = await opsctl('kv', 'health');
    expect(h.exitCode).toBe(0);
    const c = new KvClient(endpoints[0]!, { session: new KvSession(), timeoutMs: 5000 });
    const before = await c.list('before/');
    expect(before).toHaveLength(20);
    const written = new Set((await c.list('writer/')).map((kv) => kv.key));
    expect(acked.length).toBeGreaterThan(5);
    const lost = acked.filter((k) => !written.has(k));
    expect(lost, `lost acknowledged writes (${failures} failed attempts)`).toEqual([]);
  }, 300_000);

  it('--defrag: each member defragmented right before its snapshot, the space freed shown (db size before and after)', async () => {
    // free pages: 1,500 values of 4 kB written twice, then compacted (physical) to the last revision
    const c = new KvClient(endpoints[0]!, { session: new KvSession(), timeoutMs: 5000 });
    const big = 'x'.repeat(4096);
    let rev = '';
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 1500; i += 50) {
        const done = await Promise.all(Array.from({ length: 50 }, (_, k) => c.put(`defrag/${i + k}`, `${round}${big}`)));
        rev = done.at(-1)!.revision;
      }
    }
    const compact = await fetch(`${endpoints[0]}/v3/kv/compaction`, { method: 'POST', body: JSON.stringify({ revision: rev, physical: true }) });
    expect(compact.status).toBe(200);
    const r = await opsctl(
      'kv',
      'upgrade',
      '--to',
      '3.4',
      '--yes',
      '--allow-same-version',
      '--target-bin',
      '/usr/bin',
      '--defrag',
      '--poll-interval',
      '100ms',
      '--json',
    );
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const report = JSON.parse(String(r.stdout));
    expect(report.planText).toMatch(/--defrag: each member is defragmented right before its snapshot/);
    expect(report.defrag.map((d: any) => d.member).sort()).toEqual(['kv1', 'kv2', 'kv3']);
    for (const d of report.defrag) expect(d.after, JSON.stringify(d)).toBeLessThan(d.before - 4_000_000);
    for (const m of ['kv1', 'kv2', 'kv3'])
      expect(String(r.stderr)).toMatch(new RegExp(`${m} defragmented: db [\\d.]+ MiB → [\\d.]+ (KiB|MiB) \\([\\d.]+ MiB freed\\)`));
    // each snapshot is the leader's, as the guides take it; the leader's own (it goes last) is of its defragmented db
    const leader = report.plan.at(-1).name;
    expect(report.snapshots.map((x: any) => x.from)).toEqual([leader, leader, leader]);
    const own = report.snapshots.at(-1);
    expect(own.bytes).toBeLessThanOrEqual(report.defrag.find((d: any) => d.member === leader).after + 1_000_000);
  }, 300_000);
});
