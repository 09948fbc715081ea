/**
 * The start-up flag checks that changed with 3.6 and 3.7, as the real binaries make them (measured on
 * 3.5.35, 3.6.16 and 3.7.3): --feature-gates came with 3.6 (3.5: "flag provided but not defined"; 3.6+
 * refuse an unknown gate or a value that is not a bool), and 3.7 removed every --experimental-* flag
 * 3.6 deprecated: on the command line it exits at the first one it meets, naming only that one (exit
 * 2). In a config file 3.7 ignores those keys (it starts without the setting), and so does this member.
 */
import { compareMinor as cmp } from '@opsctl/shared/etcd-versions.js';

/** The 23 experimental flags 3.6.16's --help has and 3.7.3's lacks. */
export const REMOVED_IN_37: readonly string[] = Object.freeze([
  'experimental-bootstrap-defrag-threshold-megabytes',
  'experimental-compact-hash-check-enabled',
  'experimental-compact-hash-check-time',
  'experimental-compaction-batch-limit',
  'experimental-compaction-sleep-interval',
  'experimental-corrupt-check-time',
  'experimental-distributed-tracing-address',
  'experimental-distributed-tracing-instance-id',
  'experimental-distributed-tracing-sampling-rate',
  'experimental-distributed-tracing-service-name',
  'experimental-downgrade-check-time',
  'experimental-enable-distributed-tracing',
  'experimental-enable-lease-checkpoint',
  'experimental-enable-lease-checkpoint-persist',
  'experimental-initial-corrupt-check',
  'experimental-memory-mlock',
  'experimental-peer-skip-client-san-verification',
  'experimental-snapshot-catchup-entries',
  'experimental-stop-grpc-service-on-defrag',
  'experimental-txn-mode-write-with-shared-buffer',
  'experimental-warning-apply-duration',
  'experimental-warning-unary-request-duration',
  'experimental-watch-progress-notify-interval',
]);

/** The server feature gates of each minor (3.6.16's; 3.7.3 adds two). */
const GATES_36 = [
  'StopGRPCServiceOnDefrag',
  'InitialCorruptCheck',
  'CompactHashCheck',
  'TxnModeWriteWithSharedBuffer',
  'LeaseCheckpoint',
  'LeaseCheckpointPersist',
  'SetMemberLocalAddr',
];
const GATES_37 = [...GATES_36, 'FastLeaseKeepAlive', 'PriorityRequest'];

/** The flags of a command line as Go's flag package reads them: `--name=value`, `--name value`, `-name`. */
function flagNames(argv: readonly string[]): Array<{ name: string; value?: string }> {
  const out: Array<{ name: string; value?: string }> = [];
  for (const a of argv) {
    const m = /^--?([A-Za-z0-9][A-Za-z0-9-]*)(?:=([\s\S]*))?$/.exec(a);
    if (m) out.push({ name: m[1]!, ...(m[2] !== undefined ? { value: m[2] } : {}) });
  }
  return out;
}

/** Why a --feature-gates value is refused by `minor` (undefined: it is not). */
export function badGates(minor: string, value: string): string | undefined {
  const known = cmp(minor, '3.7') >= 0 ? GATES_37 : GATES_36;
  for (const pair of value
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [gate = '', v] = pair.split('=');
    if (!known.includes(gate)) return `unrecognized feature gate: ${gate}`;
    if (!/^(1|t|T|TRUE|true|True|0|f|F|FALSE|false|False)$/.test(v ?? ''))
      return `invalid value of ${pair}, err: strconv.ParseBool: parsing "${v ?? ''}": invalid syntax`;
  }
  return undefined;
}

/** The first refusal of `argv` by a member of `minor`, as etcd prints it (then exits 2); undefined when it starts. */
export function refusedFlag(minor: string, argv: readonly string[]): string | undefined {
  for (const f of flagNames(argv)) {
    if (cmp(minor, '3.7') >= 0 && REMOVED_IN_37.includes(f.name)) return `flag provided but not defined: -${f.name}`;
    if (f.name === 'feature-gates') {
      if (cmp(minor, '3.6') < 0) return 'flag provided but not defined: -feature-gates';
      const why = badGates(minor, f.value ?? '');
      if (why) return `invalid value "${f.value ?? ''}" for flag -feature-gates: ${why}`;
    }
  }
  return undefined;
}
