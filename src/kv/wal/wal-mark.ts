/**
 * A mark of a member's WAL: what it holds right before a start on the target, compared with what it holds
 * when --on-failure rollback would put its data copy back. A member that wrote to its WAL in between took
 * part in the cluster on the target: it appended (and acknowledged) entries the leader now counts on, and
 * persisted a term or a vote. Its older copy put back forgets them: raft panics when the leader's next
 * heartbeat names a commit past the copy's log ("tocommit(N) is out of range [lastIndex(M)]", seen on real
 * 3.6 after a container's restart policy let 3.7 rejoin), and where the member's acknowledgement made a write's
 * quorum, that write may be lost. So the copy goes back only when the WAL is as it was before the start,
 * record for record; otherwise the member's data stays as the target left it (the previous minor reads it,
 * as kv rollback relies on), and when it cannot be told, so too.
 *
 * The mark: every record of every segment up to its zero tail (wal-records.ts), counted and hashed, with the
 * last raft entry's index and the last hard state's term for the words; on a host opsctl reaches only through a
 * shell (the command driver's trial template), the names of the WAL files and a checksum of the newest one, the
 * only one etcd appends to (host-script.ts walMarkScript).
 */
import { createHash } from 'node:crypto';
import type { MemberSpec } from '../cluster/cluster-file.js';
import { existsSync, readdirSync } from 'node:fs';
import { bytesOf, ENTRY_RECORD, fields, walDirOf, type MemberDirs } from './v2-data.js';
import { walRecords } from './wal-records.js';

const STATE_RECORD = 3;

export interface WalMark {
  /** What is compared: a SHA-256 of the records in order (read here), or the checksum line of a script on the member's host. */
  digest: string;
  /** The mark in words: "42 records, raft index 1207 at term 3" (read here), "3 WAL files, …" (on its host). */
  text: string;
}

/** The mark of the WAL in `dirs` (its data dir's member/wal, or its own WAL dir); `why` when it cannot be read. */
export function walMark(dirs: MemberDirs): WalMark | { why: string } {
  const dir = walDirOf(dirs);
  if (!existsSync(dir)) return { why: `${dir} does not exist` };
  const names = readdirSync(dir)
    .filter((f) => f.endsWith('.wal'))
    .sort();
  if (!names.length) return { why: `${dir} holds no WAL file` };
  const hash = createHash('sha256');
  const mark = { records: 0, lastIndex: 0, term: 0 };
  try {
    for (const record of walRecords(dir, names)) {
      mark.records += 1;
      hash.update(record);
      let rec;
      try {
        rec = fields(record);
      } catch {
        continue;
      }
      const type = rec.get(1)?.[0];
      const data = bytesOf(rec, 3);
      if (!data || (type !== BigInt(ENTRY_RECORD) && type !== BigInt(STATE_RECORD))) continue;
      try {
        const f = fields(data);
        if (type === BigInt(ENTRY_RECORD)) mark.lastIndex = Number(f.get(3)?.[0] ?? 0n);
        else mark.term = Number(f.get(1)?.[0] ?? 0n);
      } catch {
        continue;
      }
    }
  } catch (err) {
    return { why: (err as Error).message };
  }
  return { digest: hash.digest('hex').slice(0, 32), text: `${mark.records} records, raft index ${mark.lastIndex} at term ${mark.term}` };
}

/** What the mark asks of the driver (MemberDriver's own members: kv/drivers imports this room, never the reverse). */
interface Reads {
  dataDirs?(m: MemberSpec): Promise<MemberDirs | undefined>;
  hostWalMark?(m: MemberSpec): Promise<WalMark | { why: string }>;
}

/** The mark of `m`'s WAL: read here where the driver gives its dirs, else on its host where the driver reaches it; `why` otherwise. */
export async function walMarkOf(driver: Reads, m: MemberSpec): Promise<WalMark | { why: string }> {
  const dirs = await driver.dataDirs?.(m).catch(() => undefined);
  if (dirs) return walMark(dirs);
  if (driver.hostWalMark) return driver.hostWalMark(m).catch((err: Error) => ({ why: err.message }));
  return { why: `${m.name}'s WAL is read neither on this machine nor on its host by its driver` };
}

/** Whether the member's copy may be put back, and why (the put-back's journal words). */
export type CopyVerdict = { putBack: true; why: string } | { putBack: false; why: string };

/**
 * Whether a member's data copy (made after its stop) may be put back over what its start on `target` left:
 * `before` is the mark taken right before that start (or why none was), `now` the mark after its stop.
 */
export function copyVerdict(target: string, before: WalMark | { why: string } | undefined, now: WalMark | { why: string }): CopyVerdict {
  if (!before || 'why' in before)
    return {
      putBack: false,
      why: `whether etcd ${target} wrote to its WAL after the copy cannot be told (${before ? before.why : 'no mark of its WAL was taken before its start'}), so the copy is not put back: a copy the cluster moved past would lose what the member acknowledged`,
    };
  if ('why' in now)
    return { putBack: false, why: `its WAL cannot be read now (${now.why}), so the copy is not put back: it cannot be told whether the cluster moved past it` };
  if (now.digest === before.digest) return { putBack: true, why: `its WAL as before its start on ${target} (${now.text})` };
  return {
    putBack: false,
    why:
      `its WAL was written after the copy (${before.text} before its start, ${now.text} now): it took part in the cluster on the target, ` +
      'which may count on entries only this data holds, and the older copy would forget them (raft: "tocommit … is out of range")',
  };
}
