import { z } from 'zod';
import { ValidationError } from '../core/errors.js';
import { FIELD_TYPES } from './types.js';
import { ROLES } from './names.js';

/**
 * The desired state of one label, as written in an apply file (YAML or JSON):
 *
 *   id: 0a1b2c…            # optional: the label to manage (else matched by title, or created)
 *   title: Sensitivity
 *   description: How secret a document is
 *   fields:
 *     - name: Level          # the field's display name (or give `id` to rename it)
 *       type: selection      # text | integer | date | selection | user
 *       required: true
 *       choices: [Low, {name: High, description: Need-to-know}]
 *     - {name: Review date, type: date, dateFormat: SHORT_DATE}
 *     - {name: Reviewers, type: user, list: 5}
 *   permissions:             # optional: when given, exactly these (others are removed)
 *     - {email: bob@example.com, role: READER}
 *     - {audience: audiences/default, role: APPLIER}
 */
const choice = z.union([
  z.string().min(1),
  z.strictObject({ id: z.string().regex(/^[A-Za-z0-9_]+$/, 'must match [A-Za-z0-9_]+').optional(), name: z.string().min(1), description: z.string().optional() }),
]);

const field = z
  .strictObject({
    id: z.string().regex(/^[A-Za-z0-9]+$/, 'must match [A-Za-z0-9]+').optional(),
    name: z.string().min(1),
    type: z.enum(FIELD_TYPES),
    required: z.boolean().optional(),
    list: z.union([z.boolean(), z.number().int().positive()]).optional(),
    dateFormat: z.enum(['LONG_DATE', 'SHORT_DATE']).optional(),
    choices: z.array(choice).optional(),
  })
  .superRefine((f, ctx) => {
    if (f.choices && f.type !== 'selection') ctx.addIssue({ code: 'custom', path: ['choices'], message: `only a selection field has choices (this one is ${f.type})` });
    if (f.list !== undefined && f.type !== 'selection' && f.type !== 'user') ctx.addIssue({ code: 'custom', path: ['list'], message: 'only selection and user fields can hold a list' });
    if (f.dateFormat && f.type !== 'date') ctx.addIssue({ code: 'custom', path: ['dateFormat'], message: 'only a date field has a dateFormat' });
  });

const permission = z
  .strictObject({
    email: z.email().optional(),
    audience: z.string().regex(/^audiences\/[A-Za-z0-9_-]+$/, 'must look like audiences/default').optional(),
    role: z.enum(ROLES),
  })
  .refine((p) => Boolean(p.email) !== Boolean(p.audience), { message: 'give exactly one of email or audience' });

export const labelFileSchema = z.strictObject({
  id: z.string().regex(/^(?:labels\/)?[A-Za-z0-9_-]+$/, 'must be a label id or labels/ID').optional(),
  title: z.string().min(1),
  description: z.string().optional(),
  labelType: z.enum(['SHARED', 'ADMIN']).optional(),
  fields: z.array(field).optional(),
  permissions: z.array(permission).optional(),
});

export interface DesiredChoice {
  id?: string;
  name: string;
  description?: string;
}
export interface DesiredField {
  id?: string;
  name: string;
  type: (typeof FIELD_TYPES)[number];
  required?: boolean;
  list?: boolean | number;
  dateFormat?: 'LONG_DATE' | 'SHORT_DATE';
  choices?: DesiredChoice[];
}
export interface DesiredLabel {
  id?: string;
  title: string;
  description?: string;
  labelType?: 'SHARED' | 'ADMIN';
  fields: DesiredField[];
  permissions?: Array<{ email?: string; audience?: string; role: (typeof ROLES)[number] }>;
}

/** Parses and validates an apply file; every problem names its path in the file. */
export async function parseLabelFile(text: string, source: string): Promise<DesiredLabel> {
  let raw: unknown;
  try {
    if (/^\s*[{[]/.test(text)) raw = JSON.parse(text);
    else {
      // yaml is CommonJS when bundled: its exports may sit on `default`
      const mod = (await import('yaml')) as typeof import('yaml') & { default?: typeof import('yaml') };
      raw = (mod.parse ?? mod.default!.parse)(text);
    }
  } catch (err) {
    throw new ValidationError(source, `is not valid YAML or JSON: ${(err as Error).message.split('\n')[0]}`);
  }
  const result = labelFileSchema.safeParse(raw);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(top level)'}: ${i.message}`);
    throw new ValidationError(source, `does not describe a label:\n  ${lines.join('\n  ')}`, 'see `opsctl labels apply --help` or the README section "Label service" for the file format');
  }
  const d = result.data;
  const problems: string[] = [];
  const seen = new Set<string>();
  d.fields?.forEach((f, i) => {
    if (seen.has(f.name)) problems.push(`fields.${i}.name: "${f.name}" is used by two fields`);
    seen.add(f.name);
    const names = new Set<string>();
    f.choices?.forEach((c, j) => {
      const n = typeof c === 'string' ? c : c.name;
      if (names.has(n)) problems.push(`fields.${i}.choices.${j}: "${n}" is listed twice`);
      names.add(n);
    });
  });
  const principals = new Set<string>();
  d.permissions?.forEach((p, i) => {
    const key = (p.email ?? p.audience ?? '').toLowerCase();
    if (principals.has(key)) problems.push(`permissions.${i}: ${key} is listed twice`);
    principals.add(key);
  });
  if (problems.length) throw new ValidationError(source, `does not describe a label:\n  ${problems.join('\n  ')}`);
  return {
    ...(d.id ? { id: d.id.replace(/^labels\//, '') } : {}),
    title: d.title,
    ...(d.description !== undefined ? { description: d.description } : {}),
    ...(d.labelType ? { labelType: d.labelType } : {}),
    fields: (d.fields ?? []).map((f): DesiredField => {
      const { choices, ...rest } = f;
      return { ...rest, ...(choices ? { choices: choices.map((c) => (typeof c === 'string' ? { name: c } : c)) } : {}) };
    }),
    ...(d.permissions ? { permissions: d.permissions.map((p) => (p.email ? { email: p.email.toLowerCase(), role: p.role } : { audience: p.audience, role: p.role })) } : {}),
  };
}
