import { compareVersion } from '../cluster/parse.js';
import { isOn, settingRule, UNRECOGNIZED_ENV } from './settings.js';
import { trialRule } from './trial.js';
import type { Finding, HopFacts, Rule } from './types.js';

const GUIDE = 'https://etcd.io/docs/v3.5/upgrades/upgrade_3_5/';

/**
 * The v3 store's membership before 3.5.26+ and 3.6 read it (the measurements and etcd's code paths:
 * src/kv/ladder/v3-membership.ts). Both read a snapshot of the leader taken as the hop starts: at the plan for
 * the ladder's first hop, else while the hop before waits for its cluster version (ladder/checks.ts readAhead).
 */
export const ZOMBIE = 'https://github.com/etcd-io/etcd/pull/20995';
/** The first 3.5 release that cleans up zombie members after each ConfChange it applies to the v3 store. */
export const ZOMBIE_CLEANUP_FROM = '3.5.26';

/** A finding when the fact is not there to judge (a later hop, not read, or no v3 store to read). */
export function v3Unread(f: HopFacts, what: string): Finding[] | undefined {
  const m = f.v3Membership;
  // members that keep no etcd v3 store (the driver says so before any hop): nothing to read now or later
  if (m && 'why' in m && m.none) return [{ result: 'ok', detail: m.why }];
  if (!f.current) return [{ result: 'later', detail: `${what} read from a snapshot of the leader when the hop starts` }];
  if (!m) return [{ result: 'not-checked', detail: `${what} not read` }];
  if ('why' in m) return [{ result: m.none ? 'ok' : 'not-checked', detail: m.why }];
  return undefined;
}

/** 3.4 → 3.5. */
export const CONSISTENT_INDEX_RULE: Rule = {
  id: 'v3-consistent-index',
  check: `the v3 store holds a consistent index: without one, 3.5 (${ZOMBIE_CLEANUP_FROM} and later) applies the WAL's membership changes to it again and marks live members removed there, which 3.6 obeys`,
  where: ["the member's API"],
  severity: 'refuse',
  fix: 'while the cluster is on 3.4, make one v3 write so every member records how far it applied (etcd 3.4 writes it with a v3 write only): etcdctl put KEY VALUE (then etcdctl del KEY if it must not stay); then run the same command',
  guide: ZOMBIE,
  test: (f) => {
    const early = v3Unread(f, "the leader's consistent index");
    if (early) return early;
    const m = f.v3Membership as Exclude<HopFacts['v3Membership'], { why: string } | undefined>;
    const v = typeof f.binaryVersion === 'string' ? f.binaryVersion : undefined;
    if (v && compareVersion(v, ZOMBIE_CLEANUP_FROM) < 0)
      return [{ result: 'ok', detail: `the 3.5 binary is ${v}: it has no zombie-member cleanup (${ZOMBIE_CLEANUP_FROM} and later)` }];
    if (m.consistentIndex !== undefined)
      return [{ result: 'ok', detail: `consistent index ${m.consistentIndex} in ${m.on}'s v3 store${m.via ? ` (a snapshot via ${m.via})` : ''}` }];
    if (m.members < 2) return [{ result: 'ok', detail: `${m.on}'s v3 store holds no consistent index, and ${m.members} member: no other member to mark` }];
    return [
      {
        result: 'problem',
        detail:
          `${m.on}'s v3 store holds no consistent index (3.4 writes it with the first v3 write, and this cluster had none): ` +
          `${v ?? 'the 3.5 binary'} would apply the WAL's ${m.members} bootstrap membership changes to it again on its first start and, after the first, mark the other members removed ` +
          `("Removing zombie member from v3store"); 3.5 runs on, but 3.6 reads the mark: it refuses their raft streams and they stop ("the member has been permanently removed from the cluster")`,
      },
    ];
  },
};

/** A v2 key tree this small holds no key: `{"action":"get","node":{"dir":true}}` and the like. */
export const V2_EMPTY_BYTES = 64;

/**
 * 3.4 → 3.5. Measured on etcd 3.5.35: --log-output, --debug and --log-package-levels are "flag
 * provided but not defined"; --enable-v2 still starts it, deprecated.
 */
export const HOP_35: Rule[] = [
  trialRule(GUIDE),
  {
    id: 'auth-rolling',
    check: 'auth is not enabled: a rolling upgrade 3.4 → 3.5 with auth enabled is not supported (the WAL format of auth entries changed)',
    where: ["the member's API"],
    severity: 'refuse',
    fix: 'stop the ladder at 3.4 (kv upgrade --to 3.4), then move by restore, with downtime: opsctl kv snapshot save FILE, opsctl kv restore --snapshot FILE --to-version 3.5 (every member is stopped for the restore)',
    guide: GUIDE,
    test: (f) => {
      if (f.auth === undefined) return [{ result: 'not-checked', detail: 'no member answered whether auth is enabled' }];
      if (typeof f.auth === 'object') return [{ result: 'not-checked', detail: f.auth.why }];
      return [{ result: f.auth ? 'problem' : 'ok', detail: f.auth ? 'auth is enabled on the cluster' : 'auth is not enabled' }];
    },
  },
  {
    id: 'v2-data',
    check: 'no v2 data: 3.5 no longer serves the v2 store and `etcdctl migrate` is gone, so v2 data must move to v3 while still on 3.4',
    where: ["the member's API"],
    severity: 'refuse',
    fix: 'on 3.4, before this hop: move the v2 keys to v3 (ETCDCTL_API=3 etcdctl migrate --data-dir DIR on each stopped member, or rewrite them through the v3 API), or delete them if nothing reads them (ETCDCTL_API=2 etcdctl rm --recursive KEY)',
    guide: GUIDE,
    test: (f) => {
      if (!f.v2) return [{ result: 'not-checked', detail: 'the v2 store was not measured' }];
      if ('why' in f.v2) return [{ result: 'not-checked', detail: f.v2.why }];
      return f.v2.bytes > V2_EMPTY_BYTES
        ? [{ result: 'problem', detail: `the v2 store holds data: its key tree is ${f.v2.bytes} bytes (${f.v2.on})` }]
        : [{ result: 'ok', detail: `the v2 store is empty (${f.v2.on})` }];
    },
  },
  settingRule({
    id: 'removed-log-flags',
    check: '--log-output, --debug and --log-package-levels are removed in 3.5: it refuses to start with them',
    keys: ['log-output', 'debug', 'log-package-levels'],
    severity: 'refuse',
    fix: 'use --log-outputs (a list), --log-level=debug and --log-level (and --logger=zap); in the config file log-outputs and log-level',
    guide: GUIDE,
    // (a variable is ignored as the config file key is: measured, 3.5.35 starts without it)
    problem: (s) =>
      `${s.from}: ${s.key} is gone in 3.5 (${s.env ? UNRECOGNIZED_ENV : s.flag ? '"flag provided but not defined"' : 'ignored in the config file'})`,
  }),
  settingRule({
    id: 'logger-capnslog',
    check: "--logger=capnslog (3.4's default logger) is removed in 3.5: it refuses to start with it",
    keys: ['logger'],
    severity: 'refuse',
    fix: "set logger: zap (--logger=zap, ETCD_LOGGER=zap) on 3.4 before the hop, or drop it: zap is 3.5's only logger (log-outputs and log-level keep working)",
    guide: GUIDE,
    problem: (s) =>
      String(s.value).trim().toLowerCase() === 'capnslog'
        ? `${s.from}: logger ${JSON.stringify(s.value)}: 3.5 exits with "--logger=capnslog is removed in v3.5"`
        : undefined,
  }),
  settingRule({
    id: 'enable-v2-deprecated',
    check: '--enable-v2 is deprecated in 3.5 and gone in 3.6',
    keys: ['enable-v2'],
    severity: 'warn',
    fix: 'move the v2 clients to v3 and drop enable-v2 before 3.6',
    guide: GUIDE,
    problem: (s) => (isOn(s.value) ? `${s.from}: enable-v2 is on: 3.5 still serves v2 (deprecated); 3.6 does not` : undefined),
  }),
  {
    id: 'target-3.5.3',
    check: 'the 3.5 binary is 3.5.3 or later (3.5.0 to 3.5.2 have a data inconsistency bug)',
    where: ['binary'],
    severity: 'refuse',
    fix: 'use the newest 3.5 release (3.5.26 or later also opens the way to 3.6): --target-bin 3.5=DIR',
    guide: 'https://groups.google.com/g/etcd-dev/c/sHJqMLh8nRA',
    test: (f) => {
      const v = f.binaryVersion;
      if (v === undefined)
        return [{ result: 'not-checked', detail: 'the binary is chosen by the driver (its start template): its version is not known before the start' }];
      if (typeof v === 'object') return [{ result: 'not-checked', detail: v.why }];
      return compareVersion(v, '3.5.3') < 0 ? [{ result: 'problem', detail: `the 3.5 binary is ${v}` }] : [{ result: 'ok', detail: `the 3.5 binary is ${v}` }];
    },
  },
  CONSISTENT_INDEX_RULE,
];
