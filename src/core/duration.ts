import { UsageError } from './errors.js';

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
const UNIT_NAME = { ms: 'milliseconds', s: 'seconds', m: 'minutes', h: 'hours' } as const;

export type DurationUnit = keyof typeof UNIT_MS;

/**
 * "500ms", "30s", "2m", "1.5h" → whole milliseconds; a bare number counts in `bare` (the kv timeouts:
 * milliseconds; the login timeout and the mock's waits: seconds). Undefined when TEXT is not one.
 * The one duration syntax of every flag that takes one (test/unit/duration.test.ts finds any other).
 */
export function parseDuration(text: string, bare: DurationUnit = 'ms'): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!m) return undefined;
  return Math.round(Number(m[1]) * UNIT_MS[(m[2] as DurationUnit | undefined) ?? bare]);
}

const GO_UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, μs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * A Go duration (time.ParseDuration: "2s", "1m30s", "500ms", "0") in whole milliseconds; undefined when
 * TEXT is not one. Not opsctl's own syntax: how etcd reads its config file's durations and etcdctl its
 * ETCDCTL_* variables, for the checks and variables that must take what they take.
 */
export function parseGoDuration(text: string): number | undefined {
  const s = text.trim();
  if (s === '0') return 0;
  if (!/^(\d+(\.\d+)?(ns|us|µs|μs|ms|s|m|h))+$/.test(s)) return undefined;
  let ms = 0;
  for (const m of s.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|μs|ms|s|m|h)/g)) ms += Number(m[1]) * GO_UNIT_MS[m[2]!]!;
  return Math.round(ms);
}

export interface DurationFlag {
  /** What a bare number counts (default milliseconds). */
  bare?: DurationUnit;
  /** Zero refused too (a timeout of nothing). */
  positive?: boolean;
}

/**
 * The value of a duration flag in milliseconds, or the one usage error every such flag gives (exit 2):
 * the flag, the value and the forms it takes, e.g. `--timeout: "soon" is not a duration` with
 * "write it as 500ms, 30s, 2m or 1.5h (a bare number counts seconds)".
 */
export function durationFlag(flag: string, value: string, o: DurationFlag = {}): number {
  const bare = o.bare ?? 'ms';
  const ms = parseDuration(value, bare);
  if (ms !== undefined && (ms > 0 || !o.positive)) return ms;
  return fail(flag, value, { bare, positive: o.positive });
}

function fail(flag: string, value: string, { bare, positive }: { bare: DurationUnit; positive?: boolean }): never {
  throw new UsageError(`${flag}: ${JSON.stringify(value)} is not a duration${positive ? ' above zero' : ''}`, {
    field: flag,
    hint: `write it as 500ms, 30s, 2m or 1.5h (a bare number counts ${UNIT_NAME[bare]})`,
  });
}
