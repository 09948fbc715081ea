import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { startMock, trackerEnv } from '../helpers/mock.js';

/**
 * Issue 27, item 10c, through the built binary against the tracker mock: `tracker files upload` refuses a
 * path under /proc, /sys or /dev (after resolving symlinks) and anything that is not a regular file,
 * naming it, exit 2, before any request (/proc/self/environ holds opsctl's own token). `-f FILE` too.
 */
let mock: Awaited<ReturnType<typeof startMock>>;
let dir: string;
let env: NodeJS.ProcessEnv;
const uploads = () => mock.requests.filter((r) => r.method === 'POST');

async function run(...args: string[]) {
  const r = await runBin(args, { env, cwd: dir });
  return { code: r.exitCode, stdout: String(r.stdout), stderr: String(r.stderr) };
}

beforeAll(async () => {
  mock = await startMock({ services: ['tracker'] });
  dir = mkdtempSync(join(tmpdir(), 'opsctl-small-upload-'));
  env = trackerEnv(mock, join(dir, 'config'));
  symlinkSync('/proc/self/environ', join(dir, 'notes.txt'));
  mkdirSync(join(dir, 'sub'));
  symlinkSync('/dev/zero', join(dir, 'sub', 'zero.bin'));
  writeFileSync(join(dir, 'ok.txt'), 'fine\n');
});
afterAll(async () => {
  await mock.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('tracker files upload refuses kernel files and non-files', () => {
  it.each([
    ['/proc/self/environ', /cannot upload \/proc\/self\/environ: it resolves to \/proc\/\d+\/environ, which is under \/proc/],
    ['notes.txt', /cannot upload notes\.txt: it resolves to \/proc\/\d+\/environ, which is under \/proc/],
    ['/sys/kernel/uevent_seqnum', /cannot upload \/sys\/kernel\/uevent_seqnum: it is under \/sys/],
    ['sub/zero.bin', /cannot upload sub\/zero\.bin: it resolves to \/dev\/zero, which is under \/dev/],
    ['sub', /cannot upload sub: it is not a regular file \(a directory\)/],
  ])('%s', async (arg, message) => {
    mock.requests.length = 0;
    const r = await run('tracker', 'files', 'upload', 'ok.txt', arg);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr + r.stdout).not.toContain(mock.trackerToken);
    // refused before anything was sent: not even ok.txt
    expect(uploads()).toEqual([]);
  });

  it('a regular file still uploads', async () => {
    const r = await run('tracker', 'files', 'upload', 'ok.txt', '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(uploads()).toHaveLength(1);
  });

  it('-f FILE refuses them too (kv put --file would store the environment)', async () => {
    const r = await run('tracker', 'labels', 'apply', '-f', 'notes.txt', '--dry-run');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--file notes\.txt: it resolves to \/proc\/\d+\/environ, which is under \/proc/);
  });
});
