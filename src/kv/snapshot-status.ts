import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { OpsError } from '../core/errors.js';
import { parseJsonSafe } from './parse.js';
import { etcdDbFigures, type EtcdDbFigures } from './bbolt.js';
import { verifyTrailer } from './snapshot.js';

/** What `etcdctl snapshot status` prints, plus the file's own SHA-256, its live keys and members. */
export interface SnapshotStatus {
  file: string;
  /** etcdctl's hash (CRC-32C over the buckets, keys and values), as a hex string like etcdctl's table. */
  hash: string;
  revision: string;
  totalKey: number;
  totalSize: number;
  /** SHA-256 of the whole file (the journal's restore point keeps it). */
  sha256: string;
  kind: 'etcd' | 'simulated';
  /** Keys alive at the snapshot's revision (what a restored cluster holds). */
  liveKeys: number;
  /** The cluster version recorded in the snapshot, when set. */
  clusterVersion?: string;
  /** The members the snapshot's cluster had (name, peer URLs): a snapshot of another cluster shows here. */
  members: Array<{ id: string; name: string; peerURLs: string[] }>;
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
  return parseJsonSafe(
    data
      .subarray(0, data.length - 32)
      .toString()
      .trimEnd(),
  ) as SimSnapshot;
}

/**
 * Reads and verifies a snapshot file: it must exist, end in the SHA-256 of the rest (etcd's trailer),
 * and be an etcd bbolt database (read directly: src/kv/bbolt.ts, the figures tested equal to etcdctl
 * 3.3.27's) or a simulated member's snapshot. Any failure is an OpsError naming the file and the fix.
 */
export async function snapshotStatus(file: string): Promise<SnapshotStatus> {
  const st = await stat(file).catch((err: NodeJS.ErrnoException) => {
    throw new OpsError(`snapshot ${file}: ${err.code === 'ENOENT' ? 'no such file' : err.code}`, 1, {
      code: 'snapshot_missing',
      hint: "give the path of a snapshot file (opsctl kv snapshot save FILE makes one; kv status names the upgrade's restore point)",
    });
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
      throw new OpsError(`snapshot ${file}: unreadable simulated snapshot: ${(err as Error).message}`, 1, {
        code: 'snapshot_corrupt',
        hint: 'take a new one with opsctl kv snapshot save FILE',
      });
    }
    const body = data.subarray(0, data.length - 32);
    const keys = Object.keys(s.kvs ?? {}).length;
    return {
      file,
      hash: crc32(body).toString(16),
      revision: String(s.revision),
      totalKey: keys,
      totalSize: data.length,
      sha256,
      kind: 'simulated',
      liveKeys: keys,
      clusterVersion: s.clusterVersion || undefined,
      members: [{ id: '', name: s.member, peerURLs: [] }],
    };
  }
  let f: EtcdDbFigures;
  try {
    f = etcdDbFigures(data.subarray(0, data.length - 32));
  } catch (err) {
    throw new OpsError(`snapshot ${file} is not an etcd database: ${(err as Error).message}`, 1, {
      code: 'snapshot_corrupt',
      hint: 'use another copy, or take a new one with opsctl kv snapshot save FILE',
    });
  }
  return {
    file,
    hash: f.hash.toString(16),
    revision: f.revision,
    totalKey: f.totalKey,
    totalSize: f.totalSize,
    sha256,
    kind: 'etcd',
    liveKeys: f.liveKeys,
    clusterVersion: f.clusterVersion,
    members: f.members,
  };
}
