import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dict, emptyDict } from '@opsctl/shared/lookup.js';
import type { Kv, Persisted } from '@opsctl/etcd-sim/messages.js';
import { MemberStore } from '@opsctl/etcd-sim/store.js';

/**
 * The simulated member's store (packages/etcd-sim/src/store.ts): kv.json plus a log of changes. What a
 * load gives back is what was saved, however the saves fell between compactions; a torn last line,
 * a log of another kv.json and a kv.json without a log are each read as the member would need them.
 */
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sim-store-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const b64 = (s: string) => Buffer.from(s).toString('base64');
const fresh = (): Persisted => ({ revision: 1, kvs: emptyDict(), clusterVersion: '', clients: dict({ m1: 'http://127.0.0.1:1' }) });
/** The state as a comparable value (the field order of a replayed state may differ). */
const plain = (st: Persisted | undefined) => JSON.parse(JSON.stringify(st ?? null));

/** A put or delete as the member makes it: the state changed, then saved with the key it touched. */
function put(st: Persisted, s: MemberStore, key: string, value: string): void {
  const rev = ++st.revision;
  const prev = st.kvs[key];
  st.kvs[key] = { value: b64(value), create_revision: prev?.create_revision ?? rev, mod_revision: rev, version: (prev?.version ?? 0) + 1 } satisfies Kv;
  s.save(st, [key]);
}
function del(st: Persisted, s: MemberStore, key: string): void {
  st.revision++;
  delete st.kvs[key];
  s.save(st, [key]);
}

/** A run of writes: puts (new keys and overwrites), deletes, a downgrade set and ended, a client URL learned. */
function writes(st: Persisted, s: MemberStore, n: number, seed = 1): void {
  let x = seed;
  const rnd = (m: number) => (x = (x * 1103515245 + 12345) % 2 ** 31) % m;
  for (let i = 0; i < n; i++) {
    const key = b64(`k/${rnd(400)}`);
    if (rnd(10) === 0) del(st, s, key);
    else put(st, s, key, `value ${i} ${'x'.repeat(rnd(80))}`);
    if (i % 97 === 0) {
      st.downgrade = '3.5';
      st.clusterVersion = '3.5';
      s.save(st, []);
    }
    if (i % 97 === 50) {
      delete st.downgrade;
      st.clusterVersion = '3.6';
      st.clients[`m${rnd(3) + 1}`] = `http://127.0.0.1:${1000 + i}`;
      s.save(st, []);
    }
  }
}

describe('the simulated member store (kv.json + kv.log)', () => {
  it('after thousands of saves across compactions, a load gives the state as saved; the log stays bounded and kv.json moved on', () => {
    const st = fresh();
    const s = new MemberStore(dir);
    s.compact(st);
    writes(st, s, 3000);
    s.close();
    const got = new MemberStore(dir).load();
    expect(plain(got.state)).toEqual(plain(st));
    expect(got.skipped).toBeUndefined();
    // compacted on the way: kv.json is far past the start, the log no longer than its bound (twice kv.json, at least 64 KiB)
    expect(JSON.parse(readFileSync(join(dir, 'kv.json'), 'utf8')).revision).toBeGreaterThan(1000);
    expect(statSync(join(dir, 'kv.log')).size).toBeLessThanOrEqual(Math.max(64 * 1024, 2 * statSync(join(dir, 'kv.json')).size));
    expect(got.replayed).toBeGreaterThan(0);
  });

  it('each change is on disk when save returns (read by another store at any point, as after a kill -9)', () => {
    const st = fresh();
    const s = new MemberStore(dir);
    s.compact(st);
    for (let i = 0; i < 600; i++) {
      put(st, s, b64(`k/${i % 50}`), `v${i}`);
      if (i % 37 === 0) expect(plain(new MemberStore(dir).load().state)).toEqual(plain(st));
    }
  });

  it('a change saved without naming its keys writes the whole state: nothing it changed is lost', () => {
    const st = fresh();
    const s = new MemberStore(dir);
    s.compact(st);
    put(st, s, b64('a'), '1');
    // keys changed behind the store's back (as a copy of the leader's state does), then saved without them
    st.kvs[b64('b')] = { value: b64('2'), create_revision: 3, mod_revision: 3, version: 1 };
    delete st.kvs[b64('a')];
    st.revision = 3;
    s.save(st);
    expect(plain(new MemberStore(dir).load().state)).toEqual(plain(st));
    expect(JSON.parse(readFileSync(join(dir, 'kv.json'), 'utf8'))).toEqual(plain(st));
    expect(readFileSync(join(dir, 'kv.log'), 'utf8').split('\n').filter(Boolean)).toHaveLength(1);
  });

  it('a torn last line (killed mid-append) is ignored, never fatal; the next start compacts, so later saves are never written after it', () => {
    const st = fresh();
    const s = new MemberStore(dir);
    s.compact(st);
    writes(st, s, 120);
    const saved = plain(st);
    appendFileSync(join(dir, 'kv.log'), '{"m":{"revision":99999,"clusterVersion":"3.6","clients":{}},"k":{"a2V5":{"value":"');
    const again = new MemberStore(dir);
    const got = again.load();
    expect(plain(got.state)).toEqual(saved);
    expect(got.skipped).toMatch(/torn last line/);
    const st2 = got.state!;
    again.compact(st2);
    put(st2, again, b64('after'), 'restart');
    const third = new MemberStore(dir).load();
    expect(third.skipped).toBeUndefined();
    expect(plain(third.state)).toEqual(plain(st2));
  });

  it('a line that is not a change stops the replay there (the changes before it kept)', () => {
    const st = fresh();
    const s = new MemberStore(dir);
    s.compact(st);
    put(st, s, b64('a'), '1');
    const before = plain(st);
    appendFileSync(join(dir, 'kv.log'), '{"m":{"revision":"three"},"k":{}}\n');
    put(st, s, b64('b'), '2');
    const got = new MemberStore(dir).load();
    expect(plain(got.state)).toEqual(before);
    expect(got.replayed).toBe(1);
    expect(got.skipped).toMatch(/line 3 is not a change/);
  });

  it('a state written before the log existed (kv.json alone) loads as it is', () => {
    const old = {
      revision: 42,
      kvs: { [b64('old/key')]: { value: b64('v'), create_revision: 7, mod_revision: 40, version: 3 } },
      clusterVersion: '3.4',
      clients: { m1: 'http://127.0.0.1:9' },
    };
    writeFileSync(join(dir, 'kv.json'), JSON.stringify(old));
    const got = new MemberStore(dir).load();
    expect(plain(got.state)).toEqual(old);
    expect(got).toMatchObject({ replayed: 0 });
    expect(got.skipped).toBeUndefined();
  });

  it('a log of another kv.json is not replayed: killed between the two renames of a compaction, or a kv.json written by a restore', () => {
    const st = fresh();
    const s = new MemberStore(dir);
    s.compact(st);
    writes(st, s, 50);
    s.close();
    const oldLog = readFileSync(join(dir, 'kv.log'));
    // a compaction that renamed kv.json and was killed before the log's rename
    const s2 = new MemberStore(dir);
    s2.load();
    s2.compact(st);
    s2.close();
    writeFileSync(join(dir, 'kv.log'), oldLog);
    const got = new MemberStore(dir).load();
    expect(plain(got.state)).toEqual(plain(st));
    expect(got.skipped).toMatch(/another kv\.json/);
    // a restore's kv.json beside the old log
    const restored = { revision: 5, kvs: {}, clusterVersion: '', clients: {} };
    writeFileSync(join(dir, 'kv.json'), JSON.stringify(restored));
    expect(plain(new MemberStore(dir).load().state)).toEqual(restored);
  });

  it('a state that comes back to the very kv.json on disk: its log is emptied in place (no rename after which its changes would replay onto that kv.json twice)', () => {
    const st = fresh();
    const s = new MemberStore(dir);
    s.compact(st);
    const log = join(dir, 'kv.log');
    const inode = statSync(log).ino;
    // meta-only changes that return to the compacted state, then a compaction of that same state
    st.downgrade = '3.5';
    s.save(st, []);
    delete st.downgrade;
    s.save(st, []);
    // killed before that compaction: kv.json and the log load to the state
    expect(plain(new MemberStore(dir).load().state)).toEqual(plain(st));
    s.compact(st);
    expect(statSync(log).ino).toBe(inode);
    expect(readFileSync(log, 'utf8').split('\n').filter(Boolean)).toHaveLength(1);
    expect(plain(new MemberStore(dir).load().state)).toEqual(plain(st));
    put(st, s, b64('next'), 'v');
    expect(plain(new MemberStore(dir).load().state)).toEqual(plain(st));
    // any other state: a new log, renamed into place after kv.json
    s.compact(st);
    expect(statSync(log).ino).not.toBe(inode);
  });
});
