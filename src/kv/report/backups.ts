/**
 * The backups of a run, counted: what it made (every snapshot and data-dir copy, removed since or not) and
 * what they hold on disk now (here, and on the members' hosts where the driver's backup template copied),
 * with what the default keeps. Pure: the files found on this machine and the run's records are given.
 */
import type { BackupRun } from '../backups/backups.js';
import type { BackupFate, DataCopy, Journal, JournalStep } from '../journal/journal.js';
import { KEPT_BY_DEFAULT } from '../upgrade/backup-guard.js';

/** A sum of backups: bytes, how many, and how many of them have no size known (counted, not summed). */
export interface BackupTally {
  bytes: number;
  snapshots: number;
  /** Data-dir copies: opsctl's own under its data directory, and the backup template's on the members' hosts. */
  copies: number;
  onHosts: number;
  /** Items whose size is not known (a host not reached, a copy whose path the template does not say). */
  unknown: number;
}

/** The backups a run made: their total size and where they are. */
export interface BackupsDoc {
  /** What the backups found on this machine take (`du -sB1`). */
  bytes: number;
  /** The directories that hold them. */
  dirs: string[];
  items: Array<{ kind: string; member: string; path: string; bytes: number }>;
  /** Backups made on the members' hosts (the command driver's backup template), each with its size there or why it is not known. */
  remote?: string;
  /** What became of the data-dir copies once their hops were done (removed, or kept and where). */
  copies?: BackupFate[];
  /** Everything the run made, removed since or not. */
  made: BackupTally;
  /** What its backups hold on disk now: here and on the members' hosts. */
  held: BackupTally;
  /** What the default keeps of a finished run (the rule that decided `held`). */
  keeps: string;
}

const tally = (): BackupTally => ({ bytes: 0, snapshots: 0, copies: 0, onHosts: 0, unknown: 0 });

/** Two tallies added (a ladder's hops). */
export function addTally(a: BackupTally, b: BackupTally): BackupTally {
  return {
    bytes: a.bytes + b.bytes,
    snapshots: a.snapshots + b.snapshots,
    copies: a.copies + b.copies,
    onHosts: a.onHosts + b.onHosts,
    unknown: a.unknown + b.unknown,
  };
}

/** A host copy's size for a line: its bytes, or why they are not known. */
function sized(c: DataCopy): string {
  return c.bytes !== undefined
    ? `${c.bytes} bytes${c.path ? ` at ${c.path}` : ''}`
    : `size not known: ${c.sizeUnknown ?? 'not measured (the run has not finished)'}`;
}

/**
 * The backups of the runs `ids` among `found` (the cluster's), and the data-dir backups made on the members'
 * hosts: every copy `copies` records (each attempt's, under its own {run}), else each member's backup step.
 * `snaps`: the runs' snapshot records (each taken, removed since or not).
 */
export function backupsMade(
  found: BackupRun[],
  ids: string[],
  steps: JournalStep[],
  fates: BackupFate[] = [],
  copies: DataCopy[] = [],
  snaps: Journal['snapshots'] = [],
): BackupsDoc {
  const mine = found.filter((r) => ids.includes(r.run));
  const items = mine.flatMap((r) => r.items.filter((i) => i.kind !== 'host-copy').map(({ kind, member, path, bytes }) => ({ kind, member, path, bytes })));
  const dirs = [...new Set(items.map((i) => dirOf(i.path)))];
  const localCopies = new Set(items.filter((i) => i.kind === 'data-dir').map((i) => i.member));
  const gone = (member: string, run?: string) =>
    fates.some((f) => f.removed && f.member === member && (f.run === undefined || run === undefined || f.run === run));
  const done = copies.filter((c) => c.status === 'done');
  // (on a member's host: measured there, or not measured and not found here)
  const onHost = (c: DataCopy) => c.host !== undefined || (c.path === undefined && !localCopies.has(c.member));
  const kept = done.filter((c) => onHost(c) && !gone(c.member, c.run));
  const remote = copies.length
    ? kept.map((c) => `${c.member} ({run} ${c.run}): ${c.detail ?? 'done'}; ${sized(c)}`)
    : steps
        .filter((s) => s.kind === 'backup-data' && s.status === 'done' && s.member && !localCopies.has(s.member) && !gone(s.member))
        .map((s) => `${s.member}: ${s.detail ?? 'done'}; size not known: not measured (an older opsctl's record)`);

  // made: every snapshot taken (its bytes recorded), every copy made (measured where it was)
  const m = tally();
  for (const s of snaps) {
    m.snapshots++;
    m.bytes += s.bytes;
  }
  for (const c of done) {
    m.copies++;
    if (onHost(c)) m.onHosts++;
    // (a copy here not measured yet: the file found for it)
    const here = c.bytes ?? items.find((i) => i.kind === 'data-dir' && i.path.endsWith(`/${c.run}-${c.member}`))?.bytes;
    if (here === undefined) m.unknown++;
    else m.bytes += here;
  }
  // (copies of an older record: counted by their backup steps, with no size)
  if (!copies.length) {
    const older = steps.filter((s) => s.kind === 'backup-data' && s.status === 'done').length;
    m.copies += older;
    m.unknown += older;
  }
  // held: what is found here, and the copies on the hosts not removed since
  const h = tally();
  for (const i of items) {
    h.bytes += i.bytes;
    if (i.kind === 'snapshot') h.snapshots++;
    else h.copies++;
  }
  for (const c of kept) {
    h.copies++;
    h.onHosts++;
    if (c.bytes === undefined) h.unknown++;
    else h.bytes += c.bytes;
  }
  if (!copies.length) {
    h.copies += remote.length;
    h.onHosts += remote.length;
    h.unknown += remote.length;
  }
  return {
    bytes: items.reduce((n, i) => n + i.bytes, 0),
    dirs,
    items,
    ...(remote.length ? { remote: `${remote.length} data-dir backup(s) made on the members' hosts by the driver's backup command: ${remote.join('; ')}` } : {}),
    ...(fates.length ? { copies: fates } : {}),
    made: m,
    held: h,
    keeps: KEPT_BY_DEFAULT,
  };
}

/** The report's line for the copies of one or more hops: how many went and what stayed, or undefined when none were taken. */
export function describeFates(fates: BackupFate[]): string | undefined {
  if (!fates.length) return undefined;
  const removed = fates.filter((f) => f.removed).length;
  const kept = fates.filter((f) => !f.removed);
  return [
    removed
      ? `${removed} data-dir cop${removed === 1 ? 'y' : 'ies'} removed once ${removed === 1 ? 'its hop was' : 'their hops were'} done (the hop's restore point is the way back; --keep-backups keeps them)`
      : '',
    ...kept.map((f) => `${f.member}: data-dir copy ${f.detail}`),
  ]
    .filter(Boolean)
    .join('\n');
}

function dirOf(p: string): string {
  const i = p.lastIndexOf('/');
  return i > 0 ? p.slice(0, i) : p;
}
