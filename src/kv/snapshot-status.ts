import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { OpsError } from '../core/errors.js';
import { parseJsonSafe } from './parse.js';
import { etcdctlEnv, findEtcdctl, verifyTrailer } from './snapshot.js';

type Exec = typeof import('execa').execa;

/** What `etcdctl snapshot status` prints, plus the file's own SHA-256 and what kind of file it is. */
export interface SnapshotStatus {
  file: string;
  /** etcdctl's hash (CRC-32 over the keys and values), as a hex string like etcdctl's table. */
  hash: string;
  revision: string;
  totalKey: number;
  totalSize: number;
  /** SHA-256 of the whole file (the journal's restore point keeps it). */
  sha256: string;
  kind: 'etcd' | 'simulated';
}

/** A simulated member's snapshot: its JSON state (see src/kv/member/main.ts), padding, trailer. */
export interface SimSnapshot {
  kvsnapshot: 1;
  member: string;
  revision: number;
  clusterVersion: string;
  kvs: Record<string, { value: string; create_revision: number; mod_revision: number; version: number }>;
}

export function isSimSnapshot(data: Buffer): boolean {
  return data.subarray(0, 14).toString() === '{"kvsnapshot":';
}

export function parseSimSnapshot(data: Buffer): SimSnapshot {
  return parseJsonSafe(data.subarray(0, data.length - 32).toString().trimEnd()) as SimSnapshot;
}

/**
 * Reads and verifies a snapshot file: it must exist, end in the SHA-256 of the rest (etcd's trailer),
 * and be a bbolt database etcdctl can read (or a simulated member's snapshot). Any failure is an
 * OpsError naming the file and what to do.
 */
export async function snapshotStatus(file: string, o: { exec: Exec; etcdctl?: string; timeoutMs?: number }): Promise<SnapshotStatus> {
  const st = await stat(file).catch((err: NodeJS.ErrnoException) => {
    throw new OpsError(`snapshot ${file}: ${err.code === 'ENOENT' ? 'no such file' : err.code}`, 1, { code: 'snapshot_missing', hint: 'give the path of a snapshot file (opsctl kv snapshot save FILE makes one; kv status names the upgrade\'s restore point)' });
  });
  if (!st.isFile()) throw new OpsError(`snapshot ${file} is not a file`, 1, { code: 'snapshot_missing', hint: 'give the path of a snapshot file' });
  const data = await readFile(file);
  try {
    verifyTrailer(data);
  } catch (err) {
    throw new OpsError(`snapshot ${file} fails its hash check: ${(err as Error).message}`, 1, {
      code: 'snapshot_corrupt',
      hint: 'the file is not an etcd snapshot or was damaged: use another copy, or take a new one with opsctl kv snapshot save FILE',
    });
  }
  const sha256 = createHash('sha256').update(data).digest('hex');
  if (isSimSnapshot(data)) {
    let s: SimSnapshot;
    try {
      s = parseSimSnapshot(data);
    } catch (err) {
      throw new OpsError(`snapshot ${file}: unreadable simulated snapshot: ${(err as Error).message}`, 1, { code: 'snapshot_corrupt', hint: 'take a new one with opsctl kv snapshot save FILE' });
    }
    const body = data.subarray(0, data.length - 32);
    return { file, hash: crc32(body).toString(16), revision: String(s.revision), totalKey: Object.keys(s.kvs ?? {}).length, totalSize: data.length, sha256, kind: 'simulated' };
  }
  const etcdctl = findEtcdctl(o.etcdctl);
  if (!etcdctl) {
    throw new OpsError(`snapshot ${file}: reading an etcd snapshot needs etcdctl`, 1, { code: 'no_etcdctl', hint: 'install etcd-client (Debian) or pass --etcdctl PATH' });
  }
  const r = await o.exec(etcdctl, ['snapshot', 'status', file, '-w', 'json'], { env: etcdctlEnv(), extendEnv: false, timeout: o.timeoutMs ?? 60_000, reject: false, stdin: 'ignore' });
  if (r.exitCode !== 0) {
    const last = String(r.stderr ?? '').trim().split('\n').pop() || `exit ${r.exitCode}`;
    throw new OpsError(`snapshot ${file} is not an etcd database etcdctl can read: ${last}`, 1, { code: 'snapshot_corrupt', hint: 'use another copy, or take a new one with opsctl kv snapshot save FILE' });
  }
  // uint64 hash and revision: read as text so nothing loses precision.
  const text = String(r.stdout);
  const num = (k: string) => /"?(\d+)"?/.exec(new RegExp(`"${k}"\\s*:\\s*("?\\d+"?)`).exec(text)?.[1] ?? '')?.[1];
  const hash = num('hash');
  const revision = num('revision');
  const totalKey = num('totalKey');
  const totalSize = num('totalSize');
  if (hash === undefined || revision === undefined || totalKey === undefined || totalSize === undefined) {
    throw new OpsError(`snapshot ${file}: etcdctl snapshot status printed no figures: ${text.slice(0, 200)}`, 1, { code: 'snapshot_status', hint: 'check the etcdctl given with --etcdctl' });
  }
  return { file, hash: BigInt(hash).toString(16), revision, totalKey: Number(totalKey), totalSize: Number(totalSize), sha256, kind: 'etcd' };
}
