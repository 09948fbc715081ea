import { compareVersion } from '../parse.js';
import { isOn, settingRule } from './settings.js';
import type { Rule } from './types.js';

const GUIDE = 'https://etcd.io/docs/v3.6/upgrades/upgrade_3_6/';

/** The first 3.5 release a 3.6 member may join (its membership and v2store handling). */
export const MIN_35_FOR_36 = '3.5.26';

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

/** 3.5 → 3.6. */
export const HOP_36: Rule[] = [
  {
    id: 'from-3.5.26',
    check: `every member runs ${MIN_35_FOR_36} or later before the first 3.6 start`,
    where: ["the member's API", 'binary'],
    severity: 'refuse',
    fix: `upgrade every member to the newest 3.5 first (the ladder plans a patch hop inside 3.5 when a 3.5.26+ binary is given: --target-bin 3.5=DIR)`,
    guide: GUIDE,
    test: (f) => {
      if (f.patchHopPlanned) return [{ result: 'ok', detail: `a patch hop inside 3.5 is planned first` }];
      if (!f.current) {
        if (!f.startsFrom) return [{ result: 'later', detail: 'checked on the members before the hop' }];
        return compareVersion(f.startsFrom, MIN_35_FOR_36) < 0
          ? [{ result: 'problem', detail: `the members will run ${f.startsFrom} after the 3.5 hop` }]
          : [{ result: 'ok', detail: `the members will run ${f.startsFrom}` }];
      }
      return f.members.map((m) => {
        if (!m.serverVersion) return { member: m.name, result: 'not-checked', detail: 'the member reported no version' };
        return compareVersion(m.serverVersion, MIN_35_FOR_36) < 0
          ? { member: m.name, result: 'problem', detail: `runs ${m.serverVersion}` }
          : { member: m.name, result: 'ok', detail: `runs ${m.serverVersion}` };
      });
    },
  },
  {
    id: 'v2store-check',
    check: '`etcdutl check v2store` passes on every member (3.6 reads no v2 store: custom v2 content must be gone)',
    where: ['data dir', 'binary'],
    severity: 'refuse',
    fix: 'remove the v2 content on 3.5 (ETCDCTL_API=2 etcdctl rm --recursive KEY with --enable-v2, or migrate it to v3), then run the ladder again',
    guide: GUIDE,
    test: (f) => {
      if (!f.current) return [{ result: 'later', detail: 'etcdutl check v2store runs on the 3.5 data dirs before the hop' }];
      if (!f.v2store) return [{ result: 'not-checked', detail: 'etcdutl was not run' }];
      if ('why' in f.v2store) return [{ result: 'not-checked', detail: f.v2store.why }];
      return f.v2store.map((r) => ({ member: r.member, result: r.ok ? 'ok' : 'problem', detail: r.detail }));
    },
  },
  settingRule({
    id: 'enable-v2-gone',
    check: '--enable-v2 and the v2 store are gone in 3.6: it refuses the flag',
    keys: ['enable-v2', 'experimental-enable-v2v3'],
    severity: 'refuse',
    fix: 'drop enable-v2 (and experimental-enable-v2v3) from the flags and the config file: 3.6 serves v3 only',
    guide: GUIDE,
    problem: (s) =>
      s.flag ? `${s.from}: "flag provided but not defined" in 3.6` : isOn(s.value) ? `${s.from}: ${s.key} is on, and 3.6 has no v2 API to serve` : undefined,
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
