import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { startCluster, type SimulatedTestCluster } from '../framework/index.js';
import { haveS3Server, startS3Server, type S3Server } from '../helpers/s3-server.js';
import { etcdLadderDirs } from '../helpers/etcd-releases.js';

interface Row {
  url: string;
  bytes: number;
  sha256: string;
  revision: string;
  label?: string;
}

const FAST = ['--poll-interval', '100ms'];
const ladder = haveS3Server() ? etcdLadderDirs() : undefined;

/**
 * Off-host snapshots of real etcd (Debian's 3.4; 3.5.35 and 3.6.16 built from the Go proxy) in a real
 * S3-compatible server (versitygw), through the built binary: a multi-part snapshot streamed while
 * etcdctl writes it and checked by the store; a ladder 3.4 → 3.6 with --backup-to leaving a verified
 * restore point per hop and member; `kv restore --from s3://…` bringing a hop's point back onto 3.5.
 */
describe.runIf(ladder)('kv snapshots in S3 from real etcd, and kv restore --from s3:// on real etcd (built binary)', () => {
  const { dir, cleanup } = tempConfigDir('opsctl-kv-s3-etcd-');
  let s3: S3Server;
  let c: SimulatedTestCluster | undefined;
  const opsctl = (...args: string[]) => runBin(args, { env: { OPSCTL_CONFIG_DIR: dir, CI: '1', ...s3.env }, timeout: 300_000 });
  const ok = async (...args: string[]) => {
    const r = await opsctl(...args);
    expect(r.exitCode, `${args.join(' ')}: ${String(r.stderr)}`).toBe(0);
    return r;
  };
  const objectHash = (key: string) => s3.objectHash('backups', key);

  beforeAll(async () => {
    s3 = await startS3Server();
    await s3.bucket('backups');
    // snapshot-count=2: the 3.5 members write a snapshot past the v2 entries 3.4 proposed (else etcdutl check v2store refuses 3.6)
    c = await startCluster({ members: 'simulated', size: 3, etcdBin: ladder!.v34, configDir: dir, extra: ['--config', 'snapshot-count=2'] });
    for (let i = 0; i < 10; i++) await ok('kv', 'put', `early/${i}`, `v${i}`);
    // 6 values of 1 MiB: a snapshot of more than one 5 MiB part
    const value = join(dir, 'value.bin');
    writeFileSync(value, 'x'.repeat(1024 * 1024));
    for (let i = 0; i < 6; i++) await ok('kv', 'put', `big/${i}`, '--file', value);
  }, 300_000);
  afterAll(async () => {
    await c?.destroy();
    await s3?.stop();
    cleanup();
  }, 300_000);

  it('kv snapshot save --to: taken by etcdctl and uploaded as it is written, in parts the store checked, byte for byte', async () => {
    const r = await ok('kv', 'snapshot', 'save', '--to', 's3://backups/real', '--json');
    const out = JSON.parse(String(r.stdout)) as {
      via: string;
      bytes: number;
      sha256: string;
      uploaded: { url: string; streamed: boolean; verifiedBy: string };
    };
    expect(out.via).toBe('etcdctl');
    expect(out.uploaded).toMatchObject({ streamed: true, verifiedBy: 'store-checksum' });
    expect(out.bytes).toBeGreaterThan(6 * 1024 * 1024);
    const key = out.uploaded.url.replace('s3://backups/', '');
    expect(await objectHash(key)).toBe(out.sha256);
    const head = await s3.root.send(new HeadObjectCommand({ Bucket: 'backups', Key: key, ChecksumMode: 'ENABLED' }));
    expect(head.ContentLength).toBe(out.bytes);
    expect(head.ChecksumSHA256).toMatch(/-[2-9]$/);
  }, 300_000);

  it('a ladder 3.4 → 3.5 → 3.6 with --backup-to leaves a verified restore point per hop and member; kv restore --from brings the 3.5 hop point back onto 3.5', async () => {
    const bins = ['--target-bin', `3.5=${ladder!.v35}`, '--target-bin', `3.6=${ladder!.v36}`];
    await ok('kv', 'upgrade', '--to', '3.6', '--yes', ...bins, '--backup-to', 's3://backups/ladder', ...FAST);
    const rows = JSON.parse(String((await ok('kv', 'backups', 'list', '--from', 's3://backups/ladder', '--json')).stdout)) as Row[];
    expect(rows.map((x) => x.label).sort()).toEqual(['3.4->3.5 kv1', '3.4->3.5 kv2', '3.4->3.5 kv3', '3.5->3.6 kv1', '3.5->3.6 kv2', '3.5->3.6 kv3']);
    // each one byte for byte what the store holds (the server's own copy hashed here)
    for (const row of rows) expect(await objectHash(row.url.replace('s3://backups/', '')), row.url).toBe(row.sha256);
    const servers = async () => (JSON.parse(String((await ok('kv', 'version', '--json')).stdout)) as Array<{ server: string }>).map((m) => m.server);
    expect((await servers()).every((v) => v.startsWith('3.6.'))).toBe(true);

    await ok('kv', 'put', 'late/0', 'after the ladder');
    // the point taken before the hop 3.5 → 3.6 (its revision holds every early key), rebuilt on 3.5 with 3.5's etcdutl
    const point = rows.find((x) => x.label === '3.5->3.6 kv1')!;
    const r = await ok('kv', 'restore', '--from', point.url, '--to-version', '3.5', '--target-bin', ladder!.v35, '--yes', ...FAST, '--json');
    expect(String(r.stderr)).toContain(`SHA-256 ${point.sha256.slice(0, 12)}… as its manifest says`);
    expect(JSON.parse(String(r.stdout))).toMatchObject({ status: 'restored', version: '3.5', revision: point.revision });
    expect((await servers()).every((v) => v.startsWith('3.5.'))).toBe(true);
    expect(String((await ok('kv', 'get', 'early/9')).stdout).trim()).toBe('v9');
    expect((await opsctl('kv', 'get', 'late/0', '--require')).exitCode).not.toBe(0);
  }, 600_000);
});
