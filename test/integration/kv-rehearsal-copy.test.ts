import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { copyCommand, rehearseOnClone } from '../../src/kv/rehearsal/clone.js';
import { finishRehearsal } from '../../src/kv/ladder/rehearsal.js';
import { UpgradeRefused } from '../../src/kv/upgrade/options.js';

const root = mkdtempSync(join(tmpdir(), 'opsctl-rehearsal-copy-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/**
 * The rehearsal's copy script (kv/rehearsal/clone.ts), run by sh as the rehearsal runs it (no member paused
 * here): a member's tree copied with each file's data, mode and times, a symbolic link as a link, and etcd's
 * preallocated next WAL segment (`0.tmp` beside the `*.wal` files) given its size without a read of it. The
 * segment here holds bytes, so a copy that read it would hold them: it holds zeros.
 */
describe("the rehearsal's copy script", () => {
  it("copies every file, mode, time and link; etcd's preallocated next WAL segment only by its size", () => {
    const src = join(root, 'kv1');
    const wal = join(src, 'data', 'member', 'wal');
    mkdirSync(wal, { recursive: true });
    mkdirSync(join(src, 'data', 'member', 'snap'), { recursive: true });
    writeFileSync(join(wal, '0000000000000000-0000000000000000.wal'), Buffer.alloc(8192, 7), { mode: 0o600 });
    writeFileSync(join(wal, '0.tmp'), Buffer.alloc(65536, 9), { mode: 0o600 });
    writeFileSync(join(src, 'data', 'member', 'snap', 'db'), 'bbolt', { mode: 0o600 });
    // a file named like a segment where no WAL is: copied as it is
    writeFileSync(join(src, '1.tmp'), 'notes');
    writeFileSync(join(src, 'kv1.conf.yml'), 'name: kv1\n', { mode: 0o640 });
    symlinkSync('/usr/bin', join(src, 'bin'));
    const old = new Date('2026-01-02T03:04:05Z');
    utimesSync(join(wal, '0.tmp'), old, old);
    utimesSync(join(src, 'kv1.conf.yml'), old, old);
    const single = join(root, 'one.yml');
    writeFileSync(single, 'x: 1\n');

    const dest = join(root, 'copy');
    const [cmd, args] = copyCommand([], [src, join(dest, 'kv1'), single, join(dest, 'one.yml')]);
    execFileSync(cmd, args, { stdio: 'pipe' });

    const at = (p: string) => join(dest, 'kv1', p);
    expect(readFileSync(at('data/member/wal/0000000000000000-0000000000000000.wal'))).toEqual(Buffer.alloc(8192, 7));
    expect(readFileSync(at('data/member/snap/db'), 'utf8')).toBe('bbolt');
    expect(readFileSync(at('1.tmp'), 'utf8')).toBe('notes');
    expect(readFileSync(at('kv1.conf.yml'), 'utf8')).toBe('name: kv1\n');
    expect(statSync(at('kv1.conf.yml')).mode & 0o777).toBe(0o640);
    expect(statSync(at('kv1.conf.yml')).mtime).toEqual(old);
    expect(readlinkSync(at('bin'))).toBe('/usr/bin');
    expect(readFileSync(join(dest, 'one.yml'), 'utf8')).toBe('x: 1\n');
    // the preallocated segment: its size, its mode and times, none of its bytes (and no blocks of its own)
    const tmp = statSync(at('data/member/wal/0.tmp'));
    expect(tmp.size).toBe(65536);
    expect(tmp.mode & 0o777).toBe(0o600);
    expect(tmp.mtime).toEqual(old);
    expect(tmp.blocks).toBe(0);
    expect(readFileSync(at('data/member/wal/0.tmp'))).toEqual(Buffer.alloc(65536));
  });

  it('fails (and says so) when a source cannot be copied', () => {
    const [cmd, args] = copyCommand([], [join(root, 'gone'), join(root, 'copy-gone', 'x')]);
    expect(() => execFileSync(cmd, args, { stdio: 'pipe' })).toThrow(/cannot stat|No such file/);
  });

  it("a copy that fails is the rehearsal's refusal naming cp's words (not an error thrown past it), its scratch copy removed", async () => {
    const gone = join(root, 'data-gone', 'kv1');
    const v = await rehearseOnClone({
      source: { dataDir: join(root, 'data-gone'), paths: [gone] },
      command: ['false'],
      env: {},
      exec: execa,
      timeoutMs: 60_000,
      now: Date.now,
    });
    expect(v.ok).toBe(false);
    expect(v.reason).toMatch(
      /^its copy of the members' files into \S+ failed \(cp: cannot stat .*kv1.*\); every member was resumed, nothing else was changed$/,
    );
    expect(existsSync(/ into (\S+) failed/.exec(v.reason!)![1]!)).toBe(false);
    // the copy's problem, not a step's: the refusal says how to go on without the rehearsal
    expect(v.copyFailed).toBe(true);
    const early = { names: '3.5 → 3.6', running: Promise.resolve(v), cancel: () => Promise.resolve() };
    const reporter = { begin: () => ({ done: () => undefined, fail: () => undefined }), note: () => undefined };
    const refused = await finishRehearsal({ reporter } as unknown as Parameters<typeof finishRehearsal>[0], early).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(UpgradeRefused);
    expect((refused as UpgradeRefused).hint).toBe(
      "nothing was stopped or changed on the cluster; fix what the copy names and run the same command, or upgrade without the rehearsal (--rehearsal-max-copy 0: each member's own trials are the proof)",
    );
  });
});
