import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { OpsError, UsageError } from '../../core/errors.js';
import { KvClient } from '../../kv/cluster/client.js';
import { findEtcdctl } from '../../kv/cluster/etcdctl.js';
import { saveSnapshot, type SnapshotResult, type SnapshotTee } from '../../kv/snapshot/save.js';
import { resolveConnection } from './lib/connection.js';
import { openOffsite, s3Settings } from './lib/offsite.js';
import { uploadFile, type SnapshotUpload } from '../../kv/offsite/upload.js';
import { normalizeEndpoint, openSession, resolveCluster, timeouts } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './snapshot-save.spec.js';

export type Options = OptionsOf<typeof spec>;

/**
 * Where the snapshot goes: an existing directory (never created on the fly: a typo would scatter
 * backups), and no existing file unless --force. Checked before any member is contacted.
 */
export async function checkTarget(file: string, { force }: { force: boolean }): Promise<void> {
  const { stat } = await import('node:fs/promises');
  const dir = dirname(file);
  const dirStat = await stat(dir).catch((err: NodeJS.ErrnoException) => err);
  if (dirStat instanceof Error) {
    const code = dirStat.code;
    if (code === 'ENOENT')
      throw new UsageError(`${file}: the directory ${dir} does not exist`, { field: 'file', hint: `create it first (mkdir -p ${dir}) or choose another path` });
    if (code === 'ENOTDIR')
      throw new UsageError(`${file}: a part of ${dir} is a file, not a directory`, { field: 'file', hint: 'choose a path inside a directory' });
    throw new UsageError(`${file}: cannot use the directory ${dir} (${code})`, { field: 'file', hint: 'choose a path in a directory you can write' });
  }
  if (!dirStat.isDirectory()) throw new UsageError(`${file}: ${dir} is a file, not a directory`, { field: 'file', hint: 'choose a path inside a directory' });
  const existing = await stat(file).catch(() => undefined);
  if (existing?.isDirectory())
    throw new UsageError(`${file} is a directory`, { field: 'file', hint: 'give the path of the snapshot file to write, e.g. backup.db' });
  if (existing && !force) throw new UsageError(`${file} already exists`, { field: 'file', hint: 'pass --force to overwrite it, or choose another name' });
}

/**
 * `kv snapshot save FILE`: from ONE healthy member, via etcdctl (clean env, ETCDCTL_API=3, a
 * timeout) for real etcd when installed, else the gateway's snapshot stream decoded to disk as it
 * comes; verified before FILE appears (SHA-256 trailer, every page and bucket walked, revision between
 * the member's before and after, live keys equal to the member's count at that revision; see
 * kv/snapshot/save.ts), in constant memory whatever its size. No part file is left on failure.
 */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  if (!['auto', 'etcdctl', 'gateway'].includes(opts.via)) throw new UsageError(`--via: "${opts.via}" is not one of auto, etcdctl, gateway`, { field: '--via' });
  if (!opts.file && !opts.to)
    throw new UsageError('kv snapshot save needs FILE, --to s3://BUCKET/PREFIX, or both', { field: 'file', hint: 'e.g. opsctl kv snapshot save backup.db' });
  // Off-host: the store reached and a probe object written and deleted before any member is asked.
  const offsite = opts.to ? await openOffsite(opts.to, '--to', s3Settings(opts)) : undefined;
  const temp = opts.file ? undefined : await tempDir();
  // Ctrl-C ends the process without unwinding this function: these go on the way out
  if (temp) ctx.onCleanup(() => rm(temp, { recursive: true, force: true }));
  let upload: SnapshotUpload | undefined;
  try {
    const target = opts.file ? resolve(ctx.cwd, opts.file) : join(temp!, 'snapshot.db');
    if (opts.file) await checkTarget(target, { force: Boolean(opts.force) });
    if (!offsite) return (await saveOne(opts, ctx, target)).result;
    // The upload runs while the snapshot is taken: each part goes as soon as it is on disk, and the
    // object is completed only once the snapshot is verified (nothing is listed before its manifest).
    // It is named by the time it was begun, to the millisecond (the revision, known only after, is in
    // the manifest).
    const name = `snapshot-${new Date().toISOString().replace(/[-:]/g, '')}.db`;
    upload = await offsite.store.beginSnapshot(offsite.target, name, ctx.abort.signal);
    ctx.onCleanup(async () => void (await upload?.abort()));
    // Without FILE the snapshot is only for the upload: once the upload has failed, it is not finished for nothing.
    const stop = new AbortController();
    const sending = upload;
    const tee = opts.file ? sending : { write: (c: Buffer) => sending.write(c).catch(stopOn), end: () => sending.end().catch(stopOn) };
    function stopOn(err: unknown): never {
      stop.abort(err);
      throw err;
    }
    const { result: r, snap } = await saveOne(opts, ctx, target, tee, stop.signal).catch((err: unknown) => {
      throw stop.signal.aborted ? stop.signal.reason : err;
    });
    const d = r.data as { sha256: string; revision: string; bytes: number; endpoint: string };
    const facts = { bytes: d.bytes, sha256: d.sha256, revision: d.revision, endpoint: d.endpoint };
    if (snap.teeError) throw snap.teeError;
    // A snapshot that could not be followed whole as it was written is sent again from the verified file.
    let sent;
    if (snap.teed) sent = await upload.finish(facts, target);
    else {
      await upload.abort();
      upload = await offsite.store.beginSnapshot(offsite.target, name, ctx.abort.signal);
      sent = await uploadFile(upload, target, facts, ctx.abort.signal);
    }
    upload = undefined;
    const m = sent.manifest;
    const url = `s3://${offsite.target.bucket}/${m.key}`;
    const how =
      sent.verifiedBy === 'store-checksum'
        ? `the store's own ${m.storeChecksum?.algorithm ?? 'SHA256'} checksum of what it received`
        : `read back and hashed (${sent.readBackWhy ?? 'no checksum from the store'})`;
    return {
      data: {
        ...d,
        ...(opts.file ? {} : { file: null }),
        uploaded: {
          url,
          bytes: m.bytes,
          sha256: m.sha256,
          manifest: `${url}.manifest.json`,
          streamed: snap.teed,
          verifiedBy: sent.verifiedBy,
          storeChecksum: m.storeChecksum ?? null,
          ...(sent.readBackWhy ? { readBackWhy: sent.readBackWhy } : {}),
        },
      },
      message: `${opts.file ? r.message : (r.message ?? '').replace(/^snapshot saved to \S+:/, 'snapshot taken:')}; uploaded to ${url} (${m.bytes} bytes, SHA-256 ${m.sha256.slice(0, 12)}…; verified on the store: ${how})`,
      text: '',
    };
  } finally {
    // an upload left by a failure elsewhere (the snapshot itself): aborted, and said when it could not be
    const left = upload ? await upload.abort() : undefined;
    if (left && !upload!.reported && !left.startsWith('multipart upload aborted'))
      ctx.io.err(`${ctx.io.colorErr.yellow('!')} the upload to ${upload!.url}: ${left}`);
    if (temp) await rm(temp, { recursive: true, force: true });
  }
}

/** Where a snapshot without FILE is written before and while it is uploaded: a new directory under $TMPDIR. */
async function tempDir(): Promise<string> {
  const base = tmpdir();
  try {
    return await mkdtemp(join(base, 'opsctl-snapshot-'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new OpsError(`cannot make a temporary directory for the snapshot in ${base} (${code})`, 1, {
      code: 'snapshot_file',
      hint: `set TMPDIR to a directory you can write with room for the snapshot, or give FILE (kv snapshot save FILE --to …) to keep it there`,
    });
  }
}

async function saveOne(
  opts: Options,
  ctx: Context,
  target: string,
  tee?: SnapshotTee,
  stop?: AbortSignal,
): Promise<{ result: CommandResult; snap: SnapshotResult }> {
  const t = timeouts(opts);
  const given = opts.endpoint ? normalizeEndpoint(opts.endpoint, '--endpoint') : undefined;
  const resolved = given ? undefined : await resolveCluster(ctx, opts);
  const session = resolved ? resolved.session : openSession(ctx, await resolveConnection(ctx, opts));
  let endpoint = given;
  /** Why each member asked was passed over, for the message when none serves. */
  const passed: string[] = [];
  if (resolved) {
    for (const m of resolved.cluster.members) {
      const h = await new KvClient(m.endpoint, { timeoutMs: t.requestMs, session }).health().catch((err: unknown) => {
        // refused credentials are the operator's to hear about, not a sick member to skip
        if (err instanceof OpsError && err.code === 'auth_failed') throw err;
        return { healthy: false, detail: err instanceof Error ? err.message : String(err) };
      });
      if (h.healthy) {
        endpoint = m.endpoint;
        break;
      }
      passed.push(`${m.name} (${m.endpoint}): ${h.detail}`);
    }
  }
  if (!endpoint)
    throw new OpsError(`no healthy member to take a snapshot from: ${passed.join('; ')}`, 1, {
      hint: 'check with: opsctl kv health (a member between leaders answers again once one is elected; try again then)',
    });
  const c = new KvClient(endpoint, { timeoutMs: t.requestMs, debug: ctx.debugSink, session });
  const real = (await c.version()).real;
  const etcdctl = opts.via === 'gateway' ? undefined : findEtcdctl(opts.etcdctl);
  if (opts.via === 'etcdctl' && !etcdctl) throw new UsageError('--via etcdctl: etcdctl not found', { hint: 'install etcd-client or pass --etcdctl PATH' });
  const before = (await c.status()).revision;
  const snap = await saveSnapshot({
    endpoint,
    session: session,
    file: target,
    timeoutMs: t.snapshotMs,
    etcdctl: opts.via === 'etcdctl' || (opts.via === 'auto' && real) ? etcdctl : undefined,
    exec: await ctx.exec(),
    minRevision: before,
    signal: stop ? AbortSignal.any([ctx.abort.signal, stop]) : ctx.abort.signal,
    tee,
  }).catch((err) => {
    const e = err as NodeJS.ErrnoException;
    // A file-system error is about the path, not the member.
    if (!(err instanceof OpsError) && e.syscall && e.path) {
      throw new OpsError(`cannot write the snapshot ${target}: ${e.code} on ${e.path}`, 1, {
        code: 'snapshot_file',
        hint: 'choose a path in a directory you can write, with space for the snapshot',
      });
    }
    throw err instanceof OpsError
      ? err
      : new OpsError((err as Error).message, 1, { code: 'snapshot', hint: 'try another member with --endpoint, or check it with opsctl kv status' });
  });
  const m = snap.member;
  const matched =
    m.keys !== undefined
      ? `, ${snap.status.liveKeys} live keys as the member counts at that revision`
      : m.note
        ? ` (not compared with the member: ${m.note})`
        : '';
  const result: CommandResult = {
    data: {
      file: snap.file,
      bytes: snap.bytes,
      revision: snap.revision,
      via: snap.via,
      endpoint,
      sha256: snap.status.sha256,
      sampledRevision: before,
      liveKeys: snap.status.liveKeys,
      totalKey: snap.status.totalKey,
      verified: snap.status.verified,
      member: m,
    },
    message: `snapshot saved to ${snap.file}: ${snap.bytes} bytes via ${snap.via}, revision ${snap.revision} (≥ ${before}${m.revisionAfter !== undefined ? `, ≤ ${m.revisionAfter}` : ''})${matched}; verified: ${snap.status.verified}`,
    text: '',
  };
  return { result, snap };
}
