/**
 * A snapshot of the leader that a check took before the first stop (ladder/v3-membership.ts reads the v3
 * store's membership from one), kept for the snapshot that stop takes, while nothing was committed since.
 *
 * Why: at 100 MB the check's snapshot and the first member's own are each about a second, taken of the same
 * data a few seconds apart; the guides' hand procedure takes only the second. The kept file stands in for the
 * second only when it would hold the same bytes: the leader's raft index (committed and applied) was the same
 * before and after it was streamed, and is still that index when the member is about to be snapshotted (any
 * proposal moves it: a put, a lease, an auth change, a member's attributes, a v2 request of a /health probe).
 * The member's own figures then verify it as they would a new one (save.ts adoptSnapshot). Anything else, and
 * every doubt, takes a new snapshot as before. One run, one shelf: what is not handed over is removed when the
 * run ends (runUpgradeOrLadder); a run killed outright leaves it where the check left it, in the system's
 * temporary directory.
 */
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { KvClient } from '../cluster/client.js';
import type { KvSession } from '../cluster/session.js';
import { adoptSnapshot, type SnapshotResult } from './save.js';

/** A snapshot on the shelf: the file saveSnapshot verified, the member it came from, and the raft index it holds. */
export interface KeptSnapshot {
  snap: SnapshotResult;
  /** The endpoint it was streamed from (asked again before it is handed over). */
  endpoint: string;
  /** That member's committed raft index before and after the stream (equal, and all of it applied). */
  raftIndex: string;
}

/** What the shelf reads to ask whether its snapshot is still current, and to verify it for the member. */
export interface ShelfReach {
  session: KvSession;
  timeoutMs: number;
  debug?: (line: string) => void;
}

export class SnapshotShelf {
  private kept?: KeptSnapshot;

  /** The raft index of ENDPOINT when nothing is being applied (committed = applied), else undefined. */
  static async settledIndex(endpoint: string, r: ShelfReach): Promise<string | undefined> {
    const st = await new KvClient(endpoint, { timeoutMs: r.timeoutMs, session: r.session }).status().catch(() => undefined);
    return st?.raftIndex !== undefined && st.raftIndex === st.raftAppliedIndex ? st.raftIndex : undefined;
  }

  /** Keeps `k` (its file in a directory of its own, removed with it); an older one goes. */
  offer(k: KeptSnapshot): void {
    this.clear();
    this.kept = k;
  }

  /**
   * The kept snapshot as FILE, verified against `figuresFrom` as a new one would be, when its source's raft
   * index is still the one it holds and it holds at least `minRevision`; else undefined (and the kept one gone).
   * Handed over once.
   */
  async take(r: ShelfReach, want: { file: string; figuresFrom: string; minRevision: string }): Promise<{ snap: SnapshotResult; endpoint: string } | undefined> {
    const k = this.kept;
    if (!k) return undefined;
    this.kept = undefined;
    const no = (why: string) => void r.debug?.(`[kv] the checks' snapshot of ${k.endpoint} not used for ${want.file}: ${why}`);
    try {
      const now = await SnapshotShelf.settledIndex(k.endpoint, r);
      if (now !== k.raftIndex) return no(`raft index ${now ?? 'unknown or not applied'}, it holds ${k.raftIndex}`);
      if (BigInt(k.snap.revision) < BigInt(want.minRevision)) return no(`revision ${k.snap.revision} < ${want.minRevision}`);
      return { snap: await adoptSnapshot(k.snap, { ...r, ...want }), endpoint: k.endpoint };
    } catch (err) {
      return no((err as Error).message);
    } finally {
      rmSync(dirname(k.snap.file), { recursive: true, force: true });
    }
  }

  /** Removes what was not handed over. */
  clear(): void {
    if (this.kept) rmSync(dirname(this.kept.snap.file), { recursive: true, force: true });
    this.kept = undefined;
  }
}
