import { ladderRow } from '@opsctl/shared/etcd-ladder.js';
import { floorRule } from './floor.js';
import { isOn, settingRule, UNRECOGNIZED_ENV } from './settings.js';
import { trialRule } from './trial.js';
import type { Rule } from './types.js';
import type { HopFacts } from './types.js';
import { v3Unread, ZOMBIE } from './hop-3.5.js';

const GUIDE = ladderRow('3.6')!.guide!;

/** The v2 proxy's flags, gone with it in 3.6 ("flag provided but not defined"; measured on 3.6.16). */
export const PROXY_FLAGS = ['proxy', 'proxy-failure-wait', 'proxy-refresh-interval', 'proxy-dial-timeout', 'proxy-write-timeout', 'proxy-read-timeout'];

/**
 * The experimental flags 3.6 renamed or made feature gates, as etcd 3.6.16's --help states them
 * ("Deprecated in v3.6 and will be decommissioned in v3.7. Use … instead"). Measured: 3.6.16 still
 * starts with the old names (a deprecation warning in its log), so each is a warning with its new
 * name; --experimental-enable-v2v3 is gone (refused, with --enable-v2).
 */
export const RENAMED_36: Record<string, string> = {
  'experimental-bootstrap-defrag-threshold-megabytes': '--bootstrap-defrag-threshold-megabytes',
  'experimental-compact-hash-check-enabled': '--feature-gates=CompactHashCheck=true',
  'experimental-compact-hash-check-time': '--compact-hash-check-time',
  'experimental-compaction-batch-limit': '--compaction-batch-limit',
  'experimental-compaction-sleep-interval': '--compaction-sleep-interval',
  'experimental-corrupt-check-time': '--corrupt-check-time',
  'experimental-distributed-tracing-address': '--distributed-tracing-address',
  'experimental-distributed-tracing-instance-id': '--distributed-tracing-instance-id',
  'experimental-distributed-tracing-sampling-rate': '--distributed-tracing-sampling-rate',
  'experimental-distributed-tracing-service-name': '--distributed-tracing-service-name',
  'experimental-downgrade-check-time': '--downgrade-check-time',
  'experimental-enable-distributed-tracing': '--enable-distributed-tracing',
  'experimental-enable-lease-checkpoint': '--feature-gates=LeaseCheckpoint=true',
  'experimental-enable-lease-checkpoint-persist': '--feature-gates=LeaseCheckpointPersist=true',
  'experimental-initial-corrupt-check': '--feature-gates=InitialCorruptCheck=true',
  'experimental-memory-mlock': '--memory-mlock',
  'experimental-peer-skip-client-san-verification': '--peer-skip-client-san-verification',
  'experimental-snapshot-catchup-entries': '--snapshot-catchup-entries',
  'experimental-stop-grpc-service-on-defrag': '--feature-gates=StopGRPCServiceOnDefrag=true',
  'experimental-txn-mode-write-with-shared-buffer': '--feature-gates=TxnModeWriteWithSharedBuffer=true',
  'experimental-warning-apply-duration': '--warning-apply-duration',
  'experimental-warning-unary-request-duration': '--warning-unary-request-duration',
  'experimental-watch-progress-notify-interval': '--watch-progress-notify-interval',
};

/**
 * The fix for what `etcdutl check v2store` said of a member, as the 3.5 → 3.6 guide gives it. Measured
 * on a ladder from 3.2: the 3.5 members' WAL still holds the v2 requests 3.2-3.4 proposed after the
 * last v2 snapshot ("detected custom v2 content in WAL records"); with etcd's default snapshot-count
 * (100,000) no new v2 snapshot covers them, and 3.6 panics replaying them ("detected disallowed v2 WAL
 * for stage --v2-deprecation=write-only", etcd-io/etcd#20809, #21849). A restart on 3.5 with
 * --snapshot-count=1 writes a v2 snapshot past them (the guide's workaround); then the old value.
 */
export function v2storeFix(said: string, member: string): string {
  const restart = `restart ${member} once on 3.5 with --snapshot-count=1 (snapshot-count: 1 in its config file: etcd reads no flags beside a config file), wait until it is healthy, then put its old snapshot-count back`;
  // (Measured on 3.5.35: a v2 key put and deleted leaves "WAL records" only; once a snapshot is written, a key still there is "in both".)
  const inStore = /in v2store|in both/i.test(said) || !/WAL/i.test(said);
  const steps = inStore
    ? `remove the custom v2 keys while the v2 API is on (ETCDCTL_API=2 etcdctl rm --recursive KEY, or curl -X DELETE ENDPOINT/v2/keys/KEY; migrate them to v3 first if anything reads them), then ${restart}`
    : `${restart} (the custom v2 entries in its WAL are older than its last v2 snapshot then), or let opsctl do it member by member where it reaches the data dirs (the default; --no-fix-v2store refuses instead); if the check then names content in the v2 store, remove those keys too`;
  return `${steps}; etcdutl check v2store --data-dir DIR must say "No custom content found"; then run the same command`;
}

/** The v3 store's members_removed before 3.6 reads it (src/kv/ladder/v3-membership.ts). */
export const REMOVED_MEMBERS_RULE: Rule = {
  id: 'v3-removed-members',
  check: 'no member of the cluster is marked removed in the v3 store (members_removed): 3.6 reads its membership there and refuses a marked member',
  where: ["the member's API"],
  severity: 'refuse',
  fix: 'on 3.5, replace each named member, one at a time: etcdctl member remove ID, empty its data dir, etcdctl member add NAME --peer-urls URL, start it with initial-cluster-state existing (a new member ID carries no mark), wait until it is healthy; or restore the cluster from a snapshot (the restore writes the membership anew); then run the same command',
  guide: ZOMBIE,
  test: (f) => {
    const early = v3Unread(f, "the leader's members_removed");
    if (early) return early;
    const m = f.v3Membership as Exclude<HopFacts['v3Membership'], { why: string } | undefined>;
    if (!m.removedLive.length) return [{ result: 'ok', detail: `no member of the cluster marked removed in ${m.on}'s v3 store` }];
    return m.removedLive.map((x) => ({
      member: x.name,
      result: 'problem' as const,
      detail:
        `${x.name} (${x.id}) is a member, and marked removed in ${m.on}'s v3 store (members_removed), as 3.5.26+ leaves data 3.4 wrote without a consistent index: ` +
        `a 3.6 member refuses its raft streams ("rejected stream from remote peer because it was removed") and ${x.name} then stops itself ("the member has been permanently removed from the cluster")`,
    }));
  },
};

/** 3.5 → 3.6. */
export const HOP_36: Rule[] = [
  trialRule(GUIDE),
  floorRule('3.6'),
  {
    id: 'v2store-check',
    check: '`etcdutl check v2store` passes on every member (3.6 reads no v2 store: custom v2 content must be gone)',
    where: ['data dir', 'binary'],
    severity: 'refuse',
    fix: 'as the guide says for what etcdutl found: custom v2 content in WAL records goes with one restart of that member on 3.5 with --snapshot-count=1 (then its old value); custom content in the v2 store must be removed (or migrated to v3) on 3.5 first',
    guide: GUIDE,
    test: (f) => {
      if (!f.current) {
        // Seen from the ladder's start: the data dirs as they are now (checked again right before the hop).
        if (!f.v2store) return [{ result: 'later', detail: 'etcdutl check v2store runs on the 3.5 data dirs before the hop' }];
        if ('why' in f.v2store)
          return [
            { result: 'not-checked', detail: `${f.v2store.why}; checked before the hop where it can run: custom v2 content found then stops the ladder there` },
          ];
        return f.v2store.map((r) => ({
          member: r.member,
          result: r.ok ? 'later' : 'problem',
          detail: r.ok ? `now: ${r.detail}; checked again before the hop` : `now: ${r.detail}; fix: ${v2storeFix(r.detail, r.member)}`,
        }));
      }
      if (!f.v2store) return [{ result: 'not-checked', detail: 'etcdutl was not run' }];
      if ('why' in f.v2store) return [{ result: 'not-checked', detail: f.v2store.why }];
      return f.v2store.map((r) => ({
        member: r.member,
        result: r.ok ? 'ok' : 'problem',
        detail: r.ok ? r.detail : `${r.detail}; fix: ${v2storeFix(r.detail, r.member)}`,
      }));
    },
  },
  REMOVED_MEMBERS_RULE,
  settingRule({
    id: 'enable-v2-gone',
    check: '--enable-v2 and the v2 store are gone in 3.6: it refuses the flag',
    keys: ['enable-v2', 'experimental-enable-v2v3'],
    severity: 'refuse',
    fix: 'drop enable-v2 (and experimental-enable-v2v3) from the flags and the config file: 3.6 serves v3 only',
    guide: GUIDE,
    // Measured on 3.6.16: the flags stop it (exit 2); ETCD_ENABLE_V2 and ETCD_EXPERIMENTAL_ENABLE_V2V3 do not.
    problem: (s) =>
      s.env
        ? undefined
        : s.flag
          ? `${s.from}: "flag provided but not defined" in 3.6`
          : isOn(s.value)
            ? `${s.from}: ${s.key} is on, and 3.6 has no v2 API to serve`
            : undefined,
    note: (s) => (s.env ? `${UNRECOGNIZED_ENV} (3.6 serves no v2 API: drop the variable)` : undefined),
  }),
  settingRule({
    id: 'proxy-removed',
    check: 'the v2 proxy is gone in 3.6: --proxy (even --proxy off) and every --proxy-* flag are refused ("flag provided but not defined")',
    keys: PROXY_FLAGS,
    severity: 'refuse',
    fix: 'drop --proxy and the --proxy-* flags (and ETCD_PROXY* variables) before the hop: off was the default; a member that served as a v2 proxy is replaced by etcd grpc-proxy',
    guide: GUIDE,
    // (a config file's unknown keys and the ETCD_PROXY* variables are ignored: measured, 3.6.16 starts with
    // proxy: off in its file and with each variable, only the flags stop it)
    problem: (s) => (s.flag && !s.env ? `${s.from}: --${s.key} is gone in 3.6 ("flag provided but not defined: -${s.key}")` : undefined),
    note: (s) => (s.env ? UNRECOGNIZED_ENV : undefined),
  }),
  settingRule({
    id: 'discovery-fallback-proxy',
    check: "--discovery-fallback=proxy (3.5's default value) is refused by 3.6: the v2 proxy it falls back to is gone",
    keys: ['discovery-fallback'],
    severity: 'refuse',
    fix: "set --discovery-fallback=exit (3.6's only value) or drop the flag (ETCD_DISCOVERY_FALLBACK) before the hop",
    guide: GUIDE,
    // (3.6.16 validates the flag and the variable; a config file's value is not checked: measured)
    problem: (s) =>
      s.flag && String(s.value).trim().toLowerCase() === 'proxy'
        ? `${s.from}: discovery-fallback proxy: 3.6 exits with "v2 proxy is deprecated, and --discovery-fallback can't be configured as "proxy""`
        : undefined,
  }),
  settingRule({
    id: 'experimental-renamed',
    check: 'experimental flags are renamed or became feature gates (deprecated in 3.6, gone in 3.7)',
    keys: Object.keys(RENAMED_36),
    severity: 'warn',
    fix: 'use the new name the finding gives (feature gates: --feature-gates=Name=true)',
    guide: GUIDE,
    problem: (s) => `${s.from}: --${s.key} is deprecated in 3.6: use ${RENAMED_36[s.key] ?? 'the new name'}`,
  }),
];
