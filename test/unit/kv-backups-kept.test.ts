import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { MemberSpec } from '../../src/kv/cluster/cluster-file.js';
import type { HostShellResult } from '../../src/kv/drivers/driver.js';
import { copyPathOf, measureHostCopy, parseCopySize, shellWords } from '../../src/kv/drivers/host-copy.js';
import { keepRunRecord } from '../../src/kv/journal/copies.js';
import type { DataCopy, Journal } from '../../src/kv/journal/journal.js';
import { backupsMade } from '../../src/kv/report/backups.js';
import { dropSnapshots, KEPT_BY_DEFAULT } from '../../src/kv/upgrade/backup-guard.js';

const RUN = '20260101T000000-abcdef';
const m1: MemberSpec = { name: 'm1', endpoint: 'https://10.0.0.1:2379' };
const ok = (stdout: string): HostShellResult => ({ stdout, stderr: '', exitCode: 0 });

describe("where a backup template's copy is, from its own words", () => {
  it('a path argument holding {run}: the last absolute one', () => {
    expect(copyPathOf(['ssh', '10.0.0.1', 'sudo', 'cp', '-a', '/var/lib/etcd', `/var/lib/etcd.bak-${RUN}`], RUN)).toBe(`/var/lib/etcd.bak-${RUN}`);
    // a redirection's target is not the copy, though it holds the {run}
    expect(copyPathOf(['sh', '-c', `cp -a /d /b/${RUN}/x >/tmp/log-${RUN} 2>> /tmp/err-${RUN}`], RUN)).toBe(`/b/${RUN}/x`);
  });

  it("inside a script argument (sh -c '…', ssh's remote line), quotes and escapes read as a shell reads them", () => {
    expect(copyPathOf(['sh', '-c', `cp -a '/srv/my data' '/srv/my data.bak-${RUN}' && sync`], RUN)).toBe(`/srv/my data.bak-${RUN}`);
    expect(copyPathOf(['ssh', 'h', `sudo cp -a "/a b" "/a b.bak-${RUN}"`], RUN)).toBe(`/a b.bak-${RUN}`);
    expect(shellWords(`a 'b c' "d \\"e\\"" f\\ g;h >out 2>&1 i`)).toEqual(['a', 'b c', 'd "e"', 'f g', 'h', 'i']);
  });

  it('no absolute path holding the {run}: not known (never a guess)', () => {
    expect(copyPathOf(['kvctl', 'backup', 'm1', RUN], RUN)).toBeUndefined();
    expect(copyPathOf(['cp', '-a', 'data', `data.bak-${RUN}`], RUN)).toBeUndefined();
    expect(copyPathOf(['cp', '-a', '/var/lib/etcd', '/var/lib/etcd.bak'], RUN)).toBeUndefined();
  });
});

describe("a copy's size read on its host", () => {
  it("du's bytes, POSIX du's KiB, a copy gone, a host not reached, nothing printed", () => {
    expect(parseCopySize(ok('opsctl-size: bytes 123456\n'), '/p', 'h')).toEqual({ bytes: 123456 });
    expect(parseCopySize(ok('opsctl-size: kib 10\n'), '/p', 'h')).toEqual({ bytes: 10240 });
    expect(parseCopySize(ok('opsctl-size: none\n'), '/p', 'h')).toEqual({ why: '/p is not on h (removed there, or the backup template wrote elsewhere)' });
    expect(parseCopySize({ stdout: '', stderr: '', failed: 'ssh: connect refused' }, '/p', 'h')).toEqual({ why: 'h not reached: ssh: connect refused' });
    expect(parseCopySize({ stdout: '', stderr: 'du: permission denied\n', exitCode: 1 }, '/p', 'h')).toEqual({
      why: 'du of /p on h printed no size: du: permission denied',
    });
  });

  it('measured through the host shell with the path as one quoted word; a template without the path or a host shell that throws says why', async () => {
    const sent: string[] = [];
    const shell = { hostShell: (_m: MemberSpec, script: string) => (sent.push(script), Promise.resolve(ok('opsctl-size: bytes 42\n'))) };
    const path = `/var/lib/it's etcd.bak-${RUN}`;
    expect(await measureHostCopy(shell, m1, ['sh', '-c', `cp -a x "${path}"`], RUN, '10.0.0.1', 1000)).toEqual({ path, bytes: 42 });
    expect(sent[0]).toContain(`p='/var/lib/it'\\''s etcd.bak-${RUN}'`);
    const none = await measureHostCopy(shell, m1, ['kvctl', 'backup', 'm1', RUN], RUN, '10.0.0.1', 1000);
    expect(none).toEqual({
      why: `the backup template (\`kvctl backup m1 ${RUN}\`) names no absolute path holding {run} ${RUN}: where its copy is cannot be told from here`,
    });
    const down = { hostShell: () => Promise.reject(new Error('no route to host')) };
    expect(await measureHostCopy(down, m1, ['cp', '/a', `/a.${RUN}`], RUN, '10.0.0.1', 1000)).toEqual({
      path: `/a.${RUN}`,
      why: '10.0.0.1 not reached: no route to host',
    });
    expect(await measureHostCopy({}, m1, ['cp', '/a', `/a.${RUN}`], RUN, '10.0.0.1', 1000)).toEqual({
      path: `/a.${RUN}`,
      why: `the driver has no way onto 10.0.0.1 to measure /a.${RUN}`,
    });
  });
});

describe('what a finished run keeps, and what it says it made and holds', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  const snaps = (d: string): Journal['snapshots'] =>
    ['m1', 'm2', 'm3'].map((m) => {
      const file = join(d, `${RUN}-${m}.db`);
      writeFileSync(file, 'x'.repeat(100));
      return { member: m, file, revision: '9', bytes: 100 };
    });

  it('every snapshot but the restore point removed and marked, once; --keep-backups keeps them all', async () => {
    dir = mkdtempSync(join(tmpdir(), 'opsctl-kept-'));
    const j = { snapshots: snaps(dir), restorePoint: undefined as { file: string } | undefined };
    j.restorePoint = { file: j.snapshots[1]!.file };
    const now = () => Date.parse('2026-01-01T00:00:00Z');
    const kept = await dropSnapshots({ o: { keepBackups: true, now }, journal: j as never });
    expect(kept).toEqual({ removed: 0, bytes: 0 });
    expect(j.snapshots.every((s) => existsSync(s.file) && !s.removed)).toBe(true);
    expect(await dropSnapshots({ o: { now }, journal: j as never })).toEqual({ removed: 2, bytes: 200 });
    expect(j.snapshots.map((s) => [existsSync(s.file), s.removed])).toEqual([
      [false, '2026-01-01T00:00:00.000Z'],
      [true, undefined],
      [false, '2026-01-01T00:00:00.000Z'],
    ]);
    // a resume after a kill: nothing left to remove
    expect(await dropSnapshots({ o: { now }, journal: j as never })).toEqual({ removed: 0, bytes: 0 });
    // an older record without a restore point: its first snapshot is the one kept
    const older = { snapshots: snaps(dir) };
    await dropSnapshots({ o: { now }, journal: older });
    expect(older.snapshots.map((s) => existsSync(s.file))).toEqual([true, false, false]);
  });

  it('made counts every snapshot and copy; held what is here and the copies still on the hosts; sizes not known are counted, not summed', () => {
    const copies: DataCopy[] = [
      { member: 'm1', run: RUN, status: 'done', at: '', host: 'h1', path: '/b1', bytes: 1000 },
      { member: 'm2', run: RUN, status: 'done', at: '', host: 'h2', sizeUnknown: 'h2 not reached' },
      { member: 'm3', run: RUN, status: 'done', at: '', host: 'h3', path: '/b3', bytes: 3000 },
      { member: 'm3', run: `${RUN}.2`, status: 'removed', at: '' },
    ];
    const found = [
      {
        cluster: 'c',
        run: RUN,
        kind: 'upgrade' as const,
        date: '',
        bytes: 4096,
        items: [{ kind: 'snapshot' as const, member: 'm1', path: `/d/kv/snapshots/c/${RUN}-m1.db`, bytes: 4096, date: '' }],
      },
    ];
    const taken: Journal['snapshots'] = ['m1', 'm2', 'm3'].map((m, i) => ({
      member: m,
      file: `/f${m}`,
      revision: '1',
      bytes: 4000,
      ...(i ? { removed: 'x' } : {}),
    }));
    // m3's copy removed by the drop-backup template once the hop was done
    const fates = [{ member: 'm3', run: RUN, removed: true, detail: 'rm done' }];
    const doc = backupsMade(found, [RUN], [], fates, copies, taken);
    expect(doc.made).toEqual({ bytes: 12_000 + 4000, snapshots: 3, copies: 3, onHosts: 3, unknown: 1 });
    expect(doc.held).toEqual({ bytes: 4096 + 1000, snapshots: 1, copies: 2, onHosts: 2, unknown: 1 });
    expect(doc.keeps).toBe(KEPT_BY_DEFAULT);
    expect(doc.remote).toContain('m1 ({run} 20260101T000000-abcdef): done; 1000 bytes at /b1');
    expect(doc.remote).toContain('m2 ({run} 20260101T000000-abcdef): done; size not known: h2 not reached');
    expect(doc.remote).not.toContain('m3');
  });

  it("a run's record is kept when the next run's journal replaces it, while it names a copy still on a host", () => {
    dir = mkdtempSync(join(tmpdir(), 'opsctl-kept-'));
    const file = join(dir, 'c.json');
    const read = (f: string) => JSON.parse(readFileSync(f, 'utf8')) as { id: string; dataCopies: DataCopy[]; copies?: Journal['copies'] };
    const write = (j: object) => writeFileSync(file, JSON.stringify(j));
    expect(keepRunRecord(file, read)).toBeUndefined();
    // its copies all removed, or the local driver's (under opsctl's data directory): nothing to keep
    write({
      id: 'r1',
      dataCopies: [{ member: 'm1', run: 'r1', status: 'done', at: '', host: 'h' }],
      copies: [{ member: 'm1', run: 'r1', removed: true, detail: '' }],
    });
    expect(keepRunRecord(file, read)).toBeUndefined();
    write({ id: 'r1', dataCopies: [{ member: 'm1', run: 'r1', status: 'done', at: '', path: '/data/kv/backups/c/r1-m1', bytes: 1 }] });
    expect(keepRunRecord(file, read)).toBeUndefined();
    write({ id: 'r1', dataCopies: [{ member: 'm1', run: 'r1', status: 'done', at: '', host: 'h', path: '/b', bytes: 1 }] });
    const to = keepRunRecord(file, read);
    expect(to).toBe(join(dir, 'c.runs', 'r1.json'));
    expect(read(to!).dataCopies[0]).toMatchObject({ host: 'h', path: '/b' });
  });
});
