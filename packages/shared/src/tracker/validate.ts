import { z } from 'zod';
import { DEFINITIONS } from './contract.js';
import type { ContractField } from './shape.js';
import { COLOR_PATTERN, UUID_PATTERN, type FieldProblem } from './patterns.js';

export type { FieldProblem } from './patterns.js';

/**
 * Request bodies checked against the generated contract (contract.ts, from the OpenAPI document): the
 * CLI before it sends, the mock on receipt. zod is loaded only by what validates a body.
 */

/**
 * The problems of keys that are no field: one each, or, for a flood (60,000 in a 1 MB body), one problem
 * naming the first few and the count, so the answer stays short whatever was sent.
 */
export function unknownProblems(unknown: readonly string[], mode: string): FieldProblem[] {
  if (unknown.length <= UNKNOWN_SHOWN) return unknown.map((k) => ({ field: shortKey(k), message: `is not a field of this ${mode} request`, kind: 'unknown' }));
  const first = unknown.slice(1, UNKNOWN_SHOWN).map(shortKey).join(', ');
  return [
    {
      field: shortKey(unknown[0] ?? ''),
      message: `is not a field of this ${mode} request, nor are ${unknown.length - 1} other keys (${first}, …)`,
      kind: 'unknown',
    },
  ];
}

/** How many unknown keys are named one by one before they are counted instead. */
const UNKNOWN_SHOWN = 5;

/** A client's key as a message names it: at most 64 characters. */
function shortKey(name: string): string {
  return name.length > 64 ? `${name.slice(0, 63)}…` : name;
}

/** zod's own wording of a wrong type ("Invalid input: expected string, received number") in the table's words. */
export function typeMessage(issue: z.core.$ZodIssue | undefined): string | undefined {
  if (!issue || issue.code !== 'invalid_type' || !issue.message.startsWith('Invalid input')) return undefined;
  const expected = String(issue.expected);
  const words: Record<string, string> = {
    string: 'a string',
    number: 'a number',
    int: 'an integer',
    boolean: 'true or false',
    array: 'a list',
    object: 'a mapping',
  };
  const got = /received (\w+)/.exec(issue.message)?.[1];
  return `must be ${words[expected] ?? expected}${got ? ` (got ${got === 'undefined' ? 'nothing' : `a ${got}`})` : ''}`;
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  return path.reduce<unknown>((v, k) => (v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined), value);
}

/** A value's kind as zod's messages name it: a number, a string, null, nothing. */
function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  return `a ${Array.isArray(v) ? 'array' : typeof v}`;
}

/** `YYYY-MM-DD` (optionally followed by `T…`) naming a day that exists. */
export function isCalendarDate(text: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:T.*)?$/.exec(text);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

// ---- the generated contract: the tables both the CLI and the mock check bodies with ----

const contractSchemas = new WeakMap<object, z.ZodType>();

/** The zod schema of one contract field (nullability included), built once per field object. */
function contractSchema(f: ContractField): z.ZodType {
  let s = contractSchemas.get(f);
  if (!s) {
    s = buildContractSchema(f);
    if (f.nullable) s = s.nullable();
    contractSchemas.set(f, s);
  }
  return s;
}

/** A definition as a zod object: its required fields, the rest optional; closed ones refuse other keys. */
function definitionSchema(name: string): z.ZodType {
  const def = DEFINITIONS[name];
  if (!def) return z.unknown();
  let s = contractSchemas.get(def);
  if (!s) {
    const shape: Record<string, z.ZodType> = {};
    for (const [k, f] of Object.entries(def.fields)) shape[k] = def.required.includes(k) ? contractSchema(f) : contractSchema(f).optional();
    s = def.closed ? z.strictObject(shape) : z.looseObject(shape);
    contractSchemas.set(def, s);
  }
  return s;
}

function buildContractSchema(f: ContractField): z.ZodType {
  if (f.ref) {
    const name = f.ref;
    return z.lazy(() => definitionSchema(name));
  }
  if (f.oneOf) {
    const [a, b, ...rest] = f.oneOf.map((x) => contractSchema(x));
    return a && b ? z.union([a, b, ...rest]) : (a ?? z.unknown());
  }
  switch (f.type) {
    case 'string': {
      if (f.enum) {
        const values = f.enum.map(String);
        return z.string({ error: `must be one of: ${values.join(', ')}` }).refine((v) => values.includes(v), { error: `must be one of: ${values.join(', ')}` });
      }
      if (f.format === 'date-time') return z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time, e.g. 2026-01-31T12:00:00Z' });
      if (f.format === 'date') return z.string({ error: 'must be a string' }).refine(isCalendarDate, { error: 'must be a date, e.g. 2026-01-31' });
      if (f.format === 'uuid') return z.string({ error: 'must be a uuid' }).regex(UUID_PATTERN, { error: 'must be a uuid (36 characters, 8-4-4-4-12 hex)' });
      let s = z.string({ error: 'must be a string' });
      if (f.format === 'css-color' || f.pattern === '^#[a-fA-F0-9]{6}$') s = s.regex(COLOR_PATTERN, { error: 'is not a hex colour ("#" and 6 hex digits)' });
      else if (f.pattern) s = s.regex(new RegExp(f.pattern), { error: `must match ${f.pattern}` });
      if (f.minLength !== undefined) s = s.min(f.minLength, { error: `must be at least ${f.minLength} characters` });
      if (f.maxLength !== undefined) {
        const max = f.maxLength;
        s = s.max(max, { error: (iss) => `must be at most ${max} characters (got ${String((iss.input as string).length)})` });
      }
      return s;
    }
    case 'integer':
    case 'number': {
      let n = f.type === 'integer' ? z.number({ error: 'must be an integer' }).int({ error: 'must be an integer' }) : z.number({ error: 'must be a number' });
      if (f.minimum !== undefined) n = n.min(f.minimum, { error: `must be at least ${f.minimum}` });
      if (f.maximum !== undefined) n = n.max(f.maximum, { error: `must be at most ${f.maximum}` });
      if (f.enum) {
        const values = f.enum;
        return n.refine((v) => values.includes(v), { error: `must be one of: ${values.join(', ')}` });
      }
      return n;
    }
    case 'boolean':
      return z.boolean({ error: 'must be true or false' });
    case 'array': {
      let a = z.array(f.items ? contractSchema(f.items) : z.unknown(), { error: 'must be a list' });
      if (f.minItems !== undefined) a = a.min(f.minItems, { error: `must have at least ${f.minItems} items` });
      if (f.maxItems !== undefined) a = a.max(f.maxItems, { error: `must have at most ${f.maxItems} items` });
      return a;
    }
    case 'object': {
      if (!f.properties) return z.record(z.string(), z.unknown(), { error: 'must be a mapping' });
      const shape: Record<string, z.ZodType> = {};
      for (const [k, v] of Object.entries(f.properties)) shape[k] = contractSchema(v).optional();
      return z.strictObject(shape);
    }
    default:
      return z.unknown();
  }
}

/**
 * Checks a body against one definition of the generated contract: required fields (for `create` or
 * when `requireAll`), `null` only where the document allows it, each field's type, limits, format and
 * enum, and no key the definition does not name. Problems name the field, as validateBody's do.
 */
export function validateDefinition(name: string, body: unknown, mode: 'create' | 'update'): FieldProblem[] {
  const def = DEFINITIONS[name];
  if (!def) return [{ field: 'body', message: `the contract has no definition ${name}`, kind: 'invalid' }];
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return [{ field: 'body', message: 'must be a JSON object', kind: 'invalid' }];
  const rec = body as Record<string, unknown>;
  const problems: FieldProblem[] = [];
  for (const [field, f] of Object.entries(def.fields)) {
    const value = Object.hasOwn(rec, field) ? rec[field] : undefined;
    if (value === undefined) {
      if (def.required.includes(field)) problems.push({ field, message: 'is required', kind: 'required' });
      continue;
    }
    if (value === null && !f.nullable) {
      problems.push({ field, message: 'cannot be null', kind: 'invalid' });
      continue;
    }
    const parsed = contractSchema(f).safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const tooLong = issue?.code === 'too_big' && (issue as { origin?: string }).origin === 'string';
      const path = issue?.path?.length ? `${field}.${issue.path.join('.')}` : field;
      const unknownKeys = issue?.code === 'unrecognized_keys' ? ` (${issue.keys.join(', ')} is not a field)` : '';
      // inside a nested body, say what was given (`labels[0].name: must be a string (got a number)`)
      const got = issue?.code === 'invalid_type' && issue.path.length ? ` (got ${describe(valueAt(value, issue.path))})` : '';
      const message = typeMessage(issue) ?? `${issue?.message ?? 'is invalid'}${got}`;
      problems.push({ field: path, message: message + unknownKeys, kind: tooLong ? 'too_long' : 'invalid' });
    }
  }
  if (def.closed) {
    problems.push(
      ...unknownProblems(
        Object.keys(rec).filter((k) => !Object.hasOwn(def.fields, k)),
        mode,
      ),
    );
  }
  return problems;
}

/** The body of operation `op` (method and path of the generated contract) checked against its definition; a body where none is declared is a problem. */
export function validateOperationBody(op: { method: string; body?: string }, body: unknown): FieldProblem[] {
  const mode = op.method === 'POST' ? 'create' : 'update';
  if (!op.body) {
    const empty = body === undefined || (body !== null && typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0);
    return empty ? [] : [{ field: 'body', message: 'is not accepted: this operation takes no body', kind: 'unknown' }];
  }
  return validateDefinition(op.body, body ?? {}, mode);
}
