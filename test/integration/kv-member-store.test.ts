import { execa, type ResultPromise } from 'execa';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../src/kv/sandbox/sandbox.js';
import { until } from '../helpers/kv.js';

/**
 * The simulated member's state on disk (packages/etcd-sim/src/store.ts: member/kv.json plus member/kv.log,
 * compacted as it grows) as a member process lives with it: killed with SIGKILL in the middle of a stream
 * of writes, it starts again with every write it acknowledged; a torn last record is ignored; the state
 * after a restart is the state before it, however many compactions lay between; a data dir written before
 * the log existed loads. One member alone (its own quorum): nothing comes back from a peer, only from disk.
 */
const MEMBER = process.env.OPSCTL_KV_MEMBER ?? fileURLToPath(new URL('../../dist/kv-member.cjs', import.meta.url));
const started: ResultPromise[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const p of started.splice(0)) {
    p.kill('SIGKILL');
    await p.catch(() => undefined);
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const b64 = (s: string) => Buffer.from(s).toString('base64');
const text = (s: string) => Buffer.from(s, 'base64').toString();
const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean).length;

/** A one-member cluster's layout: its data dir and ports, kept across its restarts. */
async function layout() {
  const dir = mkdtempSync(join(tmpdir(), 'kv-member-store-'));
  dirs.push(dir);
  const m = { data: join(dir, 'm1'), client: await freePort(), peer: await freePort() };
  const url = `http://127.0.0.1:${m.client}`;
  const peer = `http://127.0.0.1:${m.peer}`;
  /** Starts the member and waits until it is healthy (it leads itself); its process in a box (an async function would wait for it). */
  const start = async () => {
    const p = execa(
      process.execPath,
      [
        MEMBER,
        '--kv-version',
        '3.4',
        '--name',
        'm1',
        '--data-dir',
        m.data,
        '--listen-client-urls',
        url,
        '--listen-peer-urls',
        peer,
        '--initial-cluster',
        `m1=${peer}`,
        '--heartbeat-interval',
        '100',
      ],
      { reject: false, all: true },
    );
    started.push(p);
    await until(async () => (await fetch(`${url}/health`).catch(() => undefined))?.status === 200 || p.exitCode !== null, 30_000, 'the member healthy');
    expect(p.exitCode).toBeNull();
    return { p };
  };
  /** SIGKILL, and its end. */
  const kill = async ({ p }: { p: ResultPromise }) => {
    process.kill(p.pid!, 'SIGKILL');
    const r = await p;
    expect(r.signal).toBe('SIGKILL');
    return r;
  };
  const call = async (path: string, body: unknown) => {
    const r = await fetch(`${url}/v3${path}`, { method: 'POST', body: JSON.stringify(body), signal: AbortSignal.timeout(5000) });
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${await r.text()}`);
    return (await r.json()) as { header: { revision: string }; kvs?: Array<{ key: string; value: string }> };
  };
  const put = (key: string, value: string) => call('/kv/put', { key: b64(key), value: b64(value) });
  const del = (key: string) => call('/kv/deleterange', { key: b64(key) });
  /** Every key and its value. */
  const all = async () => new Map(((await call('/kv/range', { key: 'AA==', range_end: 'AA==' })).kvs ?? []).map((kv) => [text(kv.key), text(kv.value)]));
  const state = async () => (await fetch(`${peer}/peer/state`)).json() as Promise<Record<string, unknown> & { revision: number }>;
  const file = (name: string) => join(m.data, 'member', name);
  return { m, start, kill, put, del, all, state, file, call };
}

/** Writes enough to pass the log's bound (64 KiB) several times: new keys, overwrites, deletes. */
async function writes(c: Awaited<ReturnType<typeof layout>>, n: number) {
  for (let i = 0; i < n; i++) {
    const key = `k/${i % 300}`;
    if (i % 11 === 10) await c.del(`k/${(i * 7) % 300}`);
    else await c.put(key, `value ${i} ${'x'.repeat(i % 90)}`);
  }
}

describe('the simulated member keeps its state in kv.json and a log of changes', () => {
  it('killed with SIGKILL mid-stream of writes: started again, every acknowledged put and delete is there, the revision at least the last acknowledged', async () => {
    const c = await layout();
    const p = await c.start();
    const acked = new Map<string, string | undefined>();
    let lastRevision = 0;
    let stop = false;
    // four writers, each its own keys: a put, and every fifth time a delete of a key it put before
    const worker = async (w: number) => {
      for (let i = 0; !stop; i++) {
        try {
          const key = `w${w}/${i}`;
          if (i % 5 === 4) {
            const gone = `w${w}/${i - 2}`;
            const r = await c.del(gone);
            acked.set(gone, undefined);
            lastRevision = Math.max(lastRevision, Number(r.header.revision));
          } else {
            const r = await c.put(key, `v${i}`);
            acked.set(key, `v${i}`);
            lastRevision = Math.max(lastRevision, Number(r.header.revision));
          }
        } catch {
          return; // the member is gone
        }
      }
    };
    const workers = Promise.all([0, 1, 2, 3].map(worker));
    await until(() => acked.size >= 1500, 120_000, '1500 acknowledged writes');
    // killed while the writers still write (several compactions behind it: kv.json is far past the start)
    expect(JSON.parse(readFileSync(c.file('kv.json'), 'utf8')).revision).toBeGreaterThan(200);
    await c.kill(p);
    stop = true;
    await workers;
    await c.start();
    const now = await c.all();
    const lost = [...acked].filter(([k, v]) => now.get(k) !== v);
    expect(lost).toEqual([]);
    expect((await c.state()).revision).toBeGreaterThanOrEqual(lastRevision);
  }, 240_000);

  it('the state after a restart is the state before it, across compactions; a clean stop leaves it all in kv.json', async () => {
    const c = await layout();
    const p = await c.start();
    await writes(c, 1200);
    // compacted while it ran, and changes in the log since (a write more if the last one compacted)
    if (lines(c.file('kv.log')) < 2) await c.put('one/more', 'v');
    const before = await c.state();
    expect(JSON.parse(readFileSync(c.file('kv.json'), 'utf8')).revision).toBeGreaterThan(200);
    expect(lines(c.file('kv.log'))).toBeGreaterThan(1);
    await c.kill(p);
    const q = await c.start();
    expect(await c.state()).toEqual(before);
    // SIGTERM: the whole state written to kv.json, the log only its first line
    process.kill(q.p.pid!, 'SIGTERM');
    await q.p;
    expect(JSON.parse(readFileSync(c.file('kv.json'), 'utf8'))).toEqual(before);
    expect(lines(c.file('kv.log'))).toBe(1);
  }, 240_000);

  it('a torn last record (killed mid-append) is ignored: the member starts with the state before it, and what it writes next survives the next kill', async () => {
    const c = await layout();
    const p = await c.start();
    await writes(c, 200);
    const before = await c.state();
    await c.kill(p);
    appendFileSync(c.file('kv.log'), `{"m":{"revision":${before.revision + 1},"clusterVersion":"3.4","clients":{}},"k":{"${b64('torn')}":{"value":"dG9y`);
    const q = await c.start();
    expect(await c.state()).toEqual(before);
    await c.put('after/torn', 'kept');
    const r = await c.kill(q);
    expect(r.all).toMatch(/kv\.log: a torn last line/);
    await c.start();
    expect((await c.all()).get('after/torn')).toBe('kept');
    expect((await c.all()).has('torn')).toBe(false);
  }, 240_000);

  it('a data dir written before the log existed (kv.json alone) loads; a log of another kv.json beside it is not replayed', async () => {
    const c = await layout();
    mkdirSync(join(c.m.data, 'member'), { recursive: true });
    const old = {
      revision: 42,
      kvs: { [b64('old/key')]: { value: b64('old value'), create_revision: 7, mod_revision: 40, version: 3 } },
      clusterVersion: '3.4',
      clients: { m1: 'http://127.0.0.1:1' },
    };
    writeFileSync(c.file('kv.json'), JSON.stringify(old));
    const p = await c.start();
    expect(await c.all()).toEqual(new Map([['old/key', 'old value']]));
    expect((await c.state()).revision).toBe(42);
    await c.put('new/key', 'v');
    await c.kill(p);
    // a restore's kv.json written over the member's, its log left beside it
    writeFileSync(c.file('kv.json'), JSON.stringify(old));
    await c.start();
    expect(await c.all()).toEqual(new Map([['old/key', 'old value']]));
    expect((await c.state()).revision).toBe(42);
  }, 240_000);
});
