import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KvSession } from '../../src/kv/cluster/session.js';
import { SnapshotShelf } from '../../src/kv/snapshot/shelf.js';
import type { SnapshotResult } from '../../src/kv/snapshot/save.js';
import type { SnapshotStatus } from '../../src/kv/snapshot/status.js';
import { useKvGateway, type FakeMember } from '../helpers/kv-gateway-mock.js';
import { header, statusReply } from '../helpers/kv-gateway-shapes.js';

/**
 * The checks' snapshot of the leader kept for the first stop's own (src/kv/snapshot/shelf.ts), against fake
 * members: handed over only while the leader's raft index is the one it holds (committed and applied), verified
 * against the stopping member's own figures as a new one is, and removed whenever it is not handed over.
 */
const start = useKvGateway({ beforeEach, afterEach });
const defs = [
  { name: 'etcd1', version: '3.5.35', id: '10501334649042878790' },
  { name: 'etcd2', version: '3.5.35', id: '2282330823735441402' },
];
let work = '';
beforeEach(() => (work = mkdtempSync(join(tmpdir(), 'opsctl-shelf-'))));
afterEach(() => rmSync(work, { recursive: true, force: true }));

/** A snapshot as saveSnapshot leaves it after its checks (revision 40, 7 live keys), in a directory of its own. */
function kept(revision = '40'): SnapshotResult {
  const dir = mkdtempSync(join(work, 'kept-'));
  const file = join(dir, 'leader.db');
  writeFileSync(file, 'the bytes etcd sent');
  const status = { kind: 'etcd', file, revision, liveKeys: 7, totalKey: 9, sha256: 'ab'.repeat(32), verified: 'walked' } as unknown as SnapshotStatus;
  return { file, bytes: 19, revision, via: 'etcdctl', status, member: { revisionBefore: revision }, teed: false };
}

/** The leader at raft index `committed` (applied `applied`), the other member counting `keys` at revision 40. */
function routes(
  m: FakeMember | (typeof defs)[number],
  { committed, applied = committed, keys = 7, revision = 40 }: { committed: number; applied?: number; keys?: number; revision?: number },
) {
  const st = statusReply(m, { leader: defs[0]!.id, revision, raftIndex: committed });
  return {
    '/maintenance/status': { ...st, raftAppliedIndex: String(applied) },
    '/kv/range': { header: header(m, revision), count: String(keys) },
  };
}

const reach = { session: new KvSession(), timeoutMs: 5000 };

describe('kv upgrade: the checks snapshot kept for the first stop', () => {
  it('the raft index unchanged: moved to the stop snapshot file, verified against the stopping member (its count at the revision)', async () => {
    const gw = await start(defs.map((m) => ({ ...m, routes: routes(m, { committed: 111 }) })));
    const shelf = new SnapshotShelf();
    const snap = kept();
    shelf.offer({ snap, endpoint: gw.members[0]!.url, raftIndex: '111' });
    const file = join(work, 'snapshots', 'run-etcd2.db');
    const got = await shelf.take(reach, { file, figuresFrom: gw.members[1]!.url, minRevision: '40' });
    expect(got?.endpoint).toBe(gw.members[0]!.url);
    expect(got?.snap.file).toBe(file);
    expect(got?.snap.status.file).toBe(file);
    expect(got?.snap.member).toMatchObject({ keys: 7, revisionAfter: '40' });
    expect(readFileSync(file, 'utf8')).toBe('the bytes etcd sent');
    expect(existsSync(dirname(snap.file))).toBe(false);
    // the stopping member was asked its own figures: its count at the snapshot's revision, its revision after
    expect(gw.paths()).toEqual(expect.arrayContaining(['etcd1 /maintenance/status', 'etcd2 /kv/range', 'etcd2 /maintenance/status']));
    // handed over once
    expect(await shelf.take(reach, { file: join(work, 'again.db'), figuresFrom: gw.members[1]!.url, minRevision: '40' })).toBeUndefined();
  });

  for (const [what, leader, want] of [
    ['a proposal since (the raft index moved)', { committed: 112 }, '40'],
    ['an entry committed and not yet applied', { committed: 111, applied: 110 }, '40'],
    ['the member holds a later revision', { committed: 111 }, '41'],
  ] as const) {
    it(`${what}: not handed over, and the kept file removed`, async () => {
      const gw = await start(defs.map((m, i) => ({ ...m, routes: routes(m, i === 0 ? leader : { committed: 111 }) })));
      const shelf = new SnapshotShelf();
      const snap = kept();
      const lines: string[] = [];
      shelf.offer({ snap, endpoint: gw.members[0]!.url, raftIndex: '111' });
      const file = join(work, 'run-etcd2.db');
      expect(await shelf.take({ ...reach, debug: (l) => lines.push(l) }, { file, figuresFrom: gw.members[1]!.url, minRevision: want })).toBeUndefined();
      expect(existsSync(file)).toBe(false);
      expect(existsSync(dirname(snap.file))).toBe(false);
      expect(lines.join('\n')).toMatch(/the checks' snapshot of .* not used for .*run-etcd2\.db: (raft index|revision 40 < 41)/);
    });
  }

  it('the stopping member counts other keys at the revision: refused as a new snapshot would be, nothing left', async () => {
    const gw = await start(defs.map((m, i) => ({ ...m, routes: routes(m, { committed: 111, keys: i === 1 ? 8 : 7 }) })));
    const shelf = new SnapshotShelf();
    const snap = kept();
    const lines: string[] = [];
    shelf.offer({ snap, endpoint: gw.members[0]!.url, raftIndex: '111' });
    const file = join(work, 'run-etcd2.db');
    expect(await shelf.take({ ...reach, debug: (l) => lines.push(l) }, { file, figuresFrom: gw.members[1]!.url, minRevision: '40' })).toBeUndefined();
    expect(lines.join('\n')).toMatch(/holds 7 live keys at revision 40; the member counts 8/);
    expect(existsSync(file)).toBe(false);
    expect(existsSync(dirname(snap.file))).toBe(false);
  });

  it('a newer offer replaces the older (its file removed); clear() removes what was not handed over', () => {
    const shelf = new SnapshotShelf();
    const a = kept();
    const b = kept();
    shelf.offer({ snap: a, endpoint: 'http://127.0.0.1:1', raftIndex: '1' });
    shelf.offer({ snap: b, endpoint: 'http://127.0.0.1:1', raftIndex: '2' });
    expect(existsSync(a.file)).toBe(false);
    expect(existsSync(b.file)).toBe(true);
    shelf.clear();
    expect(existsSync(dirname(b.file))).toBe(false);
  });
});
