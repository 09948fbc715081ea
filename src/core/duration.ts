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
  return fail(flag, value, bare, o.positive);
}

function fail(flag: string, value: string, bare: DurationUnit, positive?: boolean): never {
  throw new UsageError(`${flag}: ${JSON.stringify(value)} is not a duration${positive ? ' above zero' : ''}`, {
    field: flag,
    hint: `write it as 500ms, 30s, 2m or 1.5h (a bare number counts ${UNIT_NAME[bare]})`,
  });
}
