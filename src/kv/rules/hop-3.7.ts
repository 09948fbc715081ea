import { ladderRow } from '@opsctl/shared/etcd-ladder.js';
import { EXPERIMENTAL_KEYS, experimentalFinding } from './experimental.js';
import { floorRule } from './floor.js';
import { settingRule, UNRECOGNIZED_ENV } from './settings.js';
import { trialRule } from './trial.js';
import type { Rule } from './types.js';

const GUIDE = ladderRow('3.7')!.guide!;
const CHANGELOG = 'https://github.com/etcd-io/etcd/blob/main/CHANGELOG/CHANGELOG-3.7.md';

/** The v2 discovery flags 3.7 removed with v2 discovery (etcd-io/etcd#20109; measured on 3.7.3: "flag provided but not defined"). */
export const V2_DISCOVERY_FLAGS = ['discovery', 'discovery-proxy'];

/** --v2-deprecation stages that would let a member keep custom v2 content (3.7 enforces write-only, ignoring the setting). */
const V2_KEEPING = ['not-yet', 'write-only-skip-check'];

/** The --v2-deprecation values 3.7.3 takes as a flag or variable (any other: "invalid value"). */
const V2_STAGES = ['write-only', 'write-only-skip-check', 'gone'];

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
    keys: EXPERIMENTAL_KEYS,
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
    problem: (s) => (s.flag && !s.env ? `${s.from}: --${s.key} is gone with v2 discovery in 3.7 ("flag provided but not defined: -${s.key}")` : undefined),
    note: (s) => (s.env ? UNRECOGNIZED_ENV : undefined),
  }),
  settingRule({
    id: 'v2-deprecation-enforced',
    check:
      "--v2-deprecation takes only write-only, write-only-skip-check or gone in 3.7: another value as a flag or variable stops it (not-yet, 3.5's default, included)",
    keys: ['v2-deprecation'],
    severity: 'refuse',
    fix: 'drop v2-deprecation from the flags and variables (3.7 enforces write-only whatever it says), on 3.6 first: etcdutl check v2store --data-dir DIR must say "No custom content found"',
    guide: GUIDE,
    // Measured on 3.7.3 (and 3.6.16): not-yet is refused as a flag (exit 2) and as a variable (exit 1); a config
    // file's value is not validated.
    problem: (s) =>
      s.flag && !V2_STAGES.includes(String(s.value).trim())
        ? `${s.from}: v2-deprecation ${JSON.stringify(s.value)}: 3.7 exits with "invalid value ${JSON.stringify(String(s.value).trim())} for ${s.env ? 'ETCD_V2_DEPRECATION' : 'flag -v2-deprecation'}"`
        : undefined,
  }),
  settingRule({
    id: 'v2-deprecation-ignored',
    check: '--v2-deprecation is ignored by 3.7 (and 3.6.16): it enforces write-only, whatever stage a member asks for',
    keys: ['v2-deprecation'],
    severity: 'warn',
    fix: 'drop v2-deprecation from the flags, variables and config file: custom v2 content stops 3.7 at start whatever it says (on 3.6, etcdutl check v2store --data-dir DIR must say "No custom content found"; the data trial starts 3.7 on a copy of each member\'s data)',
    guide: GUIDE,
    // Measured on 3.7.3: each value it takes, and any value in a config file, starts it with this warning.
    problem: (s) =>
      V2_KEEPING.includes(String(s.value).trim()) && (!s.flag || V2_STAGES.includes(String(s.value).trim()))
        ? `${s.from}: v2-deprecation ${JSON.stringify(s.value)} asks to keep custom v2 content; 3.7 starts with it, warning "The default value is enforced, ignoring user input", and enforces write-only`
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
