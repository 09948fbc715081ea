/** A parsed JSON object, field by field. */
export type JsonObject = Readonly<Record<string, unknown>>;

/** `v` when it is a JSON object, else an empty one (a missing or odd part of a body reads as absent). */
export function asObject(v: unknown): JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as JsonObject) : {};
}

/** `v` when it is a JSON array, else an empty one. */
export function asList(v: unknown): unknown[] {
  return Array.isArray(v) ? (v as unknown[]) : [];
}

/** A scalar as text (undefined when absent; an object or array as its JSON). */
export function textOf(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}
