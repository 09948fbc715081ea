import { open, stat } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { OpsError } from '../../core/errors.js';
import { parseJsonSafe } from '../cluster/parse.js';
import { BoltError } from './bbolt.js';
import { etcdDbFiguresOfFile, type EtcdDbFigures } from './etcd-db.js';
import { checkTrailerOfFile, trailerProblem, type TrailerCheck } from './file.js';
import { crossCheckSnapshot, type SnapshotTool } from './crosscheck.js';

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
  /** How the file was verified: the structural walk (pages), and etcd's own tool when one ran. */
  verified: string;
}

/** A simulated member's snapshot: its JSON state (see src/kv/member/main.ts), padding, trailer. */
export interface SimSnapshot {
  kvsnapshot: 1;
  member: string;
  revision: number;
  clusterVersion: string;
  kvs: Record<string, { value: string; create_revision: number; mod_revision: number; version: number }>;
}

/** A simulated member's snapshot is its whole JSON state: small by construction (the sandbox's members). */
const SIM_MAX_BYTES = 64 * 1024 * 1024;

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

export interface SnapshotStatusOptions {
  /** etcd's own tool to compare the figures with (etcdutl 3.5+, or etcdctl's `snapshot status`). */
  crossCheck?: SnapshotTool;
  /** Skip etcdctl's CRC-32C hash (a save that compares with the member instead): `hash` is then ''. */
  noHash?: boolean;
  signal?: AbortSignal;
  /** The file's trailer as its writer already checked it (kv snapshot save hashes while it saves): not read again. */
  trailer?: TrailerCheck;
}

const corrupt = (file: string, what: string) =>
  new OpsError(`snapshot ${file} is not an etcd database: ${what}`, 1, {
    code: 'snapshot_corrupt',
    hint: 'use another copy, or take a new one with opsctl kv snapshot save FILE',
  });

/**
 * Reads and verifies a snapshot file from disk, streamed (memory does not grow with its size): it
 * must end in the SHA-256 of the rest (etcd's trailer), and be either an etcd bbolt database whose
 * every page and bucket a restore reads is whole (src/kv/snapshot/etcd-db.ts: meta checksums, freelist,
 * branch/leaf pages, the key bucket's revisions; figures tested equal to etcdctl's) or a simulated
 * member's snapshot. With `crossCheck`, etcd's own tool must print the same figures. Any failure is
 * an OpsError naming the file, what is wrong and the fix.
 */
export async function snapshotStatus(file: string, o: SnapshotStatusOptions = {}): Promise<SnapshotStatus> {
  const st = await stat(file).catch((err: NodeJS.ErrnoException) => {
    throw new OpsError(`snapshot ${file}: ${err.code === 'ENOENT' ? 'no such file' : err.code}`, 1, {
      code: 'snapshot_missing',
      hint: "give the path of a snapshot file (opsctl kv snapshot save FILE makes one; kv status names the upgrade's restore point)",
    });
  });
  if (!st.isFile()) throw new OpsError(`snapshot ${file} is not a file`, 1, { code: 'snapshot_missing', hint: 'give the path of a snapshot file' });
  const t = o.trailer && o.trailer.size === st.size ? o.trailer : await checkTrailerOfFile(file, o.signal);
  const problem = trailerProblem(t);
  if (problem) {
    throw new OpsError(`snapshot ${file} fails its hash check: ${problem}`, 1, {
      code: 'snapshot_corrupt',
      hint: 'the file is not an etcd snapshot or was damaged: use another copy, or take a new one with opsctl kv snapshot save FILE',
    });
  }
  const head = Buffer.alloc(14);
  const fh = await open(file, 'r');
  try {
    await fh.read(head, 0, 14, 0);
    if (isSimSnapshot(head)) {
      if (t.size > SIM_MAX_BYTES) throw corrupt(file, `a simulated member's snapshot of ${t.size} bytes (at most ${SIM_MAX_BYTES})`);
      const data = await fh.readFile();
      let s: SimSnapshot;
      try {
        s = parseSimSnapshot(data);
      } catch (err) {
        throw new OpsError(`snapshot ${file}: unreadable simulated snapshot: ${(err as Error).message}`, 1, {
          code: 'snapshot_corrupt',
          hint: 'take a new one with opsctl kv snapshot save FILE',
        });
      }
      const keys = Object.keys(s.kvs ?? {}).length;
      return {
        file,
        hash: crc32(data.subarray(0, data.length - 32)).toString(16),
        revision: String(s.revision),
        totalKey: keys,
        totalSize: data.length,
        sha256: t.sha256,
        kind: 'simulated',
        liveKeys: keys,
        clusterVersion: s.clusterVersion || undefined,
        members: [{ id: '', name: s.member, peerURLs: [] }],
        verified: 'SHA-256 trailer, JSON state',
      };
    }
  } finally {
    await fh.close();
  }
  let f: EtcdDbFigures;
  try {
    f = etcdDbFiguresOfFile(file, t.size - 32, { hash: !o.noHash || Boolean(o.crossCheck) });
  } catch (err) {
    if (err instanceof BoltError) throw corrupt(file, err.message);
    throw err;
  }
  let verified = `SHA-256 trailer; ${f.pages.pages + 2} pages walked (meta checksums, ${f.pages.free ? 'freelist, ' : ''}every bucket's pages, the key bucket's revisions)`;
  if (o.crossCheck) {
    const mismatch = await crossCheckSnapshot(file, o.crossCheck, f);
    if (mismatch) throw corrupt(file, mismatch);
    verified += `; ${o.crossCheck.name} snapshot status agrees`;
  }
  return {
    file,
    hash: o.noHash && !o.crossCheck ? '' : f.hash.toString(16),
    revision: f.revision,
    totalKey: f.totalKey,
    totalSize: f.totalSize,
    sha256: t.sha256,
    kind: 'etcd',
    liveKeys: f.liveKeys,
    clusterVersion: f.clusterVersion,
    members: f.members,
    verified,
  };
}
