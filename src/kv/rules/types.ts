/**
 * The rulebook's shapes: one table per hop (src/kv/rules/hop-X.Y.ts), each row a rule written as
 * data (what is checked, where it is read, refuse or warn, the fix, the guide it comes from) with a
 * small test over the facts the ladder gathered. A test that cannot run says why ("not checked"),
 * never nothing.
 */

/** Where a rule reads what it checks. */
export type RuleSource = 'config file' | 'flags' | 'systemd unit' | "the member's API" | 'data dir' | 'binary';

/** One setting as a member will start with it: from its YAML config file, a flag, or an ETCD_* variable. */
export interface Setting {
  key: string;
  value: unknown;
  /** "config file /etc/etcd.yaml", "flag", "environment ETCD_LOG_OUTPUT". */
  from: string;
  /** A flag or variable (etcd refuses an unknown flag) rather than a config file key (ignored when unknown). */
  flag: boolean;
  /** An ETCD_* variable of the start's environment (not a flag on its command line). */
  env?: boolean;
}

/** What the ladder knows of one member for a hop. */
export interface MemberFacts {
  name: string;
  serverVersion?: string;
  /** The text the driver read (config file, unit), as read. */
  config?: { file: string; text: string };
  /** The settings it will start the hop's target with; `why` when the driver could not read them. */
  settings?: { source: string; list: Setting[] } | { why: string };
  /** Its data dir and the dir's mode, when the driver knows them. */
  dataDir?: { dir: string; mode: number } | { why: string };
  /** What its data dir holds (member/wal, member/snap/db), where the driver can look. */
  layout?: { dir: string; walDir?: string; exists: boolean; wal: boolean; db: boolean } | { why: string };
}

export interface HopFacts {
  from: string;
  to: string;
  /** The full version of the hop's binary (etcd --version of --target-bin), when known. */
  binaryVersion?: string | { why: string };
  members: MemberFacts[];
  /** Whether auth is enabled (asked of the members). */
  auth?: boolean | { why: string };
  /** The v2 store, measured while the v2 API was still on (before 3.4 turns it off). */
  v2?: { bytes: number; on: string } | { why: string };
  /** Each member's v2 requests of their own in its WAL after its newest snapshot (what 3.7 cannot replay), where its data dir is read; `why` when not. */
  walReplay?: Array<{ member: string; snapshotIndex: number; count: number; after: Record<string, number> }> | { why: string };
  /** Each member's `etcdutl check v2store`, where it ran; `why` when it could not. */
  v2store?: Array<{ member: string; ok: boolean; detail: string }> | { why: string };
  /** The full version the members will run when this hop starts (the previous hop's binary), when known. */
  startsFrom?: string;
  /** Each member's trial start on the hop's binary (src/kv/trial); `why` when none could run. */
  trials?: Array<{ member: string; result: Finding['result']; detail: string }> | { why: string };
  /** Each member's data trial on the hop's binary (a copy of its data, isolated: src/kv/trial/data.ts); `why` when none could run. */
  dataTrials?: Array<{ member: string; result: Finding['result']; detail: string }> | { why: string };
  /** The leader's v3 store (a snapshot of it): its consistent index, and the members of the cluster marked removed there (ladder/v3-membership.ts); `why` when not read. */
  v3Membership?:
    | { on: string; via?: 'etcdctl' | 'gateway'; consistentIndex?: string; members: number; removedLive: Array<{ id: string; name: string }> }
    | { why: string; none?: boolean };
  /** A patch hop inside this hop's source minor is planned before it (3.5 → 3.6 needs 3.5.32 or later, 3.6 → 3.7 3.6.11: the ladder's table). */
  patchHopPlanned?: boolean;
  /** The members run this hop's source now (false: a later hop, seen from the plan). */
  current: boolean;
}

export type Severity = 'refuse' | 'warn';

/** A rule's finding for one member (or the cluster when `member` is absent). */
export interface Finding {
  member?: string;
  /** ok: checked, nothing found; problem: found (refuse or warn as the rule says); not-checked: could not run, and why; later: runs before the hop's first stop. */
  result: 'ok' | 'problem' | 'not-checked' | 'later';
  detail: string;
}

export interface Rule {
  id: string;
  /** What is checked, in a line. */
  check: string;
  where: RuleSource[];
  severity: Severity;
  fix: string;
  /** The upgrade guide (or changelog) the rule comes from. */
  guide: string;
  /**
   * The settings a rule reads by key (a flag, its ETCD_* variable, a config file key), where it judges
   * each one alone: test/e2e/kv-rulebook-etcd.test.ts starts the hop's binary with each, as a flag and as a
   * variable, and holds the rule's verdict and the words of etcd it quotes to what that binary does.
   */
  keys?: readonly string[];
  test(f: HopFacts): Finding[] | Promise<Finding[]>;
}

/** One row of the checks shown on the plan and in the report. */
export interface CheckRow {
  hop: string;
  rule: string;
  check: string;
  where: string;
  member?: string;
  status: 'ok' | 'refuse' | 'warn' | 'not checked' | 'before the hop';
  detail: string;
  fix?: string;
  guide: string;
}
