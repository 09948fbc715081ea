import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { rehearseOnClone } from '../../src/kv/rehearsal/clone.js';
import { copyCommand, copyPaused } from '../../src/kv/rehearsal/copy.js';
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

  /** A WAL frame as etcd's encoder writes it: the length (and, with its top bit, the padding) in a little-endian word, the record, the padding. */
  const frame = (record: Buffer) => {
    const pad = (8 - (record.length % 8)) % 8;
    const word = BigInt(record.length) | (pad ? BigInt(0x80 | pad) << 56n : 0n);
    const head = Buffer.alloc(8);
    head.writeBigUInt64LE(word);
    return Buffer.concat([head, record, Buffer.alloc(pad)]);
  };

  it('the segment etcd appends to: its records copied under the pause, the preallocated rest a hole never read, its size and times kept', async () => {
    const src = join(root, 'seg', 'kv1');
    const wal = join(src, 'member', 'wal');
    mkdirSync(wal, { recursive: true });
    const records = Buffer.concat([frame(Buffer.alloc(13, 1)), frame(Buffer.alloc(64, 2)), frame(Buffer.alloc(300_000, 3))]);
    // the older segment: closed at its last record (etcd truncates it when it cuts the next); the newest, preallocated
    writeFileSync(join(wal, '0000000000000000-0000000000000000.wal'), records, { mode: 0o600 });
    const newest = join(wal, '0000000000000001-0000000000000009.wal');
    const preallocated = Buffer.alloc(4 * 1024 * 1024);
    records.copy(preallocated);
    // (bytes past the zero frame that are not zeros: no etcd writes there, so a copy holding them read the preallocation)
    preallocated.fill(0x55, 2 * 1024 * 1024, 2 * 1024 * 1024 + 4096);
    writeFileSync(newest, preallocated, { mode: 0o600 });
    const old = new Date('2026-02-03T04:05:06Z');
    utimesSync(newest, old, old);
    // its member, paused for the copy and resumed after it
    const member = execa('sleep', ['60']);
    try {
      const dest = join(root, 'seg-copy', 'kv1');
      const r = await copyPaused([String(member.pid)], [src, dest], Date.now);
      expect(r).toMatchObject({ ok: true, segments: 1 });
      expect(readFileSync(`/proc/${member.pid}/stat`, 'utf8').split(') ')[1]![0]).not.toBe('T');
      const copy = join(dest, 'member', 'wal', '0000000000000001-0000000000000009.wal');
      const st = statSync(copy);
      expect(st.size).toBe(preallocated.length);
      expect(st.mtime).toEqual(old);
      expect(st.mode & 0o777).toBe(0o600);
      // (compared as bytes: a deep equality of 4 MiB is slow)
      expect(readFileSync(copy).equals(Buffer.concat([records, Buffer.alloc(preallocated.length - records.length)]))).toBe(true);
      expect(st.blocks * 512).toBeLessThan(1024 * 1024);
      expect(readFileSync(join(dest, 'member', 'wal', '0000000000000000-0000000000000000.wal'))).toEqual(records);
    } finally {
      member.kill('SIGKILL');
      await member.catch(() => undefined);
    }
  });

  it('a newest segment whose frames do not end inside it, or with bytes after their end: every byte of it copied', async () => {
    const cases = {
      // a record's length past the file's end (a torn tail, or no WAL at all)
      torn: Buffer.concat([frame(Buffer.alloc(40, 4)), Buffer.from([0xff, 0xff, 0x0f, 0, 0, 0, 0, 0]), Buffer.alloc(100, 6)]),
      // a zero frame, then bytes where etcd's preallocation has none
      after: Buffer.concat([frame(Buffer.alloc(40, 4)), Buffer.alloc(16), Buffer.alloc(100, 7)]),
    };
    for (const [name, bytes] of Object.entries(cases)) {
      const src = join(root, `whole-${name}`);
      mkdirSync(join(src, 'wal'), { recursive: true });
      writeFileSync(join(src, 'wal', '0000000000000000-0000000000000000.wal'), bytes);
      const dest = join(root, `whole-${name}-copy`);
      expect(await copyPaused([], [src, dest], Date.now)).toMatchObject({ ok: true, segments: 1 });
      expect(readFileSync(join(dest, 'wal', '0000000000000000-0000000000000000.wal')), name).toEqual(bytes);
    }
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
