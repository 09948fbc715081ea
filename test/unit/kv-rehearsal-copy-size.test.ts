import { mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { copyBytes, copyTooLarge, DEFAULT_MAX_COPY, preallocatedSegment } from '../../src/kv/rehearsal/copy-size.js';

const root = mkdtempSync(join(tmpdir(), 'opsctl-copy-size-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("the rehearsal's copy, measured before every member is paused for it (rehearsal/copy-size.ts)", () => {
  it('counts what cp reads (a sparse preallocated WAL at its whole size), not a symbolic link; over the limit it says the size and the flag', () => {
    const wal = join(root, 'kv1', 'data', 'member', 'wal');
    mkdirSync(wal, { recursive: true });
    writeFileSync(join(wal, '0.wal'), '');
    truncateSync(join(wal, '0.wal'), 64 * 1024 * 1024);
    writeFileSync(join(root, 'kv1', 'kv1.conf.yml'), 'name: kv1\n');
    symlinkSync('/usr/bin', join(root, 'kv1', 'bin'));
    const outside = join(root, 'walonly');
    mkdirSync(outside);
    writeFileSync(join(outside, '1.wal'), Buffer.alloc(1000));
    expect(copyBytes([join(root, 'kv1'), outside, join(root, 'gone')])).toBe(64 * 1024 * 1024 + 10 + 1000);
    expect(copyTooLarge([join(root, 'kv1')])).toBeUndefined();
    expect(DEFAULT_MAX_COPY).toBe(2 * 1024 ** 3);
    expect(copyTooLarge([join(root, 'kv1')], { max: 1024 * 1024 })).toMatch(
      /^its copy would read 64 MiB with every member paused at once, over --rehearsal-max-copy 1 MiB \(/,
    );
  });

  it("counts none of etcd's preallocated next WAL segment (N.tmp beside *.wal files), which the copy gives its size without reading", () => {
    const wal = join(root, 'kv2', 'member', 'wal');
    mkdirSync(wal, { recursive: true });
    writeFileSync(join(wal, '0000000000000000-0000000000000000.wal'), Buffer.alloc(4096));
    writeFileSync(join(wal, '0.tmp'), '');
    truncateSync(join(wal, '0.tmp'), 64 * 1024 * 1024);
    const other = join(root, 'kv2', 'notes');
    mkdirSync(other);
    writeFileSync(join(other, '1.tmp'), Buffer.alloc(100));
    expect(copyBytes([join(root, 'kv2')])).toBe(4096 + 100);
    expect(preallocatedSegment('0.tmp', ['0.tmp', '0000000000000001-0000000000000010.wal'])).toBe(true);
    expect(preallocatedSegment('0.tmp', ['0.tmp'])).toBe(false);
    expect(preallocatedSegment('x.tmp', ['a.wal'])).toBe(false);
  });
});
