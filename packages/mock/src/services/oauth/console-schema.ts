/**
 * The developer console's client fields (seed 000, "OAuth client"), validated the same way by the mock's
 * admin API and by `opsctl mock clients create|update` before anything is sent. Pure: no imports with
 * side effects, so the CLI can load it cheaply.
 */

import { emptyDict } from '@opsctl/shared/lookup.js';

export type ClientType = 'desktop' | 'universal_desktop' | 'mobile_a' | 'mobile_b' | 'extension';
export const CONSOLE_CLIENT_TYPES: readonly ClientType[] = ['desktop', 'universal_desktop', 'mobile_a', 'mobile_b', 'extension'];

/** A field as the console takes it: which types have it, and the rule for its value. */
interface FieldRule {
  types: readonly ClientType[];
  /** Required at creation for these types. */
  required?: readonly ClientType[];
  kind: 'string' | 'boolean';
  /** Returns the problem (and a hint) or undefined; may normalise the value. */
  check?: (value: string, type: ClientType) => { problem: string; hint?: string } | { value: string } | undefined;
  /** `null` in an update clears it. */
  clearable?: boolean;
}

const ALL = CONSOLE_CLIENT_TYPES;
const PACKAGE = /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$/;
const BUNDLE = /^[A-Za-z0-9*-]+(\.[A-Za-z0-9*-]+)*$/;
const SHA1 = /^[0-9A-Fa-f]{2}(:?[0-9A-Fa-f]{2}){19}$/;
const CLIENT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** The fields of the seed's client table, per type. */
export const CLIENT_FIELDS: ReadonlyMap<string, FieldRule> = new Map<string, FieldRule>([
  [
    'client_id',
    {
      types: ALL,
      kind: 'string',
      check: (v) => (CLIENT_ID.test(v) ? undefined : { problem: 'must be 1 to 128 letters, digits, ".", "_" or "-", starting with a letter or digit' }),
    },
  ],
  [
    'name',
    {
      types: ALL,
      required: ALL,
      kind: 'string',
      check: (v) => {
        const t = v.trim();
        if (!t) return { problem: 'must not be empty', hint: 'the name shown in the project, e.g. --name "My app"' };
        if (t.length > 128) return { problem: `is ${t.length} characters; at most 128` };
        // eslint-disable-next-line no-control-regex -- the pattern is meant to find control characters
        if (/[\u0000-\u001f\u007f]/.test(t)) return { problem: 'must not contain control characters' };
        return { value: t };
      },
    },
  ],
  [
    'package_name',
    {
      types: ['mobile_a'],
      required: ['mobile_a'],
      kind: 'string',
      check: (v) =>
        v.length <= 150 && PACKAGE.test(v)
          ? undefined
          : { problem: `"${v}" is not an application package name`, hint: 'dot-separated parts starting with a letter, e.g. com.example.app' },
    },
  ],
  [
    'sha1_fingerprint',
    {
      types: ['mobile_a'],
      required: ['mobile_a'],
      kind: 'string',
      check: (v) =>
        SHA1.test(v) && (v.includes(':') ? v.length === 59 : v.length === 40)
          ? { value: (v.replace(/:/g, '').toUpperCase().match(/../g) as string[]).join(':') }
          : {
              problem: `"${v}" is not a SHA-1 signing-certificate fingerprint`,
              hint: '20 bytes in hex, e.g. DA:39:A3:EE:5E:6B:4B:0D:32:55:BF:EF:95:60:18:90:AF:D8:07:09 (keytool -list -v)',
            },
    },
  ],
  ['custom_scheme_enabled', { types: ['mobile_a'], kind: 'boolean' }],
  [
    'bundle_id',
    {
      types: ['mobile_b'],
      required: ['mobile_b'],
      kind: 'string',
      check: (v) =>
        v.length <= 155 && BUNDLE.test(v)
          ? undefined
          : { problem: `"${v}" is not a bundle identifier`, hint: 'dot-separated letters, digits, "-" (and "*" as a wildcard), e.g. com.example.app' },
    },
  ],
  [
    'store_id',
    {
      types: ['mobile_b', 'universal_desktop'],
      required: ['universal_desktop'],
      kind: 'string',
      clearable: true,
      check: (v, type) => {
        if (type === 'universal_desktop') {
          return /^[A-Za-z0-9]{12}$/.test(v)
            ? undefined
            : {
                problem: `"${v}" is ${v.length} characters; the store ID of a universal desktop app is exactly 12 letters and digits`,
                hint: 'e.g. 9NBLGGH4NNS1',
              };
        }
        return /^[0-9]{1,20}$/.test(v)
          ? undefined
          : { problem: `"${v}" is not numeric`, hint: 'the number at the end of the app\'s store URL, e.g. 284882215 (without the "id" prefix)' };
      },
    },
  ],
  [
    'team_id',
    {
      types: ['mobile_b'],
      kind: 'string',
      clearable: true,
      check: (v) => (/^[A-Z0-9]{10}$/.test(v) ? undefined : { problem: `"${v}" is not a team ID`, hint: '10 upper-case letters and digits, e.g. ABCDE12345' }),
    },
  ],
  ['integrity', { types: ['mobile_b'], kind: 'boolean' }],
  [
    'item_id',
    {
      types: ['extension'],
      required: ['extension'],
      kind: 'string',
      check: (v) =>
        /^[a-p]{32}$/.test(v) ? undefined : { problem: `"${v}" is not a store item ID`, hint: "32 letters a to p, the last part of the item's store URL" },
    },
  ],
]);

export interface FieldProblem {
  field: string;
  message: string;
  hint?: string;
}

export type Checked = { ok: true; value: Record<string, string | boolean | null> } | ({ ok: false } & FieldProblem);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Checks a create (type and required fields) or an update (a subset; `null` clears an optional field)
 * against the seed's table. The first problem is returned, naming its field.
 */
export function checkClientFields(input: unknown, mode: 'create' | 'update', currentType?: ClientType): Checked {
  if (!isRecord(input)) return { ok: false, field: 'body', message: 'must be a JSON object of client fields' };
  const type = (mode === 'create' ? input.type : currentType) as ClientType;
  if (mode === 'create' && !CONSOLE_CLIENT_TYPES.includes(type)) {
    return {
      ok: false,
      field: 'type',
      message: input.type === undefined ? 'is required' : `"${typeof input.type === 'string' ? input.type : JSON.stringify(input.type)}" is not a client type`,
      hint: `one of ${CONSOLE_CLIENT_TYPES.join(', ')}`,
    };
  }
  const out = emptyDict<string | boolean | null>();
  for (const key of Object.keys(input)) {
    if (key === 'type') {
      if (mode === 'update' && input.type !== currentType)
        return { ok: false, field: 'type', message: 'cannot be changed; create a new client of the other type' };
      continue;
    }
    const rule = CLIENT_FIELDS.get(key);
    if (!rule) return { ok: false, field: key, message: 'is not a client field', hint: `fields: type, ${[...CLIENT_FIELDS.keys()].join(', ')}` };
    if (mode === 'update' && key === 'client_id') return { ok: false, field: key, message: 'cannot be changed' };
    if (!rule.types.includes(type))
      return { ok: false, field: key, message: `is not a field of ${type} clients`, hint: `it belongs to: ${rule.types.join(', ')}` };
    const value = input[key];
    if (value === null && mode === 'update' && rule.clearable && !rule.required?.includes(type)) {
      out[key] = null;
      continue;
    }
    if (rule.kind === 'boolean') {
      if (typeof value !== 'boolean') return { ok: false, field: key, message: 'must be true or false' };
      out[key] = value;
      continue;
    }
    if (typeof value !== 'string') return { ok: false, field: key, message: 'must be a string' };
    const res = rule.check?.(value, type);
    if (res && 'problem' in res) return { ok: false, field: key, message: res.problem, hint: res.hint };
    out[key] = res && 'value' in res ? res.value : value;
  }
  if (mode === 'create') {
    for (const [key, rule] of CLIENT_FIELDS) {
      if (rule.required?.includes(type) && (out[key] === undefined || out[key] === null)) {
        return { ok: false, field: key, message: `is required for ${type} clients`, hint: HINTS.get(key) };
      }
    }
  }
  if (mode === 'update' && Object.keys(out).length === 0) return { ok: false, field: 'body', message: 'names no field to change' };
  return { ok: true, value: out };
}

const HINTS = new Map<string, string>([
  ['name', 'the name shown in the project'],
  ['package_name', 'the application package name, e.g. com.example.app'],
  ['sha1_fingerprint', 'the SHA-1 fingerprint of the signing certificate (keytool -list -v)'],
  ['bundle_id', 'the bundle identifier, e.g. com.example.app'],
  ['store_id', 'the store ID: exactly 12 characters'],
  ['item_id', 'the store item ID of the extension (32 letters a to p)'],
]);

/** A bundle identifier with a wildcard cannot be attested (the integrity check needs the exact app). */
export function integrityProblem(client: { team_id?: string; bundle_id?: string }): FieldProblem | undefined {
  if (!client.team_id)
    return { field: 'team_id', message: 'is required to enable the integrity check', hint: 'set it first: opsctl mock clients update ID --team-id ABCDE12345' };
  if (!client.bundle_id || client.bundle_id.includes('*')) {
    return {
      field: 'bundle_id',
      message: `"${client.bundle_id ?? ''}" has a "*": the integrity check needs the exact bundle identifier`,
      hint: 'set the exact one: --bundle-id com.example.app',
    };
  }
  return undefined;
}

export const INTEGRITY_ACTIONS = ['enable', 'enforce', 'unenforce', 'disable'] as const;
export type IntegrityAction = (typeof INTEGRITY_ACTIONS)[number];

export const EVENT_KINDS = ['sessions-revoked', 'token-revoked', 'account-disabled', 'account-enabled'] as const;
export type EventKind = (typeof EVENT_KINDS)[number];
