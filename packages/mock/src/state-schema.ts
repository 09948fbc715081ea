import { z } from 'zod';
import { COLLECTIONS } from './services/tracker/collections.js';

/**
 * The shape the mock's state file must have before any service reads or writes it. It checks what the
 * services rely on (types of ids, counters, collections and records), lets extra keys through (newer
 * fields), and allows a slice or collection to be missing (an older state: the service fills it in).
 * Anything else is refused, never repaired: repairing a wrong shape means throwing data away.
 */
const record = z.looseObject({});
const records = z.array(record);
const recordMap = z.record(z.string(), record);

const tracker = z.looseObject({
  token: z.string().min(1),
  seq: z.number().int().nonnegative(),
  workspaceId: z.string().min(1),
  features: z.record(z.string(), z.boolean()).optional(),
  entitlements: z.record(z.string(), z.number()).optional(),
  ...Object.fromEntries(COLLECTIONS.map((c) => [c, records.optional()])),
});

const oauth = z
  .looseObject({
    clients: recordMap.optional(),
    users: records.optional(),
    pending: recordMap.optional(),
    accessTokens: recordMap.optional(),
    refreshTokens: recordMap.optional(),
    codes: recordMap.optional(),
  })
  // The service fills in a registry that has no clients; users kept without clients would be replaced.
  .refine((o) => o.clients !== undefined || o.users === undefined, { message: 'has users but no clients', path: ['clients'] });

const labels = z.looseObject({ labels: records });

export const MockStateSchema = z
  .looseObject({ tracker: tracker.optional(), oauth: oauth.optional(), labels: labels.optional() }, { error: 'must be a JSON object' })
  .refine((s) => Object.keys(s).length > 0, { message: 'is empty: opsctl never writes an empty state' });

/** The top-level slices a mock state holds; a file with none of them is not a mock state (or a misspelt one). */
const SLICES = ['tracker', 'oauth', 'labels'];

/** The first problem of a state, as `path: message` (path like `tracker.labels[0]`), or undefined when it is valid. */
export function stateProblem(state: unknown): string | undefined {
  const noSlice = unknownSlicesOnly(state);
  if (noSlice) return noSlice;
  const r = MockStateSchema.safeParse(state);
  if (r.success) return undefined;
  const [issue] = r.error.issues;
  if (!issue) return r.error.message; // (a failed parse has at least one issue)
  let path = '';
  for (const p of issue.path) path += typeof p === 'number' ? `[${p}]` : `${path ? '.' : ''}${String(p)}`;
  return `${path || '(top level)'}: ${issue.message}`;
}

/**
 * A JSON object whose keys are all unknown (`{"foo":1}`, a misspelt `{"trackr":…}`): refused, naming the
 * keys, rather than taken as a first run (which would add fresh slices beside them, a new token among them).
 */
function unknownSlicesOnly(state: unknown): string | undefined {
  if (state === null || typeof state !== 'object' || Array.isArray(state)) return undefined;
  const keys = Object.keys(state);
  if (keys.length === 0 || keys.some((k) => SLICES.includes(k))) return undefined;
  const shown = keys.slice(0, 5).map((k) => JSON.stringify(k.length > 40 ? `${k.slice(0, 40)}…` : k));
  const more = keys.length > 5 ? ` and ${keys.length - 5} more` : '';
  return `(top level): has none of the mock's collections (${SLICES.join(', ')}), only ${shown.join(', ')}${more}: a misspelt name, or not a mock state file`;
}
