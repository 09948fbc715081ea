import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { MemberSpec } from '../../src/kv/cluster/cluster-file.js';
import type { MemberDriver } from '../../src/kv/drivers/driver.js';
import { notStartable } from '../../src/kv/wal/just-in-time.js';
import { v2Bare, v3Put, walOf } from '../helpers/wal-bytes.js';

const root = mkdtempSync(join(tmpdir(), 'opsctl-jit-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const m: MemberSpec = { name: 'kv1', endpoint: 'http://127.0.0.1:2379' };
const reading = (dir: string | undefined): MemberDriver =>
  ({ type: 'local', dataDirs: () => Promise.resolve(dir ? { dataDir: dir } : undefined) }) as unknown as MemberDriver;
const QGET = v2Bare('QGET', '/0/members');
const ATTRS = v2Bare('PUT', '/0/members/8e9e05c52164694d/attributes');

describe('the just-in-time check: what a start on the target will read of the WAL, right before it', () => {
  it('a /health QGET written after the newest snapshot: 3.6 and 3.7 are not started, saying what and why', async () => {
    const dir = walOf(root, 'qget', [{ entry: 5, payload: v3Put(10) }, { snapshot: 5 }, { entry: 6, payload: QGET }, { entry: 7, payload: ATTRS }]);
    expect(await notStartable(reading(dir), m, { version: '3.6' })).toBe(
      `kv1's WAL holds 1 v2 request (QGET ×1, PUT ×1) after its newest snapshot (raft index 5), which etcd 3.6 refuses to replay ("detected disallowed v2 WAL"): written since the plan's checks (a /health probe or a client of the v2 API); nothing was started on 3.6`,
    );
    expect(await notStartable(reading(dir), m, { version: '3.7' })).toMatch(
      /^kv1's WAL holds 2 v2 requests \(QGET ×1, PUT ×1\) .*etcd 3\.7 panics replaying \("unmarshal should never fail"\)/,
    );
  });

  it("etcd's own membership PUTs after the snapshot: 3.6 replays them, 3.7 does not", async () => {
    const dir = walOf(root, 'attrs', [{ snapshot: 3 }, { entry: 4, payload: ATTRS }, { entry: 5, payload: v2Bare('PUT', '/0/version') }]);
    expect(await notStartable(reading(dir), m, { version: '3.6' })).toBeUndefined();
    expect(await notStartable(reading(dir), m, { version: '3.7.3' })).toMatch(/holds 2 v2 requests \(PUT ×2\) after its newest snapshot \(raft index 3\)/);
  });

  it('v2 requests before the newest snapshot, a target before 3.6, or a data dir not read here: nothing found', async () => {
    const past = walOf(root, 'past', [{ entry: 1, payload: QGET }, { entry: 2, payload: ATTRS }, { snapshot: 2 }, { entry: 3, payload: v3Put(5) }]);
    expect(await notStartable(reading(past), m, { version: '3.7' })).toBeUndefined();
    const fresh = walOf(root, 'fresh', [{ entry: 1, payload: QGET }]);
    expect(await notStartable(reading(fresh), m, { version: '3.5' })).toBeUndefined();
    expect(await notStartable(reading(undefined), m, { version: '3.6' })).toBeUndefined();
    expect(await notStartable({ ...reading(fresh), capabilities: { etcdData: false } }, m, { version: '3.6' })).toBeUndefined();
  });
});

describe('the just-in-time check on a command-driver member whose process was read on this machine', () => {
  it('reads the WAL of the data dir its process ran with (clone-find.ts), and nothing where that was not read', async () => {
    const { CommandDriver } = await import('../../src/kv/drivers/command.js');
    const { execa } = await import('execa');
    const dir = walOf(root, 'command', [{ entry: 5, payload: v3Put(10) }, { snapshot: 5 }, { entry: 6, payload: QGET }]);
    const d = new CommandDriver({ stop: 'true', start: 'true', running: 'true' }, execa, {});
    expect(await notStartable(d, m, { version: '3.6' })).toBeUndefined();
    d.setClone({ paths: [], dirs: { kv1: { dataDir: dir } } });
    expect(await notStartable(d, m, { version: '3.6' })).toMatch(/^kv1's WAL holds 1 v2 request \(QGET ×1\) after its newest snapshot \(raft index 5\)/);
    expect(await notStartable(d, { ...m, name: 'kv2' }, { version: '3.6' })).toBeUndefined();
  });
});
