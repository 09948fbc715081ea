import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findBackups } from '../../src/kv/backups/backups.js';
import { copiesOf, copyToRestore, nextCopyRun } from '../../src/kv/journal/copies.js';
import type { DataCopy } from '../../src/kv/journal/journal.js';

/** Each data-dir copy of a member under its own {run} (journal/copies.ts); the real-etcd case is test/e2e/kv-backup-attempts-etcd.test.ts. */
describe('data-dir copies, one {run} each', () => {
  const ID = '20261127T031500-a1b2c3';
  const copy = (member: string, run: string, status: DataCopy['status'] = 'done'): DataCopy => ({ member, run, status, at: '2026-11-27T03:15:00.000Z' });

  it("a member's first copy is the run's id, each later one ID.N; other members count apart", () => {
    const j = { id: ID, dataCopies: [] as DataCopy[] };
    expect(nextCopyRun(j, 'kv1')).toBe(ID);
    j.dataCopies.push(copy('kv1', ID), copy('kv2', ID));
    expect(nextCopyRun(j, 'kv1')).toBe(`${ID}.2`);
    j.dataCopies.push(copy('kv1', `${ID}.2`, 'copying'));
    // a copy a kill cut short is never copied into again
    expect(nextCopyRun(j, 'kv1')).toBe(`${ID}.3`);
    expect(nextCopyRun(j, 'kv2')).toBe(`${ID}.2`);
    expect(nextCopyRun(j, 'kv3')).toBe(ID);
    expect(copiesOf(j, 'kv1').map((c) => c.run)).toEqual([ID, `${ID}.2`]);
  });

  it('a record of an older opsctl: a member it put back made its copy under the id already', () => {
    expect(nextCopyRun({ id: ID, putBack: [{ member: 'kv2' }] }, 'kv2')).toBe(`${ID}.2`);
    expect(nextCopyRun({ id: ID, putBack: [{ member: 'kv2' }] }, 'kv1')).toBe(ID);
  });

  it("the put-back restores the newest copy, and only once it was made: never an older attempt's", () => {
    expect(copyToRestore({ id: ID, dataCopies: [copy('kv1', ID), copy('kv1', `${ID}.2`)] }, 'kv1')?.run).toBe(`${ID}.2`);
    expect(copyToRestore({ id: ID, dataCopies: [copy('kv1', ID), copy('kv1', `${ID}.2`, 'copying')] }, 'kv1')).toBeUndefined();
    // nothing recorded for the member (an older opsctl made it): the run's id, as it copied
    expect(copyToRestore({ id: ID }, 'kv1')?.run).toBe(ID);
  });

  describe('kv backups list', () => {
    let dir: string | undefined;
    afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

    it("lists a member's later copies (RUN.N-MEMBER) with their run", () => {
      dir = mkdtempSync(join(tmpdir(), 'opsctl-copies-'));
      for (const name of [`${ID}-kv1`, `${ID}.2-kv1`, `${ID}-kv2`]) {
        mkdirSync(join(dir, 'kv', 'backups', 'cafe12345678', name, 'member'), { recursive: true });
        writeFileSync(join(dir, 'kv', 'backups', 'cafe12345678', name, 'member', 'x'), 'x');
      }
      const runs = findBackups(dir);
      expect(runs.map((r) => r.run)).toEqual([ID]);
      expect(runs[0]!.items.map((i) => [i.member, i.path.split('/').pop()]).sort()).toEqual([
        ['kv1', `${ID}-kv1`],
        ['kv1', `${ID}.2-kv1`],
        ['kv2', `${ID}-kv2`],
      ]);
    });
  });
});
