import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BACKUP_MARGIN_BYTES, backupNeeds, backupSpace, describeSpace, spaceProbe, treeBytes } from '../../src/kv/drivers/space.js';

const MiB = 1024 * 1024;

describe('kv backup space (issue 27, item 5)', () => {
  const real = spaceProbe.freeBytes;
  const dirs: string[] = [];
  const tmp = () => {
    const d = mkdtempSync(join(tmpdir(), 'opsctl-space-'));
    dirs.push(d);
    return d;
  };
  afterEach(() => {
    spaceProbe.freeBytes = real;
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('needs the data dir + 10% + 64 MiB', () => {
    expect(backupNeeds(0)).toBe(BACKUP_MARGIN_BYTES);
    expect(backupNeeds(100 * MiB)).toBe(110 * MiB + 64 * MiB);
  });

  it('measures a tree without following links; a missing dir is 0', async () => {
    const d = tmp();
    mkdirSync(join(d, 'member', 'snap'), { recursive: true });
    writeFileSync(join(d, 'member', 'snap', 'db'), Buffer.alloc(3000));
    writeFileSync(join(d, 'a'), Buffer.alloc(100));
    symlinkSync('/usr', join(d, 'link'));
    const n = await treeBytes(d);
    expect(n).toBeGreaterThanOrEqual(3100);
    expect(n).toBeLessThan(3100 + 200);
    expect(await treeBytes(join(d, 'nope'))).toBe(0);
  });

  it('free space is read on the nearest existing ancestor of the target; an earlier copy there counts as free; the message names path, needed and free', async () => {
    const d = tmp();
    writeFileSync(join(d, 'data'), Buffer.alloc(10 * MiB));
    const asked: string[] = [];
    spaceProbe.freeBytes = async (p) => {
      asked.push(p);
      return 70 * MiB;
    };
    const dest = join(d, 'backups', 'k', 'run-kv1');
    const s = await backupSpace(join(d, 'data'), dest);
    expect(asked).toEqual([d]);
    expect(s.needed).toBe(backupNeeds(10 * MiB));
    expect(s.ok).toBe(false);
    expect(describeSpace(s)).toBe(`${dest} needs 75 MiB free (a backup of ${join(d, 'data')} takes 10 MiB, plus 10% and 64 MiB margin), 70 MiB is free`);
    mkdirSync(dest, { recursive: true });
    writeFileSync(join(dest, 'old'), Buffer.alloc(6 * MiB));
    const again = await backupSpace(join(d, 'data'), dest);
    expect(again.free).toBe(76 * MiB);
    expect(again.ok).toBe(true);
  });
});
