/**
 * The v2 fix without a stop, for members opsctl does not start itself (the command driver, its systemd and ssh
 * presets): raft entries that carry no key and make no revision (an alarm list: etcd proposes every alarm
 * request through raft) until every named member has saved a new raft snapshot (its /metrics count of
 * snapshot saves moves). A snapshot saved after the drive began sits past every v2 request in that member's
 * WAL: what 3.6 (`etcdutl check v2store`, "custom v2 content in WAL records") and 3.7 ("unmarshal should never
 * fail") cannot replay is then older than the member's newest snapshot, which a start replays from. Measured on
 * 3.5.35, 3.6.16 and 3.7.3: one alarm list is one raft index, no revision; a member saves a snapshot after
 * snapshot-count entries (etcd's default: 100,000 up to 3.5, 10,000 from 3.6).
 *
 * Nothing is stopped, no config is edited, nothing is journalled: an interrupted drive is started over by the
 * same command (the counts are read again), and the checks before the hop read the members again after it.
 */
import { InterruptedError, OpsError } from '../../core/errors.js';
import type { MemberSpec } from '../cluster/cluster-file.js';
import { KvClient } from '../cluster/client.js';
import { compareMinor, nextMinor } from '../cluster/parse.js';
import type { UpgradeOptions, Waits } from '../upgrade/options.js';

/** etcd's default snapshot-count by minor: what the drive expects to need, as the plan says it. */
export function defaultSnapshotCount(minor: string): number {
  return compareMinor(minor, '3.6') < 0 ? 100_000 : 10_000;
}

/** The plan's words for the fix, per minor. */
export function writePastWords(minor: string): string {
  return `written past, no stop (planned; --no-fix-v2store refuses instead): raft entries that carry no key and no revision (alarm lists) until the member saves a new snapshot, about ${defaultSnapshotCount(minor).toLocaleString('en-US')} on ${minor} (etcd's default snapshot-count), before the first ${nextMinor(minor)} start`;
}

export interface WritePastResult {
  entries: number;
  ms: number;
  /** Each named member's snapshot-save count before and after. */
  members: Array<{ name: string; before: number; after: number }>;
}

/** Entries sent between two reads of the members' counts. */
const BATCH = 500;
/** Requests in flight at once (spread over the members written past: a follower forwards its proposals to the leader). */
const CONCURRENCY = 32;

/**
 * Drives raft entries until every member of `named` has saved a snapshot since the drive began; throws naming
 * the members that did not within the cap (1.2 times the larger of 100,000 and the minor's default), or a
 * member whose metrics do not say (before any entry is sent).
 */
export async function writePast(o: Pick<UpgradeOptions, Waits | 'reporter'>, named: readonly MemberSpec[], minor: string): Promise<WritePastResult> {
  const client = (m: MemberSpec) => new KvClient(m.endpoint, { timeoutMs: o.timeouts.requestMs, session: o.session });
  const watch = named.map((m) => ({ m, c: client(m) }));
  const counts = async () => Promise.all(watch.map(async ({ m, c }) => ({ m, n: await c.snapshotsSaved().catch((err: Error) => err) })));
  const first = await counts();
  const unknown = first.filter((x) => typeof x.n !== 'number');
  if (unknown.length)
    throw new OpsError(
      `the v2 fix before the first ${nextMinor(minor)} start cannot tell when ${unknown.map((x) => x.m.name).join(', ')} save a snapshot: ${unknown
        .map(
          (x) => `${x.m.name}: ${x.n instanceof Error ? x.n.message : `${x.m.endpoint}/metrics has no etcd_debugging_snap_save_total_duration_seconds_count`}`,
        )
        .join('; ')}`,
      1,
      {
        code: 'v2store_fix_unsupported',
        hint: `no member was stopped for it: serve /metrics on each member's client URL, or restart each named member once on ${minor} with --snapshot-count=1 and put it back; then run the same command`,
      },
    );
  const before = new Map(first.map((x) => [x.m.name, x.n as number]));
  const after = new Map<string, number>();
  // (to the members written past, which answered above: a member down, as the one a resumed run stopped, is not sent to)
  const senders = named.map(client);
  const cap = Math.round(1.2 * Math.max(100_000, defaultSnapshotCount(minor)));
  const started = o.now();
  const p = o.reporter.begin(`written past on ${minor}: raft entries until ${named.map((m) => m.name).join(', ')} save a new snapshot`);
  let entries = 0;
  let failures = 0;
  try {
    for (;;) {
      const waiting = named.filter((m) => !after.has(m.name));
      if (!waiting.length) break;
      if (o.signal.aborted)
        throw Object.assign(new InterruptedError(`written past on ${minor}: interrupted after ${entries} entries; nothing was stopped or changed`), {
          hint: 'run the same command again: the drive starts over (its entries change no key)',
        });
      if (entries >= cap)
        throw new OpsError(
          `written past on ${minor}: ${waiting.map((m) => m.name).join(', ')} saved no snapshot after ${entries.toLocaleString('en-US')} raft entries (a snapshot-count above that?)`,
          3,
          {
            code: 'v2store_fix_halted',
            hint: `no member was stopped for it: restart each named member once on ${minor} with --snapshot-count=1 (its config file's snapshot-count: 1), wait for a new member/snap/*.snap, put its value back; then run the same command`,
          },
        );
      let next = 0;
      const send = async (k: number) => {
        while (next < BATCH) {
          next++;
          try {
            await senders[(entries + k) % senders.length]!.alarms();
            failures = 0;
          } catch (err) {
            // (an election, a member restarting under the drive: the next request goes on; a steady failure ends it)
            if (++failures > 200)
              throw new OpsError(`written past on ${minor}: 200 requests failed in a row (last: ${(err as Error).message})`, 3, {
                code: 'v2store_fix_halted',
                hint: 'no member was stopped for it: check that every member answers (opsctl kv health), then run the same command; the drive starts over',
              });
          }
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, (_, k) => send(k)));
      entries += BATCH;
      for (const x of await counts()) if (typeof x.n === 'number' && x.n > before.get(x.m.name)!) after.set(x.m.name, x.n);
      const left = named.filter((m) => !after.has(m.name)).map((m) => m.name);
      p.update(
        `written past on ${minor}: ${entries.toLocaleString('en-US')} raft entries (about ${defaultSnapshotCount(minor).toLocaleString('en-US')} by etcd's default)${left.length ? `; a new snapshot still to come on ${left.join(', ')}` : ''}`,
      );
    }
  } catch (err) {
    p.fail(`written past on ${minor}: ${(err as Error).message}`);
    throw err;
  }
  const ms = o.now() - started;
  p.done(`written past on ${minor}: ${entries.toLocaleString('en-US')} raft entries in ${ms} ms; a new snapshot on ${named.map((m) => m.name).join(', ')}`);
  return { entries, ms, members: named.map((m) => ({ name: m.name, before: before.get(m.name)!, after: after.get(m.name)! })) };
}
