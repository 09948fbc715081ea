/**
 * The ladder's one table: the etcd minors opsctl upgrades through, oldest first, with what each
 * minor's upgrade guide asks before the first start of it (the patch floor of the minor before) and
 * the guides themselves. Everything that lists minors reads it (the planner, --to and --target-bin,
 * restore and downgrade, the sandbox, completions and help), so the next minor is a row here plus its
 * rulebook (src/kv/rules/hop-X.Y.ts) — test/unit/kv-ladder-table.test.ts holds that to be true.
 * The CLI and the simulated members both read it.
 */

export interface LadderRow {
  minor: string;
  /** The upgrade guide into this minor, from the one before (none for the ladder's first minor). */
  guide?: string;
  /**
   * The patch release of the minor before that every member must run before the first start of this
   * one (the guide's "Update 3.X"), and since when the guide says so. Members below it get a patch
   * hop inside their minor first (3.5.x → 3.5.32+ before 3.6, 3.6.x → 3.6.11+ before 3.7).
   */
  floor?: { version: string; since?: string; why: string };
  /** etcd's downgrade API takes a cluster of this minor back one minor (its downgrade guide). */
  downgradeGuide?: string;
  /** What rebuilds a data dir from a snapshot for this minor (3.5 moved snapshot restore to etcdutl; 3.6's etcdctl has none). */
  restoreTool: 'etcdctl' | 'etcdutl';
  /**
   * What of the v2 store the members' data dirs must be rid of before the first start of this minor,
   * and the minor before fixes it (each member restarted once with snapshot-count 1: a snapshot past
   * it): `custom` (3.6 refuses custom v2 content: etcdutl check v2store), `any` (3.7 replays no v2
   * request written as such after the newest snapshot, not even etcd's own attribute PUTs of 3.5).
   */
  v2Gone?: 'custom' | 'any';
}

const guide = (m: string) => `https://etcd.io/docs/v${m}/upgrades/upgrade_${m.replace('.', '_')}/`;

export const LADDER: readonly LadderRow[] = Object.freeze([
  { minor: '3.2', restoreTool: 'etcdctl' },
  { minor: '3.3', guide: guide('3.3'), restoreTool: 'etcdctl' },
  { minor: '3.4', guide: guide('3.4'), restoreTool: 'etcdctl' },
  { minor: '3.5', guide: guide('3.5'), restoreTool: 'etcdutl' },
  {
    minor: '3.6',
    guide: guide('3.6'),
    // The guide said 3.5.26 (December 2025: the zombie-member fix), then 3.5.32 since August 2026
    // (etcd-io/website#1203: 3.5.32's etcdutl check v2store reads the WAL records too, which 3.6 replays).
    floor: { version: '3.5.32', since: 'August 2026', why: 'its etcdutl check v2store reads the WAL records too, which 3.6 replays' },
    downgradeGuide: 'https://etcd.io/docs/v3.6/downgrades/downgrade_3_6/',
    restoreTool: 'etcdutl',
    v2Gone: 'custom',
  },
  {
    minor: '3.7',
    guide: guide('3.7'),
    // "Before upgrading to 3.7, make sure that all of your 3.6 members are updated to 3.6.11 or later."
    floor: { version: '3.6.11', why: 'earlier 3.6 patch releases may not be compatible with a rolling upgrade to 3.7' },
    downgradeGuide: 'https://etcd.io/docs/v3.7/downgrades/downgrade_3_7/',
    restoreTool: 'etcdutl',
    // measured on 3.7.3: "unmarshal should never fail (proto: cannot parse invalid wire-format data)"
    // replaying a 3.5 member's v2 attribute PUT, even on a plain 3.5 → 3.6 → 3.7 of a fresh cluster
    v2Gone: 'any',
  },
]);

/** The minors, oldest first. */
export const LADDER_MINORS: readonly string[] = Object.freeze(LADDER.map((r) => r.minor));

/** The ladder's first and last minor ("3.2", "3.7"). */
export const LADDER_BOTTOM = LADDER_MINORS[0]!;
export const LADDER_TOP = LADDER_MINORS[LADDER_MINORS.length - 1]!;

/** The minors --to takes: every one above the first. */
export const LADDER_TARGETS: readonly string[] = Object.freeze(LADDER_MINORS.slice(1));

/** The minors etcd's downgrade API takes a cluster from ("3.6", "3.7"), and the ones it goes to. */
export const DOWNGRADE_FROM: readonly string[] = Object.freeze(LADDER.filter((r) => r.downgradeGuide).map((r) => r.minor));
export const DOWNGRADE_TO: readonly string[] = Object.freeze(DOWNGRADE_FROM.map((m) => LADDER_MINORS[LADDER_MINORS.indexOf(m) - 1]!));

/** The row of `minor`, or undefined when the ladder does not know it. */
export function ladderRow(minor: string): LadderRow | undefined {
  return LADDER.find((r) => r.minor === minor);
}

/** The ladder as words: "3.2 → 3.3 → 3.4 → 3.5 → 3.6 → 3.7" (or from `from` to `to`). */
export function ladderWords(from = LADDER_BOTTOM, to = LADDER_TOP): string {
  return LADDER_MINORS.filter((m) => LADDER_MINORS.indexOf(m) >= LADDER_MINORS.indexOf(from) && LADDER_MINORS.indexOf(m) <= LADDER_MINORS.indexOf(to)).join(
    ' → ',
  );
}

/** "3.3 to 3.7": a span of the ladder's minors as help text says it. */
export function ladderSpan(list: readonly string[] = LADDER_TARGETS): string {
  return `${list[0]} to ${list[list.length - 1]}`;
}
