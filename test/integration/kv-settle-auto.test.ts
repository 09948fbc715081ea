import { closeSync, existsSync, mkdirSync, openSync, ftruncateSync, rmSync, mkdtempSync, symlinkSync } from 'node:fs';
import { execa } from 'execa';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MemberSpec } from '../../src/kv/cluster/cluster-file.js';
import type { MemberDriver } from '../../src/kv/drivers/driver.js';
import { newestSnapBytes } from '../../src/kv/drivers/member-files.js';
import { parseV2Size, v2SizeScript } from '../../src/kv/drivers/host-script.js';
import { walV2Bytes } from '../../src/kv/wal/v2-data.js';
import type { UpgradeOptions } from '../../src/kv/upgrade/options.js';
import type { Journal } from '../../src/kv/journal/journal.js';
import { KvSession } from '../../src/kv/cluster/session.js';
import { settleDecision } from '../../src/kv/upgrade/steps.js';
import { type StepEnv } from '../../src/kv/upgrade/options.js';
import { runBin } from '../helpers/bin.js';
import { startCluster } from '../framework/index.js';
import { v2Other, v2Put, v3Put, walDir } from '../helpers/wal-bytes.js';

/**
 * --settle auto decides from a measured v2 size: the newest snapshot file (not the sum of all), the
 * member's v2 key tree over its v2 API while it is on, the figure measured before 3.4 carried in the
 * journal, the v2 writes of its WAL on its host (the command driver's script, run here with `sh -s`:
 * v3 values never counted); no wait after the last member. Members here: a loopback server answering /v2/keys with a
 * body of a chosen size, data dirs with .snap files of chosen sizes (sparse).
 */
const MB = 1000 * 1000;

function file(path: string, bytes: number) {
  const fd = openSync(path, 'w');
  ftruncateSync(fd, bytes);
  closeSync(fd);
}

/** A data dir whose member/snap holds .snap files of these sizes (oldest first). */
function dataDir(root: string, name: string, sizes: number[]): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'member', 'snap'), { recursive: true });
  sizes.forEach((b, i) => file(join(dir, 'member', 'snap', `${'0'.repeat(15)}2-${(0x2710 * (i + 1)).toString(16).padStart(16, '0')}.snap`), b));
  file(join(dir, 'member', 'snap', 'db'), 5 * MB);
  return dir;
}

let root: string;
let server: Server;
let url: string;
/** What the member's /v2/keys answers: a key tree of this many bytes, or the v2 API off (plain 404). */
let v2: number | 'off' = 'off';

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'opsctl-settle-'));
  server = createServer((req, res) => {
    if (!req.url?.startsWith('/v2/keys')) return void res.writeHead(404).end('404 page not found\n');
    if (v2 === 'off') return void res.writeHead(404, { 'content-type': 'text/plain' }).end('404 page not found\n');
    const body = Buffer.alloc(v2, 0x78);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.close();
  rmSync(root, { recursive: true, force: true });
});

function env(driver: Partial<MemberDriver>, journal: Partial<Journal> = {}): StepEnv {
  const o = { settle: 'auto', session: new KvSession(), timeouts: { requestMs: 10_000 }, reporter: { note() {} } } as unknown as UpgradeOptions;
  return { o, driver: driver as MemberDriver, journal: journal as Journal, real: true, membership: [], checkpoint: async () => {} };
}
const member = (dir?: string): MemberSpec => ({ name: 'kv1', endpoint: url, dataDir: dir });
const local = (dir: string): Partial<MemberDriver> => ({ type: 'local', v2DataBytes: async () => newestSnapBytes(dir) });

describe('--settle auto: measured, not guessed', () => {
  it('the newest .snap file is the size, not the sum: 3 snapshots of 30 MB are 30 MB (no wait), not 90.9 MB', () => {
    const dir = dataDir(root, 'three', [30.3 * MB, 30.3 * MB, 30.3 * MB]);
    expect(newestSnapBytes(dir)).toBe(30.3 * MB);
    const grown = dataDir(root, 'grown', [10 * MB, 20 * MB, 64.8 * MB]);
    expect(newestSnapBytes(grown)).toBe(64.8 * MB);
    expect(newestSnapBytes(dataDir(root, 'none', []))).toBeUndefined();
  });

  it('v2 API off, 25 MB in the newest of 3 snapshot files (78 MB together): no wait', async () => {
    v2 = 'off';
    const dir = dataDir(root, 'snap25', [26 * MB, 27 * MB, 25 * MB]);
    const d = await settleDecision(env(local(dir)), member(dir));
    expect(d).toMatchObject({ ms: 0 });
    expect(d.why).toMatch(/v2 data 25000000 bytes \(kv1's newest snapshot file\): under 50 MB, no catch-up wait/);
  });

  it("60 MB of v2 data and no snapshot file yet: measured over the v2 API, the seed's 2-minute wait (was: none)", async () => {
    v2 = 60 * MB;
    const dir = dataDir(root, 'nosnap', []);
    const d = await settleDecision(env(local(dir)), member(dir));
    expect(d.ms).toBe(120_000);
    expect(d.why).toMatch(/v2 data 60000000 bytes \(measured on kv1: its v2 key tree\): over 50 MB, the seed's 2-minute wait/);
  });

  it('60 MB over the v2 API with snapshot files summing 234 MB: the measured 60 MB wins (2 minutes, not 4)', async () => {
    v2 = 60 * MB;
    const dir = dataDir(root, 'many', [58 * MB, 58 * MB, 58 * MB, 60 * MB]);
    const d = await settleDecision(env(local(dir)), member(dir));
    expect(d.ms).toBe(120_000);
  });

  it('on 3.4 (v2 API off): the figure measured before the hop, carried in the journal, decides', async () => {
    v2 = 'off';
    const dir = dataDir(root, 'carried', [1 * MB]);
    const small = await settleDecision(env(local(dir), { v2: { bytes: 25 * MB, on: 'measured on kv1 (3.3.27) over its v2 API' } }), member(dir));
    expect(small).toMatchObject({ ms: 0 });
    expect(small.why).toMatch(/v2 data 25000000 bytes \(measured on kv1 \(3\.3\.27\) over its v2 API, before 3\.4 turned the v2 API off\)/);
    const big = await settleDecision(env(local(dir), { v2: { bytes: 120 * MB, on: 'measured on kv1 (3.3.27) over its v2 API' } }), member(dir));
    expect(big.ms).toBe(240_000);
  });

  it("nothing can tell (v2 API off, no snapshot file, no WAL, nothing carried): not checked, the guide's rule for the hop, saying why", async () => {
    v2 = 'off';
    const dir = dataDir(root, 'blind', []);
    const d = await settleDecision(env(local(dir)), member(dir));
    expect(d.ms).toBe(120_000);
    expect(d.why).toMatch(/v2 data size not checked: .*serves no v2 API.*; kv1 has no snapshot file yet; .*member\/wal does not exist; the guide's rule/);
  });

  it('v2 API off, no snapshot file yet (a 3.4/3.5 member the ladder never saw with v2 on): its WAL is read, v2 writes only', async () => {
    v2 = 'off';
    // 30 v2 PUTs of 1 MB (an InternalRaftRequest's v2, and 3.2's bare Request), 40 v3 puts of 1 MB: 30 MB of v2 data
    const small = walDir(root, 'wal30', [
      ...Array.from({ length: 30 }, (_, i) => v2Put(`/1/k${i}`, MB, i % 2 === 0)),
      ...Array.from({ length: 40 }, () => v3Put(MB)),
    ]);
    const d = await settleDecision(env(local(small)), member(small));
    expect(d.ms).toBe(0);
    expect(d.why).toMatch(/v2 data 30000\d{3} bytes \(kv1's WAL: 30 v2 writes in 1 file, no v2 snapshot yet; an upper bound\): under 50 MB/);
    const big = walDir(
      root,
      'wal60',
      Array.from({ length: 60 }, (_, i) => v2Put(`/1/k${i}`, MB, true)),
    );
    expect((await settleDecision(env(local(big)), member(big))).ms).toBe(120_000);
  });

  it('the last member of the hop: no wait (the settle is between members), whatever the size', async () => {
    v2 = 60 * MB;
    const d = await settleDecision(env(local(root)), member(), { last: true });
    expect(d).toEqual({ ms: 0, why: 'the last member of this hop: the settle is between members' });
  });
});

describe('--settle auto through the built binary (simulated members)', () => {
  it('3.3 → 3.4: the v2 data measured before the hop is carried in the journal; no wait after the last member', async () => {
    const c = await startCluster({ members: 'simulated', size: 3, version: '3.3' });
    const sb = c.sandbox;
    try {
      sb.fault({ v2Bytes: 20 * MB });
      const r = await runBin(['kv', 'upgrade', '--to', '3.4', '--yes', '--poll-interval', '50ms', '--healthy-timeout', '30s', '--json'], { env: sb.env });
      expect(r.exitCode, String(r.stderr)).toBe(0);
      const rep = JSON.parse(String(r.stdout));
      const settles = rep.steps.filter((s: any) => s.kind === 'settle');
      expect(settles).toHaveLength(3);
      // the 3.4 members serve no v2 API: the 20 MB measured on 3.3 before the hop decides
      expect(settles[0].detail).toMatch(
        /v2 data \d{8} bytes \(measured on kv\d \(3\.3\.\d+\) over its v2 API, before 3\.4 turned the v2 API off\): under 50 MB/,
      );
      expect(settles[2].detail).toMatch(/the last member of this hop: the settle is between members/);
      expect(sb.journal().v2.bytes).toBeGreaterThan(19 * MB);
    } finally {
      await c.destroy();
    }
  }, 180_000);
});

/** The command driver's measure on a member's host (`sh -s` here, the trial template there), with this PATH. */
async function onHost(dir: string, path = process.env.PATH ?? '/usr/bin:/bin') {
  const r = await execa('/bin/sh', ['-s'], { input: v2SizeScript(dir), env: { PATH: path }, extendEnv: false, reject: false });
  return parseV2Size(String(r.stdout));
}
/** A command driver whose host measure is the real script on `dir`, and which counts its calls. */
function onHostDriver(dir: string, path?: string) {
  const calls = { host: 0 };
  const d: Partial<MemberDriver> = {
    type: 'command',
    v2DataBytes: async () => undefined,
    hostV2Size: async () => {
      calls.host++;
      return onHost(dir, path);
    },
  };
  return { d, calls };
}
/** A folder of the tools the script uses, without perl (a host that has none). */
function noPerl(): string {
  const bin = join(root, 'no-perl-bin');
  mkdirSync(bin, { recursive: true });
  for (const t of ['ls', 'grep', 'sort', 'tail', 'wc', 'tr', 'cat']) {
    const at = ['/usr/bin', '/bin'].map((d) => join(d, t)).find((p) => existsSync(p))!;
    if (!existsSync(join(bin, t))) symlinkSync(at, join(bin, t));
  }
  return bin;
}

describe("--settle auto on the member's host (the command driver): the v2 store, never the v3 values", () => {
  // 100 MB of v3 values (1 MB puts) and etcd's own small v2 writes: what a 3.4/3.5 member holds before its first v2 snapshot
  let big: string;
  beforeAll(() => {
    big = walDir(root, 'v3-100', [
      v2Put('/0/members/8e9e05c52164694d/attributes', 60, true),
      v2Other('QGET', '/0/health'),
      ...Array.from({ length: 100 }, () => v3Put(MB)),
      v2Put('/0/version', 5, false),
      v2Other('DELETE', '/1/gone'),
    ]);
  });

  it('a WAL of 100 MB of v3 puts and 2 small v2 PUTs: the v2 writes only, as opsctl reads the WAL itself (not 100 MB)', async () => {
    const got = await onHost(big);
    const here = walV2Bytes(big);
    expect(here).toMatchObject({ writes: 2 });
    expect(got).toEqual({ kind: 'wal', bytes: (here as { bytes: number }).bytes, writes: 2, files: 1 });
    expect((here as { bytes: number }).bytes).toBeLessThan(200);
    // a torn last record (its frame says more bytes than the file holds): what was read counts, the rest is not guessed
    const torn = walDir(root, 'torn', [v2Put('/1/a', 1000, true), v3Put(10)], Buffer.from([0xff, 0xff, 0, 0, 0, 0, 0, 0, 1, 2, 3]));
    expect(await onHost(torn)).toEqual({ kind: 'wal', bytes: 1004, writes: 1, files: 1 });
  });

  it('a v2 snapshot file there: the newest one (the whole store), its WAL not read', async () => {
    const dir = dataDir(root, 'host-snap', [3 * MB, 7 * MB]);
    expect(await onHost(dir)).toEqual({ kind: 'snap', bytes: 7 * MB });
  });

  it('no perl on the host: every byte of the WAL, an upper bound that decides only under 50 MB', async () => {
    const bin = noPerl();
    const all = await onHost(big, bin);
    expect(all).toMatchObject({ kind: 'walall' });
    expect(all.kind === 'walall' && all.bytes).toBeGreaterThan(100 * MB);
    v2 = 'off';
    const d = await settleDecision(env(onHostDriver(big, bin).d), member());
    // not a 4-minute wait on 100 MB that are v3 values: not measured, the guide's 2 minutes, and why
    expect(d.ms).toBe(120_000);
    expect(d.why).toMatch(
      /v2 data size not checked: .*kv1's WAL holds \d+ bytes, v2 and v3 alike, and its host has no perl to tell the v2 writes apart \(install perl there/,
    );
    const small = walDir(root, 'small-no-perl', [v2Put('/1/a', 1000, true), v3Put(2000)]);
    const ok = await settleDecision(env(onHostDriver(small, bin).d), member());
    expect(ok.ms).toBe(0);
    expect(ok.why).toMatch(
      /v2 data \d+ bytes \(measured on kv1's host: every byte its WAL holds, v3 included \(no perl there to read it\); an upper bound\): under 50 MB/,
    );
  });

  it('v2 API off, nothing carried: the host measure decides, 100 MB of v3 data is no v2 data (no blind 2-minute wait)', async () => {
    v2 = 'off';
    const d = await settleDecision(env(onHostDriver(big).d), member());
    expect(d.ms).toBe(0);
    expect(d.why).toMatch(
      /^v2 data \d{2,3} bytes \(measured on kv1's host: 2 v2 writes in its WAL \(1 file\), no v2 snapshot yet; v3 requests not counted; an upper bound\): under 50 MB, no catch-up wait$/,
    );
  });

  it("the member's own answer first: its v2 API, then the figure carried from before 3.4; its host is not asked then", async () => {
    v2 = 37;
    const api = onHostDriver(big);
    const d = await settleDecision(env(api.d), member());
    expect(d).toMatchObject({ ms: 0 });
    expect(d.why).toMatch(/v2 data 37 bytes \(measured on kv1: its v2 key tree\)/);
    v2 = 'off';
    const carried = onHostDriver(big);
    const c = await settleDecision(env(carried.d, { v2: { bytes: 37, on: 'measured on kv1 (3.3.27) over its v2 API' } }), member());
    expect(c.why).toMatch(/v2 data 37 bytes \(measured on kv1 \(3\.3\.27\) over its v2 API, before 3\.4 turned the v2 API off\)/);
    expect(api.calls.host + carried.calls.host).toBe(0);
  });
});
