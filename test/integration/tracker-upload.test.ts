import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli, tempConfigDir } from '../helpers/cli.js';
import { startMock, trackerEnv } from '../helpers/mock.js';
import { parseSize } from '@opsctl/shared/size.js';
import { planBatches, PART_OVERHEAD_BYTES } from '../../src/tracker/upload.js';

const KiB = 1024;
// the mock's upload route takes at most 256 KiB per request here
const SERVER_LIMIT = 256 * KiB;
let mock: Awaited<ReturnType<typeof startMock>>;
let cfg: ReturnType<typeof tempConfigDir>;

beforeAll(async () => {
  mock = await startMock({ services: ['tracker'], options: { tracker: { maxUploadBytes: SERVER_LIMIT } } });
});
afterAll(async () => {
  await mock.close();
});
beforeEach(() => {
  cfg = tempConfigDir();
  mock.requests.length = 0;
});
afterEach(() => cfg.cleanup());

const file = (name: string, bytes: number) => {
  const p = join(cfg.dir, name);
  writeFileSync(p, Buffer.alloc(bytes, name.charCodeAt(0)));
  return p;
};
const uploads = () => mock.requests.filter((r) => r.method === 'POST' && r.path === '/api/v3/files');
const cli = (argv: string[], limit = '256KB') =>
  runCli(['tracker', 'files', 'upload', ...argv], { env: { ...trackerEnv(mock, cfg.dir), OPSCTL_TRACKER_UPLOAD_LIMIT: limit } });

describe('tracker files upload: batches by size and count, streamed', () => {
  it('files totalling more than the per-request limit go in batches that each fit (2+2+1), none refused', async () => {
    const paths = ['a', 'b', 'c', 'd', 'e'].map((n) => file(`${n}.bin`, 100 * KiB));
    const r = await cli([...paths, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().map((f: any) => [f.name, f.size])).toEqual(paths.map((_, i) => [`${'abcde'[i]}.bin`, 100 * KiB]));
    expect(uploads().map((u) => u.status)).toEqual([201, 201, 201]);
  });

  it('never more than 4 files per request, however small', async () => {
    const paths = Array.from({ length: 9 }, (_, i) => file(`s${i}.txt`, 10));
    const r = await cli(paths);
    expect(r.code, r.stderr).toBe(0);
    expect(uploads()).toHaveLength(3);
  });

  it('a server that takes less than the client thinks: the 413 batch is sent again one file per request', async () => {
    const paths = ['p', 'q', 'r'].map((n) => file(`${n}.bin`, 120 * KiB));
    const r = await cli([...paths, '--json'], '1MB');
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toHaveLength(3);
    expect(r.stderr).toContain('refused 3 files');
    expect(uploads().map((u) => u.status)).toEqual([413, 201, 201, 201]);
  });

  it('a file larger than the server takes: exit 3 naming the ids already uploaded and the files left', async () => {
    const small = file('small.txt', 10);
    const big = file('big.bin', 300 * KiB);
    const r = await cli([small, big, '--json']);
    expect(r.code).toBe(3);
    const err = JSON.parse(r.stderr.trim().split('\n').at(-1)!).error;
    const id = err.summary.uploaded[0].id;
    expect(err.message).toContain(`uploaded 1 of 2 files; uploaded ids: ${id}; then: ${big} (300 KiB) is larger than the server takes in one request`);
    expect(err.hint).toContain(`upload the rest again: ${big}`);
    expect(err.summary.not_uploaded).toEqual([big]);
    // alone, nothing is uploaded: exit 1
    const alone = await cli([big]);
    expect(alone.code).toBe(1);
    expect(alone.stderr).toContain('nothing uploaded');
  });

  it('a server that hangs up on a big request: the error says how to send smaller requests', async () => {
    const server = createServer((req) => req.socket.destroy());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const paths = ['h', 'i'].map((n) => file(`${n}.bin`, 512 * KiB));
      const r = await runCli(['tracker', 'files', 'upload', ...paths], {
        env: { ...trackerEnv(mock, cfg.dir), OPSCTL_TRACKER_URL: url, OPSCTL_TRACKER_UPLOAD_LIMIT: '2MB' },
      });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('nothing uploaded');
      expect(r.stderr).toContain('OPSCTL_TRACKER_UPLOAD_LIMIT');
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('a missing file or a directory stops the command before anything is sent', async () => {
    const ok = file('ok.txt', 3);
    expect((await cli([ok, join(cfg.dir, 'nope.txt')])).code).toBe(2);
    const dir = await cli([ok, cfg.dir]);
    expect(dir.code).toBe(2);
    expect(dir.stderr).toContain('not a regular file');
    expect(uploads()).toEqual([]);
  });

  it('the mock refuses a declared body over its limit with 413 at once, without reading it', async () => {
    const res = await request(`${mock.url}/api/v3/files`, {
      method: 'POST',
      headers: { 'tracker-token': mock.trackerToken, 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(SERVER_LIMIT + 1) },
      body: '--x\r\n',
    }).catch((err: Error) => err);
    // undici may refuse to send a body shorter than its content-length; either way no 5xx and no hang
    if (!(res instanceof Error)) {
      expect(res.statusCode).toBe(413);
      await res.body.dump();
    }
    expect(mock.requests.every((q) => q.status < 500)).toBe(true);
  });
});

describe('planBatches / parseSize', () => {
  it('fills each request up to the limit and the count', () => {
    const limit = 10 * KiB + 3 * PART_OVERHEAD_BYTES;
    expect(planBatches([5 * KiB, 5 * KiB, 5 * KiB], limit)).toEqual([[0, 1], [2]]);
    expect(planBatches([20 * KiB, 1, 1], limit)).toEqual([[0], [1, 2]]);
    expect(planBatches(Array(9).fill(1), limit)).toEqual([[0, 1, 2, 3], [4, 5, 6, 7], [8]]);
  });
  it('reads sizes', () => {
    expect(parseSize('50MB')).toBe(50 * 1024 * 1024);
    expect(parseSize('512k')).toBe(512 * 1024);
    expect(parseSize('1000')).toBe(1000);
    expect(parseSize('lots')).toBeUndefined();
    expect(parseSize('0')).toBeUndefined();
  });
});
