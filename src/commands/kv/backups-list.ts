import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { findBackups, humanBytes } from '../../kv/backups/backups.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './backups-list.spec.js';
import { readOffsite, s3Settings } from './lib/offsite.js';
import type { OffsiteLeftover } from '../../kv/offsite/store.js';
import type { S3Settings } from '../../kv/offsite/target.js';

export type Options = OptionsOf<typeof spec>;

/** `kv backups list`: every data-dir backup, snapshot and kept data dir opsctl made here, by run. */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  if (opts.from) return listOffsite(opts.from, s3Settings(opts));
  const runs = findBackups(ctx.paths.data);
  const rows = runs.flatMap((r) =>
    r.items.map((i) => ({
      cluster: r.cluster,
      run: r.run,
      runKind: r.kind,
      kind: i.kind,
      member: i.member,
      bytes: i.measured === false ? null : i.bytes,
      size: i.measured === false ? 'not known' : humanBytes(i.bytes),
      /** Why a copy's size on its host is not known (its host not reached, its path not in the template, its run not finished). */
      sizeUnknown: i.sizeUnknown ?? null,
      host: i.host ?? 'here',
      date: i.date,
      path: i.path,
      journal: r.journal?.file ?? null,
      journalStatus: r.journal?.status ?? null,
      neededBy: r.neededBy ?? null,
    })),
  );
  const onHosts = rows.filter((r) => r.kind === 'host-copy');
  const total = runs.reduce((n, r) => n + r.bytes, 0) - onHosts.reduce((n, r) => n + (r.bytes ?? 0), 0);
  const hostBytes = onHosts.reduce((n, r) => n + (r.bytes ?? 0), 0);
  const unknown = onHosts.filter((r) => r.bytes === null);
  const hosts = onHosts.length
    ? `; and ${onHosts.length} data-dir cop${onHosts.length === 1 ? 'y' : 'ies'} on the members' hosts (${[...new Set(onHosts.map((r) => r.host))].join(', ')}), made by the driver's backup template: ${
        unknown.length === onHosts.length ? 'size not known' : `${humanBytes(hostBytes)} (${hostBytes} bytes) as du measured them there`
      }${unknown.length && unknown.length < onHosts.length ? `, ${unknown.length} of them not known` : ''}${unknown.length ? ` (${[...new Set(unknown.map((r) => r.sizeUnknown))].join('; ')})` : ''}`
    : '';
  return {
    data: rows,
    columns: [
      { key: 'run' },
      { key: 'kind' },
      { key: 'member' },
      { key: 'size' },
      { key: 'host' },
      { key: 'date' },
      { key: 'journalStatus', header: 'journal' },
      { key: 'path' },
    ],
    message: runs.length
      ? `${runs.length} run(s), ${rows.length - onHosts.length} backup(s), ${humanBytes(total)} (${total} bytes) under ${ctx.paths.data}${hosts}; opsctl kv backups prune --keep N removes older runs`
      : `no backups under ${ctx.paths.data}`,
  };
}

/**
 * The complete backups under an s3:// place (those with a manifest: a half-written upload is never
 * listed), newest first, each held against its object on the store (its size, and the checksum the
 * store gave at the upload where it gives one): a mismatch is marked, and counted in the closing line.
 * What unfinished saves hold there (a save under way, or one interrupted) is counted too, with the
 * prune that removes it.
 */
async function listOffsite(from: string, settings: S3Settings): Promise<CommandResult> {
  const { store, target } = await readOffsite(from, '--from', settings);
  const { backups: found, leftovers, uploadsUnlisted, sizes } = await store.scan(target, new Date(), { uploadsIfAllowed: true });
  const checks = await store.check(target.bucket, found, sizes);
  const rows = found.map((m, i) => {
    const c = checks[i]!;
    return {
      url: `s3://${target.bucket}/${m.key}`,
      bytes: m.bytes,
      size: humanBytes(m.bytes),
      date: m.createdAt,
      revision: m.revision,
      sha256: m.sha256,
      run: m.run ?? null,
      label: m.label ?? null,
      check: c.status,
      checked: c.checked,
      problem: c.problem ?? null,
    };
  });
  const total = found.reduce((n, m) => n + m.bytes, 0);
  const bad = rows.filter((r) => r.check !== 'ok');
  type Row = (typeof rows)[number];
  return {
    data: rows,
    columns: [
      { key: 'date' },
      { key: 'revision' },
      { key: 'size' },
      { key: 'run' },
      { key: 'label' },
      { key: 'check', get: (r: Row) => (r.check === 'ok' ? `ok (${r.checked.join(', ')})` : `${r.check.toUpperCase()}: ${r.problem ?? ''}`) },
      { key: 'url' },
    ],
    message: [
      rows.length
        ? `${rows.length} backup(s), ${humanBytes(total)} (${total} bytes) under ${from}; opsctl kv backups prune --from ${from} --keep N removes older ones`
        : `no backups under ${from}`,
      bad.length ? `${bad.length} backup(s) do not match their manifest (${bad.map((r) => r.url).join(', ')}): kv restore --from ${from} skips them` : '',
      unfinished(from, leftovers),
      uploadsUnlisted ? `(unfinished multipart uploads not counted: ${uploadsUnlisted}; counting them needs s3:ListBucketMultipartUploads)` : '',
    ]
      .filter(Boolean)
      .join('\n'),
  };
}

/** The closing line's count of what unfinished saves left, the oldest first begun, and the prune that removes it. */
function unfinished(from: string, leftovers: OffsiteLeftover[]): string {
  if (!leftovers.length) return '';
  const uploads = leftovers.filter((l) => l.kind === 'upload').length;
  const objects = leftovers.length - uploads;
  const what = [uploads ? `${uploads} unfinished multipart upload(s)` : '', objects ? `${objects} snapshot object(s) without a manifest` : '']
    .filter(Boolean)
    .join(' and ');
  const oldest = leftovers.map((l) => l.since).sort()[0]!;
  return `also ${what}, not backups (a save under way, or one interrupted; the oldest begun ${oldest}): opsctl kv backups prune --from ${from} --stale-after 24h removes those begun over a day ago`;
}
