import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ClusterSpec, SandboxSpec } from '../../src/kv/cluster/cluster-file.js';
import { keptDir, stagedDir, swapLocalData } from '../../src/kv/drivers/restore-data.js';
import { writeRecord } from '../../src/kv/journal/journal.js';
import { newRestoreRecord, readRestore, restorePath, restoreProgress, type RestoreRecord } from '../../src/kv/journal/restore-record.js';
import { recordedRestore } from '../../src/kv/restore/restore-resume.js';
import type { SnapshotStatus } from '../../src/kv/snapshot/status.js';

let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'opsctl-restore-record-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const SHA_A = 'a'.repeat(64);
const SHA_B = 'b'.repeat(64);
const cluster = { key: 'abcdef012345', members: [{ name: 'kv1' }, { name: 'kv2' }] } as unknown as ClusterSpec;
const snap = (sha256: string, file = '/s/a.db') => ({ sha256, file, revision: '7', liveKeys: 5 }) as unknown as SnapshotStatus;

function record(over: Partial<RestoreRecord> = {}): RestoreRecord {
  const r = newRestoreRecord(
    {
      id: '20260101T000000-ab12',
      cluster: cluster.key,
      snapshot: { file: '/s/a.db', sha256: SHA_A, revision: '7', liveKeys: 5 },
      to: '3.2',
      token: 'opsctl-restore-20260101T000000-ab12',
      members: ['kv1', 'kv2'].map((name, i) => ({
        name,
        endpoint: `http://127.0.0.1:${2379 + i}`,
        peerUrl: `http://127.0.0.1:${2380 + i}`,
        target: { version: '3.2' },
      })),
    },
    ['kv2', 'kv1'],
    0,
  );
  return { ...r, ...over };
}
const save = (r: RestoreRecord) => writeRecord(restorePath(dir, cluster.key), r, 0);
const mark = (r: RestoreRecord, done: string[], running?: string) => {
  for (const s of r.steps) s.status = done.includes(s.id) ? 'done' : s.id === running ? 'running' : 'pending';
  return r;
};
const ask = (o: { snapshot?: string; toVersion?: string; again?: boolean; targetBin?: string }, s = snap(SHA_A), notes: string[] = []) =>
  recordedRestore({ dataDir: dir, cluster, snapshot: o.snapshot ?? '/s/a.db', ...o }, s, notes);

describe("kv restore's journal", () => {
  it('has the steps in the order they run: prepare, the stops in the given order (leader first), the swaps, the starts, the check', () => {
    expect(record().steps.map((s) => s.id)).toEqual([
      'prepare',
      'stop/kv2',
      'stop/kv1',
      'restore-data/kv1',
      'restore-data/kv2',
      'start/kv1',
      'start/kv2',
      'verify',
    ]);
    const r = mark(record(), ['prepare', 'stop/kv2', 'stop/kv1', 'restore-data/kv1'], 'restore-data/kv2');
    expect(restoreProgress(r)).toBe('stopped: kv2, kv1; data restored: kv1; started: none; next: restore-data/kv2 (begun)');
  });

  it('is read back as written; one truncated or naming a member it does not have is refused naming the file, never taken for "no restore"', async () => {
    const file = restorePath(dir, cluster.key);
    expect(readRestore(file)).toBeUndefined();
    await save(record());
    expect(readRestore(file)?.id).toBe('20260101T000000-ab12');
    writeFileSync(file, '{"version":1,"kind":"rest');
    expect(() => readRestore(file)).toThrow(`the kv restore journal ${file} cannot be used: not JSON (truncated?)`);
    const bad = record();
    bad.steps.push({ id: 'start/kv9', member: 'kv9', kind: 'start', status: 'pending' });
    writeFileSync(file, JSON.stringify(bad));
    expect(() => readRestore(file)).toThrow(/steps\.8\.member: step start\/kv9 names member "kv9", which is not one of the restore's members/);
  });

  it('the identical command resumes a half-done restore (its run); a finished one is not redone unless --again; another version of a done one is a new restore', async () => {
    await save(mark(record(), ['prepare', 'stop/kv2'], 'stop/kv1'));
    const notes: string[] = [];
    expect(ask({}, snap(SHA_A), notes).resume?.id).toBe('20260101T000000-ab12');
    expect(notes[0]).toMatch(
      /^resuming the restore 20260101T000000-ab12 begun .* \(stopped: kv2; data restored: none; started: none; next: stop\/kv1 \(begun\)\)$/,
    );
    expect(ask({ toVersion: '3.2' }).resume).toBeDefined();

    const done = mark(
      record(),
      record().steps.map((s) => s.id),
    );
    done.status = 'done';
    await save(done);
    expect(ask({}).done?.id).toBe('20260101T000000-ab12');
    const again: string[] = [];
    expect(ask({ again: true }, snap(SHA_A), again)).toEqual({ recordAt: expect.any(String) });
    expect(again[0]).toMatch(/^--again: \/s\/a\.db was restored already \(run 20260101T000000-ab12, .*\); restored again, every write since lost$/);
    expect(ask({ toVersion: '3.3' }).done).toBeUndefined();
    expect(ask({}, snap(SHA_B, '/s/b.db')).done).toBeUndefined();
  });

  it('another snapshot, version or release while members are stopped is refused naming both; before any stop the old restore is given up', async () => {
    await save(mark(record(), ['prepare', 'stop/kv2', 'stop/kv1', 'restore-data/kv1'], 'restore-data/kv2'));
    expect(() => ask({ snapshot: '/s/b.db' }, snap(SHA_B, '/s/b.db'))).toThrow(
      'kv restore refused before any change: a restore of /s/a.db (run 20260101T000000-ab12, begun 1970-01-01T00:00:00.000Z) is half done: stopped: kv2, kv1; data restored: kv1; started: none; next: restore-data/kv2 (begun); this command restores /s/b.db (sha256 bbbbbbbbbbbbbbbb…), that one /s/a.db (sha256 aaaaaaaaaaaaaaaa…)',
    );
    expect(() => ask({ toVersion: '3.3' })).toThrow(/this command starts the members on 3\.3, that one on 3\.2$/);
    expect(() => ask({ targetBin: '/opt/etcd-3.2' })).toThrow(/this command starts \/opt\/etcd-3\.2\/etcd, that one \(the driver’s own\)$/);
    const caught = (() => {
      try {
        return ask({ toVersion: '3.3' });
      } catch (err) {
        return err;
      }
    })();
    expect(caught).toMatchObject({ code: 'restore_half_done', hint: expect.stringContaining(`move ${restorePath(dir, cluster.key)} aside`) });

    await save(mark(record(), ['prepare'], 'stop/kv2'));
    expect(ask({}, snap(SHA_A)).resume).toBeDefined();
    await save(mark(record(), ['prepare']));
    const notes: string[] = [];
    expect(ask({ snapshot: '/s/b.db' }, snap(SHA_B, '/s/b.db'), notes).supersedes?.id).toBe('20260101T000000-ab12');
    expect(notes[0]).toMatch(/never stopped a member: given up for this one, its staged data dropped$/);
  });
});

describe("a local member's data swap (kv restore), safe to redo for the same run", () => {
  const sandbox = { token: 'old' } as unknown as SandboxSpec;
  const member = () => ({ name: 'kv1', endpoint: 'http://x', dataDir: join(dir, 'data'), configFile: join(dir, 'kv1.conf.yml') });
  const req = { snapshot: '', name: 'kv1', peerUrl: '', initialCluster: '', token: 'opsctl-restore-R1', run: 'R1', target: { version: '3.2' } };
  const put = (d: string, text: string) => (mkdirSync(d, { recursive: true }), writeFileSync(join(d, 'kv.json'), text));
  const read = (d: string) => readFileSync(join(d, 'kv.json'), 'utf8');

  it('swaps once: a second call (the resume after a kill) sees it made; a kill between the two renames is finished; nothing staged fails leaving the data as it is', () => {
    const m = member();
    put(m.dataDir, 'old');
    put(stagedDir(m.dataDir, 'R1'), 'restored');
    writeFileSync(m.configFile, 'name: kv1\ninitial-cluster-token: old\n');
    expect(swapLocalData(sandbox, m, req)).toBe(`restored into ${m.dataDir}; old data kept in ${keptDir(m.dataDir, 'R1')}`);
    expect(swapLocalData(sandbox, m, req)).toBe(`restored into ${m.dataDir} (by this restore already); old data kept in ${keptDir(m.dataDir, 'R1')}`);
    expect([read(m.dataDir), read(keptDir(m.dataDir, 'R1')), existsSync(stagedDir(m.dataDir, 'R1'))]).toEqual(['restored', 'old', false]);
    expect(readFileSync(m.configFile, 'utf8')).toContain('initial-cluster-token: opsctl-restore-R1');

    // killed between the renames: the old data aside, the restored still staged
    const r2 = { ...req, run: 'R2' };
    put(stagedDir(m.dataDir, 'R2'), 'restored again');
    rmSync(keptDir(m.dataDir, 'R1'), { recursive: true });
    put(keptDir(m.dataDir, 'R2'), 'restored');
    rmSync(m.dataDir, { recursive: true });
    swapLocalData(sandbox, m, r2);
    expect([read(m.dataDir), read(keptDir(m.dataDir, 'R2'))]).toEqual(['restored again', 'restored']);

    expect(() => swapLocalData(sandbox, m, { ...req, run: 'R3' })).toThrow(`member kv1: the restored data ${stagedDir(m.dataDir, 'R3')} is missing`);
    expect(read(m.dataDir)).toBe('restored again');
  });
});

describe('kv restore: the problems found before any stop, each said once', () => {
  it('the same words for several members are one line naming them; different words stay apart, in the order met', async () => {
    const { byMember } = await import('../../src/kv/restore/restore.js');
    const none = 'the driver has no restore template (driver.restore in the cluster file, or --restore-cmd)';
    expect(
      byMember(
        ['kv1', 'kv2', 'kv3'].map((member) => ({ member, text: none })),
        3,
      ),
    ).toEqual([`every member (kv1, kv2, kv3): ${none}`]);
    expect(
      byMember(
        [
          { member: 'kv1', text: 'no etcd 3.3 binary is known' },
          { member: 'kv2', text: 'host unreachable' },
          { member: 'kv3', text: 'no etcd 3.3 binary is known' },
        ],
        3,
      ),
    ).toEqual(['members kv1, kv3: no etcd 3.3 binary is known', 'member kv2: host unreachable']);
    expect(byMember([{ member: 'kv1', text: 'x' }], 1)).toEqual(['member kv1: x']);
  });
});
