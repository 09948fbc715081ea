import { z } from 'zod';
import { DEFINITIONS } from '../contract/tracker/contract.js';
import type { ContractField } from '../contract/tracker/shape.js';
import { COLOR_PATTERN, UUID_PATTERN, type FieldProblem, type FieldSpec } from './fields.js';

/**
 * zod validation of request bodies from the resource table, shared by the CLI (before sending) and
 * the mock (on receipt). Loaded only by verbs that send a body, so reads never pay for zod.
 */

/** Schemas of nested `json` fields, by the name a FieldSpec gives in `schema`. */
const colorSchema = z.string().regex(COLOR_PATTERN, { error: 'is not a hex colour ("#" and 6 hex digits)' });
const uuidSchema = z.string().regex(UUID_PATTERN, { error: 'must be a uuid' });
const labelParams = z.array(
  z.strictObject({
    name: z.string().min(1).max(128),
    color: colorSchema.optional(),
    description: z.string().max(1024).optional(),
    external_id: z.string().max(128).optional(),
  }),
  { error: 'must be a list of {name, color, description, external_id}' },
);
const storyContents = z.strictObject({
  name: z.string().max(512).optional(),
  description: z.string().max(100_000).optional(),
  story_type: z.enum(['feature', 'chore', 'bug']).optional(),
  custom_fields: z.array(z.strictObject({ field_id: uuidSchema, value: z.string().optional(), value_id: uuidSchema })).optional(),
  deadline: z.iso.datetime({ offset: true }).nullable().optional(),
  epic_id: z.number().int().nullable().optional(),
  estimate: z.number().int().nullable().optional(),
  external_links: z.array(z.string().max(2048)).optional(),
  file_ids: z.array(z.number().int()).optional(),
  linked_file_ids: z.array(z.number().int()).optional(),
  follower_ids: z.array(uuidSchema).optional(),
  owner_ids: z.array(uuidSchema).optional(),
  group_id: uuidSchema.nullable().optional(),
  iteration_id: z.number().int().nullable().optional(),
  project_id: z.number().int().nullable().optional(),
  workflow_state_id: z.number().int().optional(),
  labels: labelParams.optional(),
  tasks: z
    .array(
      z.strictObject({
        description: z.string().max(2048),
        complete: z.boolean().optional(),
        external_id: z.string().max(128).optional(),
        owner_ids: z.array(uuidSchema).optional(),
      }),
    )
    .optional(),
});

export const JSON_SCHEMAS: Record<string, z.ZodType> = {
  labelParams,
  categoryParams: z.array(z.strictObject({ name: z.string().min(1).max(128), color: colorSchema.optional(), external_id: z.string().max(128).optional() }), {
    error: 'must be a list of {name, color, external_id}',
  }),
  customFieldValues: z.array(
    z.strictObject({
      id: uuidSchema.optional(),
      value: z.string().min(1).max(63).optional(),
      color_key: z.string().max(63).nullable().optional(),
      enabled: z.boolean().optional(),
    }),
    { error: 'must be a list of {id, value, color_key, enabled}' },
  ),
  storyContents,
  storyCustomFields: z.array(z.strictObject({ field_id: uuidSchema, value_id: uuidSchema, value: z.string().max(63).optional() }), {
    error: 'must be a list of {field_id, value_id, value}',
  }),
  storyTasks: z.array(
    z.strictObject({
      description: z.string().min(1).max(2048),
      complete: z.boolean().optional(),
      external_id: z.string().max(128).optional(),
      owner_ids: z.array(uuidSchema).optional(),
      created_at: z.iso.datetime({ offset: true }).optional(),
      updated_at: z.iso.datetime({ offset: true }).optional(),
    }),
    { error: 'must be a list of {description, complete, owner_ids, external_id}' },
  ),
  storyLinkParams: z.array(
    z.strictObject({ verb: z.enum(['blocks', 'duplicates', 'relates to']), subject_id: z.number().int().optional(), object_id: z.number().int().optional() }),
    { error: 'must be a list of {verb, subject_id or object_id}' },
  ),
  // each story is checked against the stories fields on its own (naming stories[i]); here only the envelope
  storyList: z
    .array(z.record(z.string(), z.unknown()), { error: 'must be a list of story objects' })
    .min(1)
    .max(100, { error: 'at most 100 stories per request' }),
  keyResultValue: z.strictObject(
    { numeric_value: z.string().max(64).optional(), boolean_value: z.boolean().optional() },
    { error: 'must be {numeric_value} or {boolean_value}' },
  ),
};

/**
 * Each field's schema, built once per FieldSpec: building a zod schema costs far more than running it,
 * and an apply file of 15,000 records validated 45,000 fresh schemas (most of its run time).
 */
const schemas = new WeakMap<FieldSpec, z.ZodType>();

/** The zod schema of one field (without nullability). */
export function fieldSchema(spec: FieldSpec): z.ZodType {
  let schema = schemas.get(spec);
  if (!schema) {
    schema = buildFieldSchema(spec);
    schemas.set(spec, schema);
  }
  return schema;
}

function buildFieldSchema(spec: FieldSpec): z.ZodType {
  switch (spec.type) {
    case 'string': {
      let s = z.string({ error: 'must be a string' });
      if (spec.min !== undefined) s = s.min(spec.min, { error: `must be at least ${spec.min} characters` });
      if (spec.max !== undefined)
        s = s.max(spec.max, { error: (iss) => `must be at most ${spec.max} characters (got ${String((iss.input as string).length)})` });
      return s;
    }
    case 'int': {
      let n = z.number({ error: 'must be an integer' }).int({ error: 'must be an integer' });
      if (spec.min !== undefined) n = n.min(spec.min, { error: `must be at least ${spec.min}` });
      if (spec.maxValue !== undefined) n = n.max(spec.maxValue, { error: `must be at most ${spec.maxValue}` });
      return n;
    }
    case 'bool':
      return z.boolean({ error: 'must be true or false' });
    case 'color':
      return z.string({ error: 'must be a string' }).regex(COLOR_PATTERN, { error: 'is not a hex colour ("#" and 6 hex digits)' });
    case 'uuid':
      return z.string({ error: 'must be a uuid' }).regex(UUID_PATTERN, { error: 'must be a uuid (36 characters, 8-4-4-4-12 hex)' });
    case 'datetime':
      return z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time, e.g. 2026-01-31T12:00:00Z' });
    case 'date':
      // a real calendar day (2026-13-01 and 2026-02-30 are refused), optionally with a time after it
      return z.string().refine(isCalendarDate, { error: 'must be a date, e.g. 2026-01-31' });
    case 'enum': {
      const values = spec.values ?? [];
      return z.string({ error: `must be one of: ${values.join(', ')}` }).refine((v) => values.includes(v), { error: `must be one of: ${values.join(', ')}` });
    }
    case 'int[]':
      return z.array(z.number().int(), { error: 'must be a list of integers' });
    case 'uuid[]':
      return z.array(z.string().regex(UUID_PATTERN, { error: 'must be a uuid' }), { error: 'must be a list of uuids' });
    case 'string[]':
      return z.array(spec.max ? z.string().max(spec.max) : z.string(), { error: 'must be a list of strings' });
    case 'json':
      return (spec.schema && JSON_SCHEMAS[spec.schema]) || z.unknown();
  }
}

/**
 * Validates a request body against the fields accepted for `mode`. Returns the problems found (empty
 * when valid). Unknown fields are problems too: the contract's schemas allow no additional properties.
 */
export function validateBody(fields: Record<string, FieldSpec>, mode: 'create' | 'update', body: unknown): FieldProblem[] {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return [{ field: 'body', message: 'must be a JSON object', kind: 'invalid' }];
  }
  const problems: FieldProblem[] = [];
  const rec = body as Record<string, unknown>;
  for (const [name, spec] of Object.entries(fields)) {
    if (spec.in && !spec.in.includes(mode)) continue;
    const value = rec[name];
    if (value === undefined) {
      if (mode === 'create' && spec.required) problems.push({ field: name, message: 'is required', kind: 'required' });
      continue;
    }
    if (value === null) {
      if (!spec.nullable) problems.push({ field: name, message: 'cannot be null', kind: 'invalid' });
      continue;
    }
    const parsed = fieldSchema(spec).safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const tooLong = issue?.code === 'too_big' && (typeof value === 'string' || (issue as { origin?: string }).origin === 'string');
      const path = issue?.path?.length ? `${name}.${issue.path.join('.')}` : name;
      problems.push({ field: path, message: typeMessage(issue) ?? issue?.message ?? 'is invalid', kind: tooLong ? 'too_long' : 'invalid' });
    }
  }
  // Own keys only: a body key such as `constructor` or `__proto__` is no field of any resource.
  const unknown = Object.keys(rec).filter((name) => {
    const spec = Object.hasOwn(fields, name) ? fields[name] : undefined;
    return !spec || (spec.in && !spec.in.includes(mode));
  });
  problems.push(...unknownProblems(unknown, mode));
  return problems;
}

/**
 * The problems of keys that are no field: one each, or, for a flood (60,000 in a 1 MB body), one problem
 * naming the first few and the count, so the answer stays short whatever was sent.
 */
function unknownProblems(unknown: readonly string[], mode: string): FieldProblem[] {
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
function typeMessage(issue: z.core.$ZodIssue | undefined): string | undefined {
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

/** `YYYY-MM-DD` (optionally followed by `T…`) naming a day that exists. */
function isCalendarDate(text: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:T.*)?$/.exec(text);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

// ---- the generated contract (src/contract/tracker): the tables both the CLI and the mock check bodies with ----

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
      problems.push({ field: path, message: (typeMessage(issue) ?? issue?.message ?? 'is invalid') + unknownKeys, kind: tooLong ? 'too_long' : 'invalid' });
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
