import { ValidationError } from '../core/errors.js';
import { itemPath, syntaxErrorText } from '../core/problems.js';
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
/*
 * The file is checked by the small typed checker below rather than by zod: `labels apply` has a
 * start-up budget (3x \`node -e 0\` CPU, see scripts/bench/labels.bench.mjs) and loading zod's bundled
 * chunk alone costs about 25 ms of it. Each problem is one line `path: what is wrong`.
 */
type Issues = string[];
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'a mapping' : typeof v);
/** The shared path style of apply problems (src/core/problems.ts): `fields[0].choices[1].name`. */
const at = (path: string, key: string | number) => itemPath(path, key);

/** A mapping with only `keys`; reports unknown keys. */
function mapping(v: unknown, path: string, keys: readonly string[], issues: Issues): Obj | undefined {
  if (!isObj(v)) {
    issues.push(`${path || '(top level)'}: expected a mapping, got ${kind(v)}`);
    return undefined;
  }
  for (const k of Object.keys(v)) if (!keys.includes(k)) issues.push(`${path || '(top level)'}: unknown key "${k}" (known: ${keys.join(', ')})`);
  return v;
}

function text(o: Obj, key: string, path: string, issues: Issues, opts: { required?: boolean; nonEmpty?: boolean; pattern?: RegExp; message?: string } = {}): string | undefined {
  const v = o[key];
  if (v === undefined) {
    if (opts.required) issues.push(`${at(path, key)}: required`);
    return undefined;
  }
  if (typeof v !== 'string') issues.push(`${at(path, key)}: expected text, got ${kind(v)}`);
  else if (opts.nonEmpty && !v) issues.push(`${at(path, key)}: must not be empty`);
  else if (opts.pattern && !opts.pattern.test(v)) issues.push(`${at(path, key)}: ${opts.message}`);
  else return v;
  return undefined;
}

function oneOf<T extends string>(o: Obj, key: string, path: string, allowed: readonly T[], issues: Issues, required = false): T | undefined {
  const v = o[key];
  if (v === undefined) {
    if (required) issues.push(`${at(path, key)}: required (one of ${allowed.join(', ')})`);
    return undefined;
  }
  if (typeof v === 'string' && (allowed as readonly string[]).includes(v)) return v as T;
  issues.push(`${at(path, key)}: ${JSON.stringify(v)} is not one of ${allowed.join(', ')}`);
  return undefined;
}

function list(o: Obj, key: string, path: string, issues: Issues): unknown[] | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (!Array.isArray(v)) {
    issues.push(`${at(path, key)}: expected a list, got ${kind(v)}`);
    return undefined;
  }
  return v;
}

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
const FIELD_KEYS = ['id', 'name', 'type', 'required', 'list', 'dateFormat', 'choices'] as const;
const CHOICE_KEYS = ['id', 'name', 'description'] as const;
const PERMISSION_KEYS = ['email', 'audience', 'role'] as const;
const LABEL_KEYS = ['id', 'title', 'description', 'labelType', 'fields', 'permissions'] as const;

function checkChoice(v: unknown, path: string, issues: Issues): DesiredChoice | undefined {
  if (typeof v === 'string') {
    if (v) return { name: v };
    issues.push(`${path}: must not be empty`);
    return undefined;
  }
  if (!isObj(v)) {
    issues.push(`${path}: must be a choice name, or {name, description?, id?}`);
    return undefined;
  }
  const o = mapping(v, path, CHOICE_KEYS, issues)!;
  const id = text(o, 'id', path, issues, { pattern: /^[A-Za-z0-9_]+$/, message: 'must match [A-Za-z0-9_]+' });
  const name = text(o, 'name', path, issues, { required: true, nonEmpty: true });
  const description = text(o, 'description', path, issues);
  return name === undefined ? undefined : { ...(id !== undefined ? { id } : {}), name, ...(description !== undefined ? { description } : {}) };
}

function checkField(v: unknown, path: string, issues: Issues): DesiredField | undefined {
  const o = mapping(v, path, FIELD_KEYS, issues);
  if (!o) return undefined;
  const id = text(o, 'id', path, issues, { pattern: /^[A-Za-z0-9]+$/, message: 'must match [A-Za-z0-9]+' });
  const name = text(o, 'name', path, issues, { required: true, nonEmpty: true });
  const type = oneOf(o, 'type', path, FIELD_TYPES, issues, true);
  const out: DesiredField = { ...(id !== undefined ? { id } : {}), name: name ?? '', type: type ?? 'text' };
  if (o.required !== undefined) {
    if (typeof o.required === 'boolean') out.required = o.required;
    else issues.push(`${at(path, 'required')}: expected true or false, got ${kind(o.required)}`);
  }
  if (o.list !== undefined) {
    if (typeof o.list === 'boolean' || (Number.isInteger(o.list) && (o.list as number) > 0)) out.list = o.list as boolean | number;
    else issues.push(`${at(path, 'list')}: must be true, false or a whole number of entries (1 or more)`);
    if (type && type !== 'selection' && type !== 'user') issues.push(`${at(path, 'list')}: only selection and user fields can hold a list`);
  }
  const dateFormat = oneOf(o, 'dateFormat', path, ['LONG_DATE', 'SHORT_DATE'] as const, issues);
  if (dateFormat) out.dateFormat = dateFormat;
  if (o.dateFormat !== undefined && type && type !== 'date') issues.push(`${at(path, 'dateFormat')}: only a date field has a dateFormat`);
  const choices = list(o, 'choices', path, issues);
  if (choices) {
    if (type && type !== 'selection') issues.push(`${at(path, 'choices')}: only a selection field has choices (this one is ${type})`);
    out.choices = choices.map((c, j) => checkChoice(c, at(at(path, 'choices'), j), issues)).filter((c): c is DesiredChoice => Boolean(c));
  }
  return name !== undefined && type !== undefined ? out : undefined;
}

type DesiredPermission = NonNullable<DesiredLabel['permissions']>[number];

function checkPermission(v: unknown, path: string, issues: Issues): DesiredPermission | undefined {
  const o = mapping(v, path, PERMISSION_KEYS, issues);
  if (!o) return undefined;
  const email = text(o, 'email', path, issues, { pattern: EMAIL, message: 'is not an email address' });
  const audience = text(o, 'audience', path, issues, { pattern: /^audiences\/[A-Za-z0-9_-]+$/, message: 'must look like audiences/default' });
  const role = oneOf(o, 'role', path, ROLES, issues, true);
  if ((o.email === undefined) === (o.audience === undefined)) issues.push(`${path}: give exactly one of email or audience`);
  if (!role || (email === undefined && audience === undefined)) return undefined;
  return email !== undefined ? { email, role } : { audience, role };
}

/** Checks the parsed file; returns the label and the problems, each as `path: message`. */
function checkLabel(raw: unknown): { label?: DesiredLabel; issues: Issues } {
  const issues: Issues = [];
  const o = mapping(raw, '', LABEL_KEYS, issues);
  if (!o) return { issues };
  const id = text(o, 'id', '', issues, { pattern: /^(?:labels\/)?[A-Za-z0-9_-]+$/, message: 'must be a label id or labels/ID' });
  const title = text(o, 'title', '', issues, { required: true, nonEmpty: true });
  const description = text(o, 'description', '', issues);
  const labelType = oneOf(o, 'labelType', '', ['SHARED', 'ADMIN'] as const, issues);
  const fields = (list(o, 'fields', '', issues) ?? []).map((f, i) => checkField(f, `fields[${i}]`, issues));
  const perms = list(o, 'permissions', '', issues)?.map((p, i) => checkPermission(p, `permissions[${i}]`, issues));
  if (issues.length) return { issues };
  return {
    issues,
    label: {
      ...(id !== undefined ? { id } : {}),
      title: title!,
      ...(description !== undefined ? { description } : {}),
      ...(labelType ? { labelType } : {}),
      fields: fields as DesiredField[],
      ...(perms ? { permissions: perms as DesiredPermission[] } : {}),
    },
  };
}

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
  let parsed = false;
  if (/^\s*[{[]/.test(text)) {
    try {
      raw = JSON.parse(text);
      parsed = true;
    } catch {
      // fall through to YAML (a superset of JSON), whose errors say the line and column
    }
  }
  if (!parsed) {
    try {
      // yaml is CommonJS when bundled: its exports may sit on `default`
      const mod = (await import('yaml')) as typeof import('yaml') & { default?: typeof import('yaml') };
      raw = (mod.parse ?? mod.default!.parse)(text);
    } catch (err) {
      throw new ValidationError(source, `is not valid YAML or JSON: ${syntaxErrorText(err)}`, 'fix the file at that line and column; nothing was sent');
    }
  }
  if (raw === undefined || raw === null) throw new ValidationError(source, 'is empty', 'write at least `title: <the label title>`');
  const result = checkLabel(raw);
  if (!result.label) {
    throw new ValidationError(source, `does not describe a label:\n  ${result.issues.join('\n  ')}`, 'see `opsctl labels apply --help` or the README section "Label service" for the file format');
  }
  const d = result.label;
  const problems: string[] = [];
  const seen = new Set<string>();
  d.fields?.forEach((f, i) => {
    if (seen.has(f.name)) problems.push(`fields[${i}].name: "${f.name}" is used by two fields`);
    seen.add(f.name);
    const names = new Set<string>();
    f.choices?.forEach((c, j) => {
      const n = c.name;
      if (names.has(n)) problems.push(`fields[${i}].choices[${j}]: "${n}" is listed twice`);
      names.add(n);
    });
  });
  const principals = new Set<string>();
  d.permissions?.forEach((p, i) => {
    const key = (p.email ?? p.audience ?? '').toLowerCase();
    if (principals.has(key)) problems.push(`permissions[${i}]: ${key} is listed twice`);
    principals.add(key);
  });
  if (problems.length) throw new ValidationError(source, `does not describe a label:\n  ${problems.join('\n  ')}`);
  return {
    ...(d.id ? { id: d.id.replace(/^labels\//, '') } : {}),
    title: d.title,
    ...(d.description !== undefined ? { description: d.description } : {}),
    ...(d.labelType ? { labelType: d.labelType } : {}),
    fields: d.fields,
    ...(d.permissions ? { permissions: d.permissions.map((p) => (p.email ? { email: p.email.toLowerCase(), role: p.role } : { audience: p.audience, role: p.role })) } : {}),
  };
}
