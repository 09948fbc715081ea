import { createHash } from 'node:crypto';
import { copyFile, mkdir, open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { OpsError } from '../../core/errors.js';
import { KvClient } from '../cluster/client.js';
import type { KvSession } from '../cluster/session.js';
import { countKeys } from '../cluster/keys.js';
import { etcdctlEnv, etcdctlTlsArgs } from '../cluster/etcdctl.js';
import { CHUNK, checkTrailerOfFile, TrailerHasher, trailerProblem, type SnapshotTee, type TrailerCheck } from './file.js';

export type { SnapshotTee } from './file.js';
import { snapshotStatus, type SnapshotStatus } from './status.js';
import { snapshotTool } from './crosscheck.js';
import { snapshotToFile } from './stream.js';

type Exec = typeof import('execa').execa;

/** The member's own figures when the snapshot was taken, and what the file says. */
export interface MemberFigures {
  /** The member's revision sampled before the snapshot and read again after it. */
  revisionBefore: string;
  revisionAfter?: string;
  /** Live keys the member counts at the snapshot's revision (undefined: not compared, see `note`). */
  keys?: number;
  note?: string;
}

export interface SnapshotResult {
  file: string;
  bytes: number;
  /** The store revision the snapshot holds. */
  revision: string;
  via: 'etcdctl' | 'gateway';
  /** The file as verified (figures, SHA-256, how). */
  status: SnapshotStatus;
  member: MemberFigures;
  /** With `tee`: every byte of FILE went through it, in order (false: the caller sends FILE itself). */
  teed: boolean;
  /** What `tee` threw, if it did (it was not called again after). */
  teeError?: Error;
}

export interface SnapshotOptions {
  endpoint: string;
  /** The cluster's connection: the gateway's pool, etcdctl's TLS flags and user. */
  session: KvSession;
  file: string;
  timeoutMs: number;
  /** Path of etcdctl to use, or undefined for the HTTP gateway. */
  etcdctl?: string;
  exec: Exec;
  /** The revision sampled before: the snapshot must hold at least this one. */
  minRevision?: string;
  /**
   * The member whose own figures verify the file (its key count at the snapshot's revision, its
   * revision after): the one about to stop, when the snapshot came from the leader. Default: `endpoint`.
   */
  figuresFrom?: string;
  /**
   * etcdctl (or the etcdutl beside it) to cross-check the file with. Default: none, since the file is
   * compared with the member's own revision and key count; `kv snapshot status` cross-checks.
   */
  crossCheck?: string;
  signal?: AbortSignal;
  /**
   * Handed each chunk of the snapshot as it is written, in order (an upload under way while the
   * snapshot is still being taken). A tee that throws is not called again: see `teed`, `teeError`.
   */
  tee?: SnapshotTee;
}

export class SnapshotError extends Error {}

/** The temporary files a save of FILE writes: ours, and etcdctl's own (it writes PATH.part, then renames). */
export function partFiles(file: string): string[] {
  return [`${file}.part`, `${file}.part.part`];
}

/**
 * Saves a snapshot from one member and verifies it before FILE appears: streamed to FILE.part
 * (etcdctl writes it, or the gateway's stream is decoded chunk by chunk to disk), the SHA-256
 * trailer checked by streaming the file, every page and bucket walked from disk (snapshot-status.ts),
 * its revision at least the one sampled before and at most the member's after, and its live keys
 * equal to the member's own count at that revision. Memory stays constant whatever the size. On any
 * failure the part files are removed (a run killed outright leaves them to the next save of FILE,
 * which removes them first).
 */
export async function saveSnapshot(opts: SnapshotOptions): Promise<SnapshotResult> {
  await mkdir(dirname(opts.file), { recursive: true, mode: 0o700 });
  const [part] = partFiles(opts.file) as [string];
  await removeParts(opts.file);
  const client = new KvClient(opts.endpoint, { timeoutMs: opts.timeoutMs, session: opts.session });
  let teeError: Error | undefined;
  const fail = (err: unknown) => (teeError = err instanceof Error ? err : new Error(`the snapshot's upload failed: ${String(err)}`));
  const tee: SnapshotTee | undefined = opts.tee && {
    write: async (chunk) => void (teeError === undefined && (await opts.tee!.write(chunk).catch(fail))),
    end: async () => void (teeError === undefined && (await opts.tee!.end().catch(fail))),
  };
  let teed = Boolean(tee);
  try {
    let via: SnapshotResult['via'];
    let trailer: TrailerCheck;
    if (opts.etcdctl) {
      via = 'etcdctl';
      // Exactly one endpoint: etcdctl must not fail over to another member mid-snapshot.
      const saving = opts.exec(
        opts.etcdctl,
        [
          '--endpoints',
          opts.endpoint,
          ...etcdctlTlsArgs(opts.session.conn),
          '--dial-timeout',
          '5s',
          '--command-timeout',
          `${Math.ceil(opts.timeoutMs / 1000)}s`,
          'snapshot',
          'save',
          part,
        ],
        {
          env: etcdctlEnv(opts.session.conn),
          extendEnv: false,
          timeout: opts.timeoutMs + 5000,
          reject: false,
          stdin: 'ignore',
          ...(opts.signal ? { cancelSignal: opts.signal } : {}),
        },
      );
      // The file hashed as etcdctl writes it (its own part file, renamed when done): no second read after.
      const hashing = hashWhileWritten(partFiles(opts.file)[1]!, saving, tee);
      const r = await saving;
      const early = await hashing;
      if (r.exitCode !== 0)
        throw new SnapshotError(
          `etcdctl snapshot save failed (${r.exitCode === undefined ? `killed by ${r.signal ?? 'a signal'}` : `exit ${r.exitCode}`}): ${String(r.stderr).trim().split('\n').pop()}`,
        );
      const st = await stat(part);
      const followed = early && early.ino === st.ino && early.trailer.size === st.size;
      if (!followed) teed = false;
      trailer = followed ? early.trailer : await checkTrailerOfFile(part, opts.signal);
    } else {
      via = 'gateway';
      trailer = await snapshotToFile(client, part, opts.timeoutMs, tee, opts.signal);
    }
    if (teeError !== undefined) teed = false;
    const problem = trailerProblem(trailer);
    if (problem) throw new SnapshotError(`snapshot from ${opts.endpoint} is corrupt: ${problem}`);
    let status: SnapshotStatus;
    try {
      const tool = snapshotTool(opts.crossCheck, opts.exec);
      status = await snapshotStatus(part, { crossCheck: tool, noHash: !tool, signal: opts.signal, trailer });
    } catch (err) {
      throw new SnapshotError(`snapshot from ${opts.endpoint} fails verification: ${(err as Error).message.replace(/^snapshot \S+ /, '')}`);
    }
    const revision = status.revision;
    const figures =
      opts.figuresFrom && opts.figuresFrom !== opts.endpoint ? new KvClient(opts.figuresFrom, { timeoutMs: opts.timeoutMs, session: opts.session }) : client;
    const member = await checkedFigures(figures, status, { from: opts.endpoint, minRevision: opts.minRevision });
    await syncFile(part);
    await rename(part, opts.file);
    return {
      file: opts.file,
      bytes: trailer.size,
      revision,
      via,
      status: { ...status, file: opts.file },
      member,
      teed,
      ...(teeError !== undefined ? { teeError } : {}),
    };
  } catch (err) {
    await removeParts(opts.file);
    throw err;
  }
}

/**
 * The member's own figures around a snapshot that holds `status`, compared with it: at least the revision sampled
 * before (`minRevision`), at most the member's revision after, the same live keys at its revision.
 */
async function checkedFigures(c: KvClient, status: SnapshotStatus, { from, minRevision }: { from: string; minRevision?: string }): Promise<MemberFigures> {
  const revision = status.revision;
  // An empty keyspace: etcd's header revision starts at 1, `snapshot status` counts keys and says 0.
  const floor = minRevision === undefined ? undefined : BigInt(minRevision) <= 1n ? 0n : BigInt(minRevision);
  if (floor !== undefined && BigInt(revision) < floor) {
    throw new SnapshotError(`snapshot from ${from} holds revision ${revision}, older than the revision ${minRevision} sampled before it`);
  }
  const member = await memberFigures(c, status, minRevision);
  if (member.revisionAfter !== undefined && BigInt(revision) > BigInt(member.revisionAfter)) {
    throw new SnapshotError(`snapshot from ${from} holds revision ${revision}, beyond the member's own revision ${member.revisionAfter}`);
  }
  if (member.keys !== undefined && member.keys !== status.liveKeys) {
    throw new SnapshotError(
      `snapshot from ${from} holds ${status.liveKeys} live keys at revision ${revision}; the member counts ${member.keys} at that revision`,
    );
  }
  return member;
}

/**
 * A snapshot saveSnapshot verified earlier (snapshot/shelf.ts: one a check kept) made FILE's: verified against
 * `figuresFrom`'s own figures as a new one is, then moved there (renamed; copied and synced across file systems).
 */
export async function adoptSnapshot(
  kept: SnapshotResult,
  o: { session: KvSession; timeoutMs: number; file: string; figuresFrom: string; minRevision: string },
): Promise<SnapshotResult> {
  const c = new KvClient(o.figuresFrom, { timeoutMs: o.timeoutMs, session: o.session });
  const member = await checkedFigures(c, kept.status, { from: kept.file, minRevision: o.minRevision });
  await mkdir(dirname(o.file), { recursive: true, mode: 0o700 });
  const [part] = partFiles(o.file) as [string];
  await removeParts(o.file);
  try {
    await rename(kept.file, o.file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
    try {
      await copyFile(kept.file, part);
      await syncFile(part);
      await rename(part, o.file);
    } catch (e) {
      await removeParts(o.file);
      throw e;
    }
  }
  return { ...kept, file: o.file, status: { ...kept.status, file: o.file }, member, teed: false };
}

/**
 * Follows FILE while `writer` writes it from start to end (etcdctl's part file, renamed when it is
 * done: the descriptor keeps the same file), hashing each chunk once it is there (and handing it to
 * `tee`), and the rest after the writer ended. Undefined when the file never appeared or could
 * not be read: the caller hashes the finished file instead.
 */
export async function hashWhileWritten(file: string, writer: Promise<unknown>, tee?: SnapshotTee): Promise<{ trailer: TrailerCheck; ino: number } | undefined> {
  let ended = false;
  const end = writer.then(
    () => (ended = true),
    () => (ended = true),
  );
  const pause = () => Promise.race([end, new Promise((r) => setTimeout(r, 20))]);
  let fh: FileHandle | undefined;
  while (!fh) {
    const wasEnded = ended;
    fh = await open(file, 'r').catch(() => undefined);
    if (!fh && wasEnded) return undefined;
    if (!fh) await pause();
  }
  try {
    const h = new TrailerHasher();
    const buf = Buffer.alloc(CHUNK);
    let pos = 0;
    for (;;) {
      const wasEnded = ended;
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      if (bytesRead > 0) {
        h.update(buf.subarray(0, bytesRead));
        if (tee) await tee.write(buf.subarray(0, bytesRead));
        pos += bytesRead;
      } else if (wasEnded) break;
      else await pause();
    }
    if (tee) await tee.end();
    return { trailer: h.finish(), ino: (await fh.stat()).ino };
  } catch {
    return undefined;
  } finally {
    await fh.close();
  }
}

/** The part files of FILE gone (ours and etcdctl's); errors other than "not there" are reported. */
async function removeParts(file: string): Promise<void> {
  for (const p of partFiles(file)) await rm(p, { force: true });
}

async function syncFile(file: string): Promise<void> {
  const fh = await open(file, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * The member's own figures around the snapshot: its revision now (never below the snapshot's), and
 * for real etcd its count of live keys at the snapshot's revision (a count-only range at that
 * revision). What cannot be asked (auth on 3.2's gateway, a revision compacted since) is noted.
 */
async function memberFigures(c: KvClient, s: SnapshotStatus, before: string | undefined): Promise<MemberFigures> {
  const out: MemberFigures = { revisionBefore: before ?? '' };
  // The count first: a linearizable read, so a member a little behind the one that served the
  // snapshot (a follower, the snapshot from the leader) has applied the snapshot's revision by then.
  if (s.kind === 'etcd') {
    if (s.revision === '0') out.keys = 0;
    else {
      try {
        out.keys = await countKeys(c, s.revision);
      } catch (err) {
        const msg = err instanceof OpsError ? err.message : String(err);
        out.note = `the member's key count at revision ${s.revision} could not be read: ${msg}`;
      }
    }
  }
  try {
    out.revisionAfter = (await c.status()).revision;
  } catch (err) {
    out.note = `${out.note ? `${out.note}; ` : ''}the member's revision after the snapshot could not be read: ${(err as Error).message}`;
  }
  return out;
}

/** The last 32 bytes of an in-memory snapshot are the SHA-256 of everything before them (small files; files on disk stream: snapshot-file.ts). */
export function verifyTrailer(data: Buffer): void {
  if (data.length <= 32) throw new Error(`only ${data.length} bytes`);
  const got = createHash('sha256')
    .update(data.subarray(0, data.length - 32))
    .digest();
  const want = data.subarray(data.length - 32);
  if (!got.equals(want))
    throw new Error(`SHA-256 trailer mismatch (file says ${want.toString('hex').slice(0, 12)}…, content hashes to ${got.toString('hex').slice(0, 12)}…)`);
}
