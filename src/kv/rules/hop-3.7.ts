import { ladderRow } from '@opsctl/shared/etcd-ladder.js';
import { experimentalFinding } from './experimental.js';
import { floorRule } from './floor.js';
import { settingRule, UNRECOGNIZED_ENV } from './settings.js';
import { trialRule } from './trial.js';
import type { Rule } from './types.js';

const GUIDE = ladderRow('3.7')!.guide!;
const CHANGELOG = 'https://github.com/etcd-io/etcd/blob/main/CHANGELOG/CHANGELOG-3.7.md';

/** The v2 discovery flags 3.7 removed with v2 discovery (etcd-io/etcd#20109; measured on 3.7.3: "flag provided but not defined"). */
export const V2_DISCOVERY_FLAGS = ['discovery', 'discovery-proxy'];

/** --v2-deprecation stages that let a 3.6 member keep custom v2 content (3.7 enforces write-only, ignoring the setting). */
const V2_KEEPING = ['not-yet', 'write-only-skip-check'];

/**
 * 3.6 → 3.7, from the 3.7 upgrade guide and CHANGELOG-3.7: every deprecated experimental flag removed
 * (#19959), v2 discovery and the rest of the v2 store gone, and every member on 3.6.11 or later first.
 */
export const HOP_37: Rule[] = [
  trialRule(GUIDE),
  floorRule('3.7'),
  {
    id: 'experimental-removed',
    check:
      'no --experimental-* flag 3.7 removed (each of the 23 that 3.6 deprecated): as a flag 3.7 exits, as an ETCD_EXPERIMENTAL_* variable or a config file key it drops the setting silently',
    where: ['config file', 'flags', 'systemd unit'],
    severity: 'refuse',
    fix: 'replace each with the name 3.6 already takes (the finding names the exact replacement: --feature-gates=InitialCorruptCheck=true, --watch-progress-notify-interval, --corrupt-check-time, …), on 3.6, before the hop',
    guide: GUIDE,
    test: (f) => f.members.map(experimentalFinding),
  },
  {
    id: 'wal-v2-replay',
    check:
      'no v2 request of its own in a member\'s WAL after its newest snapshot: 3.7 replays it as a v3 request and panics ("unmarshal should never fail"; every 3.5 start writes one, until a snapshot on 3.6)',
    where: ['data dir'],
    severity: 'refuse',
    fix: 'restart that member once on 3.6 with --snapshot-count=1 (snapshot-count: 1 in its config file), wait for a new member/snap/*.snap, put its old snapshot-count back; opsctl does it member by member where it reaches the data dirs (the default; --no-fix-v2store refuses instead)',
    guide: GUIDE,
    test: (f) => {
      if (!f.current) return [{ result: 'later', detail: 'the WAL of every member is read before the hop (the hops before it write to it)' }];
      if (!f.walReplay) return [{ result: 'not-checked', detail: 'the WALs were not read' }];
      if ('why' in f.walReplay) return [{ result: 'not-checked', detail: f.walReplay.why }];
      return f.walReplay.map((w) => ({
        member: w.member,
        result: w.count ? 'problem' : 'ok',
        detail: w.count
          ? `${w.count} v2 request${w.count === 1 ? '' : 's'} (${Object.entries(w.after)
              .map(([k, n]) => `${n} ${k}`)
              .join(', ')}) after its newest snapshot (index ${w.snapshotIndex}): 3.7 would panic replaying ${w.count === 1 ? 'it' : 'them'}`
          : `no v2 request after its newest snapshot (index ${w.snapshotIndex})`,
      }));
    },
  },
  settingRule({
    id: 'v2-discovery-removed',
    check: 'v2 discovery is gone in 3.7: --discovery and --discovery-proxy are refused ("flag provided but not defined")',
    keys: V2_DISCOVERY_FLAGS,
    severity: 'refuse',
    fix: 'drop --discovery and --discovery-proxy (ETCD_DISCOVERY, ETCD_DISCOVERY_PROXY) before the hop: a member that has joined never reads them again; a new member bootstraps with --discovery-endpoints (v3 discovery) or --initial-cluster',
    guide: CHANGELOG,
    // (as a variable or a config file key 3.7 ignores it: a joined member does not need it)
    problem: (s) => (s.flag && !s.env ? `${s.from}: --${s.key} is gone with v2 discovery in 3.7` : undefined),
    note: (s) => (s.env ? UNRECOGNIZED_ENV : undefined),
  }),
  settingRule({
    id: 'v2-deprecation-enforced',
    check:
      '--v2-deprecation is ignored by 3.7, which enforces write-only: a member that kept custom v2 content on 3.6 (not-yet, write-only-skip-check) stops at start',
    keys: ['v2-deprecation'],
    severity: 'refuse',
    fix: 'on 3.6: etcdutl check v2store --data-dir DIR must say "No custom content found" (remove the custom v2 content first), then drop v2-deprecation from the flags, variables and config file',
    guide: GUIDE,
    problem: (s) =>
      V2_KEEPING.includes(String(s.value).trim())
        ? `${s.from}: v2-deprecation ${JSON.stringify(s.value)} lets 3.6 keep custom v2 content; 3.7 enforces write-only and refuses to start with any`
        : undefined,
  }),
  settingRule({
    id: 'enable-v2-gone',
    check: 'the v2 API and its v2-on-v3 emulation are gone (3.6 and 3.7 refuse --enable-v2 and --experimental-enable-v2v3)',
    keys: ['enable-v2', 'experimental-enable-v2v3'],
    severity: 'refuse',
    fix: 'drop enable-v2 and experimental-enable-v2v3 from the flags and variables (and the config file, where they are ignored): 3.7 serves v3 only',
    guide: GUIDE,
    // Measured on 3.7.3: the flags stop it (exit 2); the variables and the config file keys do not.
    problem: (s) => (s.flag && !s.env ? `${s.from}: "flag provided but not defined" in 3.7` : undefined),
    note: (s) => (s.env ? UNRECOGNIZED_ENV : undefined),
  }),
];
