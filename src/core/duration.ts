const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

export type DurationUnit = keyof typeof UNIT_MS;

/**
 * "500ms", "30s", "2m", "1.5h" → whole milliseconds; a bare number counts in `bare` (the kv timeouts:
 * milliseconds; the login timeout and the mock's waits: seconds). Undefined when TEXT is not one.
 * The one duration syntax of every flag that takes one.
 */
export function parseDuration(text: string, bare: DurationUnit = 'ms'): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!m) return undefined;
  return Math.round(Number(m[1]) * UNIT_MS[(m[2] as DurationUnit | undefined) ?? bare]);
}
