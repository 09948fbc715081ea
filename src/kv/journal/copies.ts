/**
 * A member's data-dir copies, one {run} each (DataCopy): the run's id for its first copy, `ID.2`, `ID.3` …
 * for each later one, recorded in the run's record before the copy is made. The same {run} names the
 * copy's place (the local driver's DATA/kv/backups/CLUSTER/RUN-MEMBER, a backup template's
 * DIR.bak-{run}), its put-back (DIR.failed-{run}) and its removal, so a second attempt never copies into
 * the first's copy and a put-back never restores an older attempt's data.
 */
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BackupFate, DataCopy } from './journal.js';

/** What these read of a run's record (an upgrade's journal, the v2store fix's file). */
interface Copies {
  id: string;
  dataCopies?: DataCopy[];
  /** --on-failure rollback's record of the members it put back (journal/runs.ts). */
  putBack?: Array<{ member: string }>;
}

/** The member's copies the record holds, in order. */
export function copiesOf(j: Copies, member: string): DataCopy[] {
  return (j.dataCopies ?? []).filter((c) => c.member === member);
}

/**
 * The {run} of the member's next copy. A record of an older opsctl holds no copies: a member it put back
 * (--on-failure rollback) made its copy under the run's id already, so the next is `ID.2`.
 */
export function nextCopyRun(j: Copies, member: string): string {
  const made = copiesOf(j, member).length || (j.putBack?.some((p) => p.member === member) ? 1 : 0);
  return made ? `${j.id}.${made + 1}` : j.id;
}

/**
 * The copy a put-back restores: the member's newest copy, when it was made (a new attempt records its
 * own before it copies, so an older attempt's copy is never the newest). A member with no copy recorded
 * (its copy made by an older opsctl): the run's id, as it copied.
 */
export function copyToRestore(j: Copies, member: string): DataCopy | undefined {
  const last = copiesOf(j, member).pop();
  if (!last) return { member, run: j.id, status: 'done', at: '' };
  return last.status === 'done' ? last : undefined;
}

/** Where a cluster's earlier runs' records are kept when a new run's journal takes their place. */
export function keptRunsDir(journalFile: string): string {
  return journalFile.replace(/\.json$/, '.runs');
}

/**
 * Before a new run's journal replaces the one at `journalFile`: the old record kept under
 * `<cluster>.runs/<id>.json` when it names a data-dir copy on a member's host that is still there (made, not
 * removed since, not under opsctl's data directory), so `kv backups list` still lists that copy and `kv
 * backups prune --cluster` can remove it. Returns where it went, or undefined (nothing to keep).
 */
export function keepRunRecord(journalFile: string, read: (file: string) => (Copies & { copies?: BackupFate[] }) | undefined): string | undefined {
  let j: (Copies & { copies?: BackupFate[] }) | undefined;
  try {
    j = existsSync(journalFile) ? read(journalFile) : undefined;
  } catch {
    return undefined;
  }
  const gone = (c: DataCopy) => j?.copies?.some((f) => f.removed && f.member === c.member && (f.run === undefined || f.run === c.run));
  const onHost = (j?.dataCopies ?? []).filter((c) => c.status === 'done' && (c.host !== undefined || c.path === undefined) && !gone(c));
  if (!j || !onHost.length) return undefined;
  const dir = keptRunsDir(journalFile);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const to = join(dir, `${j.id}.json`);
  copyFileSync(journalFile, to);
  return to;
}
