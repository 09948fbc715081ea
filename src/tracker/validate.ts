import { z } from 'zod';
import { isCalendarDate, typeMessage, unknownProblems } from '@opsctl/shared/tracker/validate.js';
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

// The contract's own checks (shared with the mock): validateDefinition, validateOperationBody.
export { validateDefinition, validateOperationBody } from '@opsctl/shared/tracker/validate.js';
