import { execa } from 'execa';
import { mkdtempSync, openSync, closeSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hostWalMark } from '../../src/kv/drivers/host-script.js';
import type { HostShellResult } from '../../src/kv/drivers/driver.js';
import { copyVerdict } from '../../src/kv/wal/wal-mark.js';
import { field, frame, v3Put, walDir } from '../helpers/wal-bytes.js';

const root = mkdtempSync(join(tmpdir(), 'opsctl-wal-mark-host-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The script run as the command driver's trial template `sh -s` runs it: on its standard input. */
const shell = async (script: string): Promise<HostShellResult> => {
  const r = await execa('sh', ['-s'], { input: script, reject: false });
  return { stdout: String(r.stdout), stderr: String(r.stderr), exitCode: r.exitCode };
};

const entry = (index: number) => frame(Buffer.concat([field(1, 2), field(3, Buffer.concat([field(2, 2), field(3, index), field(4, v3Put(8))]))]));

describe("the WAL mark on a member's host (the command driver's trial template: host-script.ts hostWalMark)", () => {
  it('the same WAL gives the same mark; a record written into the newest segment, or a new segment, another; a missing dir is named', async () => {
    const data = walDir(root, 'm1', [v3Put(10), v3Put(20)], Buffer.alloc(1 << 20));
    const wal = join(data, 'member', 'wal');
    const first = await hostWalMark(shell, wal);
    expect(first).toEqual({ digest: expect.any(String), text: expect.stringMatching(/^1 WAL files, the newest \S+\.wal with checksum \d+ \(on its host\)$/) });
    expect(await hostWalMark(shell, wal)).toEqual(first);
    expect(copyVerdict('3.6', first, await hostWalMark(shell, wal)).putBack).toBe(true);

    // the member appends a record where the preallocated zeros were (the file's size unchanged)
    const [name] = (first as { text: string }).text.match(/\S+\.wal/)!;
    const fd = openSync(join(wal, name), 'r+');
    writeSync(fd, entry(3), 0, undefined, 4096);
    closeSync(fd);
    const appended = await hostWalMark(shell, wal);
    expect(appended).not.toEqual(first);
    expect(copyVerdict('3.6', first, appended)).toEqual({ putBack: false, why: expect.stringContaining('its WAL was written after the copy (1 WAL files') });

    // a new segment cut
    const seg = openSync(join(wal, '0000000000000001-0000000000000004.wal'), 'w');
    writeSync(seg, entry(4));
    closeSync(seg);
    const cut = await hostWalMark(shell, wal);
    expect(cut).toMatchObject({ text: expect.stringMatching(/^2 WAL files, the newest 0000000000000001-0000000000000004\.wal/) });

    expect(await hostWalMark(shell, join(root, 'gone', 'member', 'wal'))).toEqual({
      why: `on its host: ${join(root, 'gone', 'member', 'wal')} does not exist`,
    });
    const failed = await hostWalMark(
      async () => ({ stdout: '', stderr: 'ssh: connect to host h1 port 22: Connection refused', exitCode: 255, failed: '`ssh h1 sh -s` failed (exit 255)' }),
      wal,
    );
    expect(failed).toEqual({ why: 'on its host: `ssh h1 sh -s` failed (exit 255)' });
  });
});
