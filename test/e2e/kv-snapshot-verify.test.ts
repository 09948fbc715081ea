import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpsError } from '../../src/core/errors.js';
import { freePort } from '../../src/kv/sandbox/sandbox.js';
import { snapshotStatus, type SnapshotStatus } from '../../src/kv/snapshot/status.js';
import { snapshotTool } from '../../src/kv/snapshot/crosscheck.js';
import { recordRestorePoint, type WithRestorePoint } from '../../src/kv/upgrade/restore-point.js';
import { runBin } from '../helpers/bin.js';
import { etcdReleaseDirs } from '../helpers/etcd-releases.js';
import { until } from '../helpers/kv.js';

/**
 * Snapshots of real etcd 3.2.32 and 3.3.27 (one member each, started here, stopped by PID): saved
 * through the gateway (3.2's stream of JSON objects without separators included) and etcdctl at
 * empty, small and a few-MB size, verified against the member's own figures and etcdctl's; then a
 * corruption fuzz over them (bytes flipped or zeroed in pages, the SHA-256 trailer recomputed as
 * etcd writes it, so only the structural check can catch it): never valid with wrong figures.
 */
const releases = etcdReleaseDirs();
const RELEASES = [
  { minor: '3.2', dir: releases?.v32 },
  { minor: '3.3', dir: releases?.v33 },
];

/** Deterministic randomness: a failure names the seed and case. */
function rng(seed: number) {
  let s = seed >>> 0 || 1;
  return (n: number) => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s % n;
  };
}

/** The body changed, the trailer recomputed over it (what etcd appends), written to `to`. */
function withTrailer(body: Buffer, to: string): void {
  writeFileSync(to, Buffer.concat([body, createHash('sha256').update(body).digest()]));
}

describe.runIf(Boolean(releases)).each(RELEASES)('kv snapshots of real etcd $minor: streamed, verified for real', ({ minor, dir }) => {
  const work = mkdtempSync(join(tmpdir(), `opsctl-snapv-${minor}-`));
  const etcdctlBin = join(dir ?? '', 'etcdctl');
  let proc: ChildProcess | undefined;
  let endpoint = '';
  const cfg = join(work, 'cfg');
  const opsctl = (...args: string[]) => runBin(args, { env: { OPSCTL_CONFIG_DIR: cfg }, timeout: 240_000 });
  const etcdctl = (...args: string[]) => execFileSync(etcdctlBin, ['--endpoints', endpoint, ...args], { env: { ETCDCTL_API: '3' }, stdio: 'pipe' }).toString();
  const etcdStatus = (file: string) =>
    JSON.parse(execFileSync(etcdctlBin, ['snapshot', 'status', file, '-w', 'json'], { env: { ETCDCTL_API: '3' } }).toString());
  const saved: Record<string, string> = {};

  beforeAll(async () => {
    const [client, peer] = [await freePort(), await freePort()];
    endpoint = `http://127.0.0.1:${client}`;
    mkdirSync(cfg);
    proc = spawn(
      join(dir!, 'etcd'),
      [
        '--name',
        'n1',
        '--data-dir',
        join(work, 'data'),
        '--listen-client-urls',
        endpoint,
        '--advertise-client-urls',
        endpoint,
        '--listen-peer-urls',
        `http://127.0.0.1:${peer}`,
        '--initial-advertise-peer-urls',
        `http://127.0.0.1:${peer}`,
        '--initial-cluster',
        `n1=http://127.0.0.1:${peer}`,
      ],
      { stdio: 'ignore' },
    );
    await until(
      async () =>
        fetch(`${endpoint}/health`).then(
          async (r) => r.ok && /true/.test(await r.text()),
          () => false,
        ),
      60_000,
      `etcd ${minor} healthy`,
    );
  }, 300_000);

  afterAll(() => {
    if (proc?.pid) process.kill(proc.pid, 'SIGKILL');
    rmSync(work, { recursive: true, force: true });
  });

  const save = async (name: string, via: 'gateway' | 'etcdctl') => {
    const file = join(work, name);
    const r = await opsctl('kv', 'snapshot', 'save', file, '--endpoints', endpoint, '--via', via, '--etcdctl', etcdctlBin, '--json');
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(existsSync(`${file}.part`) || existsSync(`${file}.part.part`)).toBe(false);
    saved[name] = file;
    return JSON.parse(String(r.stdout)) as { via: string; revision: string; liveKeys: number; totalKey: number; member: { keys?: number } };
  };

  it('through the gateway and etcdctl, empty, small and a few MB: saved, verified, the figures equal etcdctl snapshot status and the member count', async () => {
    const empty = await save('empty-gw.db', 'gateway');
    expect(empty).toMatchObject({ via: 'gateway', liveKeys: 0, member: { keys: 0 } });

    for (let i = 0; i < 100; i++) etcdctl('put', `k${i}`, `v${i}`);
    for (let i = 0; i < 30; i++) etcdctl('put', `k${i}`, `w${i}`);
    for (let i = 0; i < 10; i++) etcdctl('del', `k${i}`);
    const rev = Number(JSON.parse(etcdctl('get', 'k50', '-w', 'json')).header.revision);
    etcdctl('compact', String(rev - 5));
    for (let i = 0; i < 5; i++) etcdctl('put', `k${i}`, 'again');
    etcdctl('del', 'k20');
    // 100 keys, 10 deleted, 5 back, 1 more deleted.
    for (const via of ['gateway', 'etcdctl'] as const) {
      const s = await save(`small-${via}.db`, via);
      expect(s).toMatchObject({ via, liveKeys: 94, member: { keys: 94 } });
      expect(etcdStatus(saved[`small-${via}.db`]!)).toMatchObject({ revision: Number(s.revision), totalKey: s.totalKey });
    }

    const value = 'x'.repeat(100 * 1024);
    for (let i = 0; i < 40; i++) etcdctl('put', `big/${i}`, value);
    for (const via of ['gateway', 'etcdctl'] as const) {
      const s = await save(`mb-${via}.db`, via);
      expect(s).toMatchObject({ via, liveKeys: 134, member: { keys: 134 } });
      expect(readFileSync(saved[`mb-${via}.db`]!).length).toBeGreaterThan(4_000_000);
    }
    const st = await opsctl('kv', 'snapshot', 'status', saved['mb-gateway.db']!, '--etcdctl', etcdctlBin, '--json');
    expect(st.exitCode, String(st.stderr)).toBe(0);
    const got = JSON.parse(String(st.stdout));
    const theirs = etcdStatus(saved['mb-gateway.db']!);
    expect({ hash: parseInt(got.hash, 16), revision: Number(got.revision), totalKey: got.totalKey, totalSize: got.totalSize }).toEqual(theirs);
    expect(got.verified).toMatch(/pages walked.*etcd(ctl|utl) snapshot status agrees/);
  }, 300_000);

  it('corruption fuzz: bytes flipped or zeroed in pages, the SHA-256 trailer recomputed: each refused naming what is wrong, or valid with exactly the right figures', async () => {
    const tool = snapshotTool(etcdctlBin, execa);
    const outcomes = { refused: 0, sameFigures: 0 };
    const wrong: string[] = [];
    const reasons = new Map<string, number>();
    for (const name of ['small-etcdctl.db', 'mb-gateway.db']) {
      const file = saved[name]!;
      const data = readFileSync(file);
      const body = data.subarray(0, data.length - 32);
      const right = await snapshotStatus(file);
      const pageSize = body.readUInt32LE(24);
      const pages = body.length / pageSize;
      const rand = rng(minor === '3.2' ? 32 : 33);
      // The pages that hold structure (meta, freelist, branches, leaves) more often than free ones.
      const used = [...Array(pages).keys()].filter((p) => body.readUInt16LE(p * pageSize + 8) !== 0);
      for (let i = 0; i < 80; i++) {
        const b = Buffer.from(body);
        const page = i % 4 === 3 ? rand(pages) : (used[rand(used.length)] ?? 0);
        const at = page * pageSize;
        const kind = rand(4);
        let what: string;
        if (kind === 0) {
          const off = rand(64);
          b[at + off] = (b[at + off] ?? 0) ^ (1 << rand(8));
          what = `bit flip at page ${page}+${off}`;
        } else if (kind === 1) {
          const off = rand(pageSize);
          b[at + off] = (b[at + off] ?? 0) ^ (1 + rand(255));
          what = `byte changed at page ${page}+${off}`;
        } else if (kind === 2) {
          const off = rand(pageSize - 256);
          b.fill(0, at + off, at + off + 16 + rand(240));
          what = `bytes zeroed at page ${page}+${off}`;
        } else {
          b.fill(0, at, at + pageSize);
          what = `page ${page} zeroed`;
        }
        const f = join(work, `fuzz-${name}-${i}.db`);
        withTrailer(b, f);
        let s: SnapshotStatus | undefined;
        try {
          s = await snapshotStatus(f, { crossCheck: tool });
        } catch (err) {
          expect(err, `${name} #${i} ${what}`).toBeInstanceOf(OpsError);
          expect((err as OpsError).message).toMatch(/^snapshot .* is not an etcd database: \S/);
          const reason = (err as OpsError).message
            .replace(/^.*database: /, '')
            .replace(/\d+/g, 'N')
            .slice(0, 60);
          reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
          outcomes.refused++;
        }
        if (s) {
          const same = s.revision === right.revision && s.totalKey === right.totalKey && s.liveKeys === right.liveKeys && s.totalSize === right.totalSize;
          if (same) outcomes.sameFigures++;
          else wrong.push(`${name} #${i} (${what}): revision ${s.revision}, ${s.totalKey} entries, ${s.liveKeys} live keys`);
        }
        rmSync(f);
      }
    }
    process.stderr.write(`etcd ${minor} fuzz: ${JSON.stringify(outcomes)}; refusals: ${JSON.stringify([...reasons])}\n`);
    expect(wrong).toEqual([]);
    // not vacuous: the mutations do reach structure the walk refuses (how many varies with the snapshot's own
    // bytes, which differ from run to run: 19 to 29 of 160 seen); the claim is the line above, 0 wrong figures
    expect(outcomes.refused).toBeGreaterThanOrEqual(5);
  }, 300_000);

  it("the upgrade's restore point is not recorded from a corrupt snapshot; a good one records the member's figures", async () => {
    const data = readFileSync(saved['small-gateway.db']!);
    const body = Buffer.from(data.subarray(0, data.length - 32));
    // The meta pages' root bucket pointer moved to the freelist/another page: a walk that trusts it reads nonsense.
    const pageSize = body.readUInt32LE(24);
    for (const m of [0, 1]) body.writeBigUInt64LE(BigInt(body.readBigUInt64LE(m * pageSize + 16 + 16) + 1n), m * pageSize + 16 + 16);
    const bad = join(work, 'restore-point-bad.db');
    withTrailer(body, bad);
    const j = { snapshots: [] } as unknown as WithRestorePoint;
    await expect(recordRestorePoint(j, { member: 'n1', file: bad }, Date.now())).rejects.toThrow(/is not an etcd database: meta page 0: checksum mismatch/);
    expect(j.restorePoint).toBeUndefined();
    const good = await recordRestorePoint(j, { member: 'n1', file: saved['small-gateway.db']!, memberFigures: { revisionAfter: '200', keys: 94 } }, Date.now());
    expect(good).toMatch(/94 keys \(the member counts 94 at that revision\)/);
    expect(j.restorePoint).toMatchObject({ liveKeys: 94, memberKeys: 94, memberRevision: '200', verified: expect.stringMatching(/pages walked/) });
  });

  it('no part file is left: a full disk (ENOSPC) under the gateway stream and under etcdctl, an etcdctl killed, opsctl itself killed (the next save removes it)', async () => {
    const small = join(work, 'full');
    mkdirSync(small);
    // A 1 MiB tmpfs in a user and mount namespace of its own: the few-MB snapshot cannot fit.
    for (const via of ['gateway', 'etcdctl']) {
      const r = await execa(
        'unshare',
        [
          '-rm',
          'sh',
          '-c',
          `mount -t tmpfs -o size=1m tmpfs "$1" && "$2" "$3" kv snapshot save "$1/s.db" --endpoints "$4" --via "$5" --etcdctl "$6"; rc=$?; ls -A "$1"; exit $rc`,
          'sh',
          small,
          process.execPath,
          join(process.cwd(), 'bin', 'opsctl.cjs'),
          endpoint,
          via,
          etcdctlBin,
        ],
        { reject: false, env: { OPSCTL_CONFIG_DIR: cfg, NO_COLOR: '1' }, timeout: 120_000 },
      );
      expect(r.exitCode, `${via}: ${r.stderr}`).toBe(1);
      expect(String(r.stderr)).toMatch(via === 'gateway' ? /ENOSPC/ : /no space left on device|ENOSPC/i);
      // Nothing in the directory: no s.db, no s.db.part, no s.db.part.part.
      expect(String(r.stdout).trim(), via).toBe('');
    }

    // etcdctl killed mid-way (a stand-in that writes half a file, then SIGKILLs itself).
    const fake = join(work, 'etcdctl-killed');
    writeFileSync(fake, `#!/bin/sh\nfor a; do last="$a"; done\nhead -c 100000 /dev/zero > "$last.part"\nkill -9 $$\n`, { mode: 0o755 });
    const target = join(work, 'killed.db');
    const k = await opsctl('kv', 'snapshot', 'save', target, '--endpoints', endpoint, '--via', 'etcdctl', '--etcdctl', fake);
    expect(k.exitCode).toBe(1);
    expect(String(k.stderr)).toMatch(/etcdctl snapshot save failed \(killed by SIGKILL\)/);
    expect(readdirSync(work).filter((f) => f.startsWith('killed.db'))).toEqual([]);

    // opsctl itself killed while etcdctl writes: the part is left, and the next save of that file removes it first.
    const hang = join(work, 'etcdctl-hang');
    const hangPid = join(work, 'hang.pid');
    writeFileSync(hang, `#!/bin/sh\nfor a; do last="$a"; done\necho $$ > '${hangPid}'\nhead -c 100000 /dev/zero > "$last"\nexec sleep 600\n`, { mode: 0o755 });
    const t2 = join(work, 'again.db');
    const run = opsctl('kv', 'snapshot', 'save', t2, '--endpoints', endpoint, '--via', 'etcdctl', '--etcdctl', hang);
    await until(() => existsSync(`${t2}.part`), 60_000, 'the part file');
    run.kill('SIGKILL');
    await run;
    expect(existsSync(`${t2}.part`)).toBe(true);
    // The orphaned stand-in, ended by the PID it wrote.
    process.kill(Number(readFileSync(hangPid, 'utf8').trim()), 'SIGKILL');
    const ok = await opsctl('kv', 'snapshot', 'save', t2, '--endpoints', endpoint, '--via', 'gateway');
    expect(ok.exitCode, String(ok.stderr)).toBe(0);
    expect(readdirSync(work).filter((f) => f.startsWith('again.db'))).toEqual(['again.db']);
  }, 300_000);

  it('a corrupt snapshot copied from a good one is refused by kv snapshot status with the reason and exit 1', async () => {
    const data = readFileSync(saved['small-etcdctl.db']!);
    const body = Buffer.from(data.subarray(0, data.length - 32));
    const pageSize = body.readUInt32LE(24);
    // The "key" bucket's name in the root leaf changed: the old reader found no "key" bucket and said 0 keys.
    const metas = [0, 1].map((m) => ({ txid: body.readBigUInt64LE(m * pageSize + 16 + 48), root: Number(body.readBigUInt64LE(m * pageSize + 16 + 16)) }));
    const root = metas.sort((a, b) => (a.txid > b.txid ? -1 : 1))[0]!.root;
    const at = body.indexOf(Buffer.from('key'), root * pageSize);
    expect(at).toBeLessThan((root + 1) * pageSize);
    body[at + 2] = 0x7a;
    const f = join(work, 'renamed-bucket.db');
    withTrailer(body, f);
    copyFileSync(f, `${f}.copy`);
    const r = await opsctl('kv', 'snapshot', 'status', f);
    expect(r.exitCode).toBe(1);
    expect(String(r.stderr)).toMatch(/is not an etcd database: .*(keys out of order|"key" bucket is missing)/);
  });
});
