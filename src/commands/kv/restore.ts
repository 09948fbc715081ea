import { mkdir, rename, rm } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { Context } from '../../context.js';
import { confirmDestructive, notDone } from '../../core/confirm.js';
import type { CommandResult } from '../../core/output.js';
import { OpsError, UsageError } from '../../core/errors.js';
import { fmtMs } from '../../kv/upgrade/options.js';
import { capabilitiesOf } from '../../kv/drivers/driver.js';
import { describeRestore, planRestore } from '../../kv/restore/restore.js';
import { runRestore } from '../../kv/restore/restore-run.js';
import { resolveCluster, timeouts } from './lib/shared.js';
import { clusterPorts } from './lib/rolling-options.js';
import { KNOWN_MINORS } from './upgrade.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './restore.spec.js';
import { readOffsite, s3Settings } from './lib/offsite.js';
import type { S3Settings } from '../../kv/offsite/target.js';
import type { OffsiteManifest } from '../../kv/offsite/manifest.js';

export type Options = OptionsOf<typeof spec>;

/**
 * `kv restore --snapshot FILE` (or `--from-hop MINOR`: the restore point an upgrade took before its
 * hop off MINOR, restored on MINOR with the binaries that hop's journal records): every member rebuilt from a verified snapshot (old data dirs kept),
 * started on --to-version, healthy, and checked against the snapshot. Everything that can be checked
 * is checked before a member is stopped; it warns that later writes are lost and asks (or --yes).
 */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  if (opts.toVersion !== undefined && (!/^\d+\.\d+$/.test(opts.toVersion) || !KNOWN_MINORS.includes(opts.toVersion))) {
    throw new UsageError(`--to-version: "${opts.toVersion}" is not a supported minor version`, {
      field: '--to-version',
      hint: `one of ${KNOWN_MINORS.join(', ')}, e.g. --to-version 3.2`,
    });
  }
  const sources = [opts.snapshot, opts.fromHop, opts.from].filter((v) => v !== undefined).length;
  if (sources !== 1) {
    throw new UsageError(sources ? '--snapshot, --from-hop and --from name two restore points' : 'kv restore needs the snapshot to restore', {
      field: sources ? (opts.from ? '--from' : '--from-hop') : '--snapshot',
      hint: 'give one: --snapshot FILE, --from s3://BUCKET/KEY, or --from-hop MINOR (the restore point an upgrade took before its hop off that minor, e.g. --from-hop 3.3)',
    });
  }
  if (opts.fromHop !== undefined && !KNOWN_MINORS.includes(opts.fromHop)) {
    throw new UsageError(`--from-hop: "${opts.fromHop}" is not a minor of the ladder`, { field: '--from-hop', hint: `one of ${KNOWN_MINORS.join(', ')}` });
  }
  const found = await resolveCluster(ctx, opts);
  const { cluster, driver } = found;
  let snapshot = opts.snapshot ? resolve(ctx.cwd, opts.snapshot) : '';
  let journalFile: string | undefined;
  let toVersion = opts.toVersion;
  if (opts.fromHop) {
    const { hopPoint } = await import('../../kv/restore/hop-points.js');
    const point = hopPoint(ctx.paths.data, cluster.key, opts.fromHop);
    snapshot = point.file;
    journalFile = point.journalFile;
    toVersion ??= point.version;
    ctx.io.err(`restore point of the hop ${point.hop}: ${point.file} (revision ${point.revision}), recorded in ${point.journalFile}`);
  }
  if (opts.from) {
    snapshot = await fetchOffsite(opts.from, s3Settings(opts), ctx);
  }
  const can = capabilitiesOf(driver);
  if (can.releases) {
    if (opts.targetBin)
      throw new UsageError(`--target-bin: the sandbox runs ${can.what} members`, { field: '--target-bin', hint: 'use --to-version 3.2 or 3.3' });
    const minors = Object.keys(can.releases);
    if (opts.toVersion && !minors.includes(opts.toVersion))
      throw new UsageError(`--to-version ${opts.toVersion}: ${can.what} members run ${minors.join(', ')} only`, { field: '--to-version' });
  }
  const o = {
    ...clusterPorts(ctx, found),
    snapshot,
    journalFile,
    toVersion,
    targetBin: opts.targetBin ? resolve(ctx.cwd, opts.targetBin) : undefined,
    timeouts: timeouts(opts),
    again: opts.again,
  };
  const plan = await planRestore(o);
  const text = describeRestore(plan);
  if (plan.done) {
    const d = plan.done;
    return { data: { status: 'already-restored', run: d.id, snapshot: d.snapshot.file, version: d.to, restoredAt: d.updatedAt, ...d.result }, message: text };
  }
  if (opts.dryRun) return { data: { status: 'planned', ...plan }, text: `${text}\n(--dry-run: nothing was changed)` };
  ctx.io.err(text);
  const what = {
    action: `rebuild the cluster from ${plan.snapshot.file} on ${plan.version}: every member is stopped and every write after revision ${plan.snapshot.revision} is lost`,
  };
  const decision = await confirmDestructive(ctx, { ...what, shown: text });
  if (decision !== 'proceed') return notDone(decision, what);
  ctx.handlesInterrupt = true; // a restore is not stopped half-way by Ctrl-C: every member is down in it
  const r = await runRestore(o, plan);
  return {
    data: r,
    text: r.members.map((m) => `${m.name}: ${m.detail}`).join('\n'),
    message: `${r.resumed ? `restore ${r.resumed} finished; ` : ''}cluster restored from ${r.snapshot}: ${r.members.length} members healthy on ${r.version} (cluster version ${r.clusterVersion}) after ${fmtMs(r.healthyMs)}, revision ${r.revision}, ${r.keys} keys (total ${fmtMs(r.totalMs)})`,
  };
}

/**
 * The backup at s3://bucket/key (a snapshot or its manifest named), or under a prefix the newest one
 * that verifies, downloaded into DATA/kv/downloads/ and checked against its manifest's size and SHA-256
 * before anything is planned or touched; the restore then verifies the file like any other. Under a
 * prefix, a backup whose object does not match its manifest (size, the store's checksum, or the
 * downloaded bytes' SHA-256) is skipped for the next older one, and each skip is said with its reason.
 */
async function fetchOffsite(from: string, settings: S3Settings, ctx: Context): Promise<string> {
  const { store, target } = await readOffsite(from, '--from', settings);
  const dir = join(ctx.paths.data, 'kv', 'downloads');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const fetchOne = async (manifest: OffsiteManifest) => {
    const file = join(dir, basename(manifest.key));
    const part = `${file}.part`;
    try {
      await store.download(target.bucket, manifest, part);
      await rename(part, file);
    } finally {
      await rm(part, { force: true });
    }
    ctx.io.err(
      `downloaded s3://${target.bucket}/${manifest.key} to ${file}: ${manifest.bytes} bytes, SHA-256 ${manifest.sha256.slice(0, 12)}… as its manifest says`,
    );
    return file;
  };
  if (target.prefix.endsWith('.db') || target.prefix.endsWith('.manifest.json')) return fetchOne(await store.manifestOf(target.bucket, target.prefix));
  const { backups, sizes } = await store.scan(target);
  if (!backups.length)
    throw new OpsError(`no backups under ${from}`, 1, { code: 's3_no_backup', hint: `list them with: opsctl kv backups list --from ${from}` });
  const checks = await store.check(target.bucket, backups, sizes);
  const skipped: string[] = [];
  for (const [i, m] of backups.entries()) {
    const url = `s3://${target.bucket}/${m.key}`;
    const c = checks[i]!;
    let why = c.status === 'ok' ? undefined : `${c.status}: ${c.problem ?? ''}`;
    if (!why) {
      try {
        return await fetchOne(m);
      } catch (err) {
        if (!(err instanceof OpsError) || err.code !== 's3_mismatch') throw err;
        why = `the download does not match its manifest: ${err.message.replace(`${url}: `, '')}`;
      }
    }
    skipped.push(`${url} (${m.createdAt})`);
    ctx.io.err(`${ctx.io.colorErr.yellow('!')} skipped ${url} (${m.createdAt}, revision ${m.revision}): ${why}`);
  }
  throw new OpsError(`no backup under ${from} verifies: ${skipped.length} skipped (${skipped.join(', ')})`, 1, {
    code: 's3_mismatch',
    hint: `each one's reason is above; list them with: opsctl kv backups list --from ${from}`,
  });
}
