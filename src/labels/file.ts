import { ValidationError } from '../core/errors.js';
import { itemPath } from '../core/problems.js';
import { keyName } from '../core/syntax-error.js';
import { parseJsonOrYaml, TextProblem } from '../core/apply-text.js';
import {
  APPS,
  COPY_MODES,
  DATE_FORMATS,
  FIELD_TYPES,
  ID_PATTERNS,
  LABEL_TYPES,
  LANGUAGE_CODE,
  ROLES,
  type App,
  type CopyMode,
  type DateFormat,
  type FieldType,
  type LabelType,
  type Role,
} from './schema.js';

/**
 * The desired state of a label, as written in an apply file (YAML or JSON). A file holds one label
 * (a mapping) or several (a list of them); `labels export` prints exactly this format:
 *
 *   id: 0a1b2c…            # optional: the label to manage (else matched by title, or created)
 *   title: Sensitivity
 *   renamed_from: Secrecy  # optional: the label's old title(s), so a retitled label is found
 *   description: How secret a document is
 *   labelType: SHARED      # SHARED | ADMIN
 *   languageCode: en       # optional: sent with every request (BCP-47)
 *   copyMode: DO_NOT_COPY  # DO_NOT_COPY | ALWAYS_COPY | COPY_APPLIABLE
 *   enabledApps: [DRIVE]   # DRIVE, GMAIL
 *   disabled: false        # true, or {hideInSearch: true, showInApply: false}
 *   fields:
 *     - name: Level          # the field's display name
 *       renamed_from: Grade  # optional: its old name(s): the field keeps its id
 *       type: selection      # text | integer | date | selection | user
 *       required: true
 *       choices: [Low, {name: High, description: Need-to-know, renamed_from: Top}]
 *     - {name: Review date, type: date, dateFormat: SHORT_DATE}
 *     - {name: Reviewers, type: user, list: 5}
 *   permissions:             # optional: when given, exactly these (others are removed)
 *     - {email: bob@example.com, role: READER}
 *     - {audience: audiences/default, role: APPLIER}
 *
 * Keys left out are left as they are (copy mode, apps, disabled state, permissions); a description left
 * out is cleared. The output of `labels get --json` and `labels list --json` is accepted as it is.
 */
/*
 * The file is checked by the small typed checker below rather than by zod: `labels apply` has a
 * start-up budget (3x \`node -e 0\` CPU, see scripts/bench/labels.bench.mjs) and loading zod's bundled
 * chunk alone costs about 25 ms of it. Each problem is one line `path: what is wrong`, one per key.
 */
type Issues = string[];
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'a mapping' : typeof v);
/** The shared path style of apply problems (src/core/problems.ts): `fields[0].choices[1].name`. */
const at = (path: string, key: string | number) => itemPath(path, key);
const where = (path: string) => path || '(top level)';

/** A mapping with only `keys`; reports unknown keys. */
function mapping(v: unknown, path: string, keys: readonly string[], issues: Issues): Obj | undefined {
  if (!isObj(v)) {
    issues.push(`${where(path)}: expected a mapping, got ${kind(v)}`);
    return undefined;
  }
  for (const k of Object.keys(v)) if (!keys.includes(k)) issues.push(`${where(path)}: unknown key ${keyName(k)} (known: ${keys.join(', ')})`);
  return v;
}

function text(
  o: Obj,
  key: string,
  path: string,
  issues: Issues,
  opts: { required?: boolean; nonEmpty?: boolean; pattern?: RegExp; message?: string } = {},
): string | undefined {
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

function oneOf<T extends string>(
  o: Obj,
  key: string,
  path: string,
  allowed: readonly T[],
  issues: Issues,
  { required = false }: { required?: boolean } = {},
): T | undefined {
  const v = o[key];
  if (v === undefined) {
    if (required) issues.push(`${at(path, key)}: required (one of ${allowed.join(', ')})`);
    return undefined;
  }
  if (typeof v === 'string' && (allowed as readonly string[]).includes(v)) return v as T;
  issues.push(`${at(path, key)}: ${typeof v === 'string' ? JSON.stringify(v) : kind(v)} is not one of ${allowed.join(', ')}`);
  return undefined;
}

function list(o: Obj, key: string, path: string, issues: Issues): unknown[] | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (!Array.isArray(v)) {
    issues.push(`${at(path, key)}: expected a list, got ${kind(v)}`);
    return undefined;
  }
  return v as unknown[];
}

function flag(o: Obj, key: string, path: string, issues: Issues): boolean | undefined {
  const v = o[key];
  if (v === undefined || typeof v === 'boolean') return v;
  issues.push(`${at(path, key)}: expected true or false, got ${kind(v)}`);
  return undefined;
}

/** `renamed_from: OLD` or a list of old names. */
function oldNames(o: Obj, path: string, issues: Issues): string[] | undefined {
  const v = o.renamed_from;
  if (v === undefined) return undefined;
  const names = typeof v === 'string' ? [v] : Array.isArray(v) && v.every((x) => typeof x === 'string') ? v : undefined;
  if (!names || names.some((n) => !n)) {
    issues.push(`${at(path, 'renamed_from')}: expected an old name or a list of old names, got ${names ? 'an empty name' : kind(v)}`);
    return undefined;
  }
  return names;
}

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
const FIELD_KEYS = ['id', 'name', 'renamed_from', 'type', 'required', 'list', 'dateFormat', 'choices'] as const;
const CHOICE_KEYS = ['id', 'name', 'renamed_from', 'description'] as const;
const PERMISSION_KEYS = ['email', 'audience', 'role'] as const;
const LABEL_KEYS = [
  'id',
  'title',
  'renamed_from',
  'description',
  'labelType',
  'languageCode',
  'copyMode',
  'enabledApps',
  'disabled',
  'fields',
  'permissions',
] as const;

function checkChoice(v: unknown, path: string, issues: Issues): DesiredChoice | undefined {
  if (typeof v === 'string') {
    if (v) return { name: v };
    issues.push(`${path}: must not be empty`);
    return undefined;
  }
  if (!isObj(v)) {
    issues.push(`${path}: must be a choice name, or {name, description?, id?, renamed_from?}`);
    return undefined;
  }
  const o = mapping(v, path, CHOICE_KEYS, issues)!;
  const id = text(o, 'id', path, issues, { pattern: ID_PATTERNS.choice, message: 'must match [A-Za-z0-9_]+' });
  const name = text(o, 'name', path, issues, { required: true, nonEmpty: true });
  const renamedFrom = oldNames(o, path, issues);
  const description = text(o, 'description', path, issues);
  if (name === undefined) return undefined;
  return { ...(id !== undefined ? { id } : {}), name, ...(renamedFrom ? { renamedFrom } : {}), ...(description !== undefined ? { description } : {}) };
}

function checkField(v: unknown, path: string, issues: Issues): DesiredField | undefined {
  const o = mapping(v, path, FIELD_KEYS, issues);
  if (!o) return undefined;
  const id = text(o, 'id', path, issues, { pattern: ID_PATTERNS.field, message: 'must match [A-Za-z0-9]+' });
  const name = text(o, 'name', path, issues, { required: true, nonEmpty: true });
  const renamedFrom = oldNames(o, path, issues);
  const type = oneOf(o, 'type', path, FIELD_TYPES, issues, { required: true });
  const out: DesiredField = { ...(id !== undefined ? { id } : {}), name: name ?? '', ...(renamedFrom ? { renamedFrom } : {}), type: type ?? 'text' };
  const required = flag(o, 'required', path, issues);
  if (required !== undefined) out.required = required;
  if (o.list !== undefined) {
    if (type && type !== 'selection' && type !== 'user') issues.push(`${at(path, 'list')}: only selection and user fields can hold a list`);
    else if (typeof o.list === 'boolean' || (Number.isInteger(o.list) && (o.list as number) > 0)) out.list = o.list as boolean | number;
    else issues.push(`${at(path, 'list')}: must be true, false or a whole number of entries (1 or more)`);
  }
  if (o.dateFormat !== undefined && type && type !== 'date') issues.push(`${at(path, 'dateFormat')}: only a date field has a dateFormat`);
  else {
    const dateFormat = oneOf(o, 'dateFormat', path, DATE_FORMATS, issues);
    if (dateFormat) out.dateFormat = dateFormat;
  }
  const choices = list(o, 'choices', path, issues);
  if (choices) {
    if (type && type !== 'selection') issues.push(`${at(path, 'choices')}: only a selection field has choices (this one is ${type})`);
    else out.choices = choices.map((c, j) => checkChoice(c, at(at(path, 'choices'), j), issues)).filter((c): c is DesiredChoice => Boolean(c));
  }
  return name !== undefined && type !== undefined ? out : undefined;
}

function checkPermission(v: unknown, path: string, issues: Issues): DesiredPermission | undefined {
  const o = mapping(v, path, PERMISSION_KEYS, issues);
  if (!o) return undefined;
  const email = text(o, 'email', path, issues, { pattern: EMAIL, message: 'is not an email address' });
  const audience = text(o, 'audience', path, issues, { pattern: /^audiences\/[A-Za-z0-9_-]+$/, message: 'must look like audiences/default' });
  const role = oneOf(o, 'role', path, ROLES, issues, { required: true });
  if ((o.email === undefined) === (o.audience === undefined)) issues.push(`${path}: give exactly one of email or audience`);
  if (!role || (email === undefined && audience === undefined)) return undefined;
  return email !== undefined ? { email: email.toLowerCase(), role } : { audience, role };
}

function checkDisabled(o: Obj, path: string, issues: Issues): DesiredLabel['disabled'] {
  const v = o.disabled;
  if (v === undefined || v === false) return v;
  if (v === true) return { hideInSearch: false, showInApply: false };
  const p = isObj(v) ? mapping(v, at(path, 'disabled'), ['hideInSearch', 'showInApply'], issues) : undefined;
  if (!p) {
    if (!isObj(v)) issues.push(`${at(path, 'disabled')}: expected true, false or {hideInSearch, showInApply}, got ${kind(v)}`);
    return undefined;
  }
  return {
    hideInSearch: flag(p, 'hideInSearch', at(path, 'disabled'), issues) ?? false,
    showInApply: flag(p, 'showInApply', at(path, 'disabled'), issues) ?? false,
  };
}

function checkApps(o: Obj, path: string, issues: Issues): App[] | undefined {
  const apps = list(o, 'enabledApps', path, issues);
  if (!apps) return undefined;
  const out: App[] = [];
  apps.forEach((a, i) => {
    if (typeof a === 'string' && (APPS as readonly string[]).includes(a)) {
      if (out.includes(a as App)) issues.push(`${at(at(path, 'enabledApps'), i)}: ${a} is listed twice`);
      else out.push(a as App);
    } else issues.push(`${at(at(path, 'enabledApps'), i)}: ${typeof a === 'string' ? JSON.stringify(a) : kind(a)} is not one of ${APPS.join(', ')}`);
  });
  return out;
}

/** Names must be unique, and an old name (renamed_from) must point at one entry only. */
function checkNames(entries: Array<{ name: string; renamedFrom?: string[] }>, path: (i: number) => string, what: string, issues: Issues): void {
  const byName = new Map<string, number>();
  entries.forEach((e, i) => {
    const prior = byName.get(e.name);
    if (prior !== undefined) issues.push(`${at(path(i), 'name')}: "${e.name}" is used by two ${what}s (${path(prior)} too)`);
    else byName.set(e.name, i);
  });
  const claimed = new Map<string, number>();
  entries.forEach((e, i) => {
    for (const old of e.renamedFrom ?? []) {
      const named = byName.get(old);
      if (named !== undefined)
        issues.push(
          `${at(path(i), 'renamed_from')}: "${old}" is the name of ${named === i ? 'this very' : `another ${what} (${path(named)})`}: drop it from renamed_from`,
        );
      else if (claimed.has(old)) issues.push(`${at(path(i), 'renamed_from')}: "${old}" is also claimed by ${path(claimed.get(old)!)}`);
      else claimed.set(old, i);
    }
  });
}

/** Checks one label of the file; `path` is '' for a one-label file and `[i]` in a list. */
function checkLabel(raw: unknown, path: string, issues: Issues): DesiredLabel | undefined {
  const before = issues.length;
  const o = mapping(raw, path, LABEL_KEYS, issues);
  if (!o) return undefined;
  const id = text(o, 'id', path, issues, { pattern: /^(?:labels\/)?[A-Za-z0-9_-]+$/, message: 'must be a label id or labels/ID' });
  const title = text(o, 'title', path, issues, { required: true, nonEmpty: true });
  const renamedFrom = oldNames(o, path, issues);
  const description = text(o, 'description', path, issues);
  const labelType = oneOf(o, 'labelType', path, LABEL_TYPES, issues);
  const languageCode = text(o, 'languageCode', path, issues, { pattern: LANGUAGE_CODE, message: 'must be a BCP-47 language code such as en or en-GB' });
  const copyMode = oneOf(o, 'copyMode', path, COPY_MODES, issues);
  const enabledApps = checkApps(o, path, issues);
  const disabled = checkDisabled(o, path, issues);
  const fields = (list(o, 'fields', path, issues) ?? []).map((f, i) => checkField(f, at(at(path, 'fields'), i), issues));
  const perms = list(o, 'permissions', path, issues)?.map((p, i) => checkPermission(p, at(at(path, 'permissions'), i), issues));
  if (issues.length > before) return undefined;
  const okFields = fields as DesiredField[];
  checkNames(okFields, (i) => at(at(path, 'fields'), i), 'field', issues);
  okFields.forEach((f, i) => f.choices && checkNames(f.choices, (j) => at(at(at(at(path, 'fields'), i), 'choices'), j), 'choice', issues));
  const principals = new Map<string, number>();
  perms?.forEach((p, i) => {
    const key = (p!.email ?? p!.audience ?? '').toLowerCase();
    if (principals.has(key)) issues.push(`${at(at(path, 'permissions'), i)}: ${key} is listed twice`);
    principals.set(key, i);
  });
  if (issues.length > before) return undefined;
  return {
    ...(id !== undefined ? { id: id.replace(/^labels\//, '') } : {}),
    title: title!,
    ...(renamedFrom ? { renamedFrom } : {}),
    ...(description !== undefined ? { description } : {}),
    ...(labelType ? { labelType } : {}),
    ...(languageCode ? { languageCode } : {}),
    ...(copyMode ? { copyMode } : {}),
    ...(enabledApps ? { enabledApps } : {}),
    ...(disabled !== undefined ? { disabled } : {}),
    fields: okFields,
    ...(perms ? { permissions: perms as DesiredPermission[] } : {}),
  };
}

export interface DesiredChoice {
  id?: string;
  name: string;
  renamedFrom?: string[];
  description?: string;
}
export interface DesiredField {
  id?: string;
  name: string;
  renamedFrom?: string[];
  type: FieldType;
  required?: boolean;
  list?: boolean | number;
  dateFormat?: DateFormat;
  choices?: DesiredChoice[];
}
export interface DesiredPermission {
  email?: string;
  audience?: string;
  role: Role;
}
export interface DisabledState {
  hideInSearch: boolean;
  showInApply: boolean;
}
export interface DesiredLabel {
  id?: string;
  /** The id came from the service's own output (`get --json`): a label elsewhere without it is matched by title. */
  idFromService?: boolean;
  title: string;
  renamedFrom?: string[];
  description?: string;
  labelType?: LabelType;
  languageCode?: string;
  copyMode?: CopyMode;
  enabledApps?: App[];
  /** false: enabled; a policy: disabled with it; undefined: left as it is. */
  disabled?: false | DisabledState;
  fields: DesiredField[];
  permissions?: DesiredPermission[];
}

/** What an apply file holds: its labels, whether it was a list, and the server-owned keys it ignored. */
export interface LabelsFile {
  labels: DesiredLabel[];
  list: boolean;
  ignored: string[];
}

/** A Label resource (or a list or page of them) rather than a file's label: the same test as from-service.ts's isServiceLabel. */
function looksLikeService(raw: unknown): boolean {
  const one = (v: unknown) => isObj(v) && (isObj(v.properties) || (typeof v.name === 'string' && v.name.startsWith('labels/')) || v.revisionId !== undefined);
  if (Array.isArray(raw)) return raw.some(one);
  return one(raw) || (isObj(raw) && Array.isArray(raw.labels));
}

/**
 * The largest label file `labels apply` reads, JSON or YAML: each label becomes a checked label, a plan
 * and its text, about 60 times the file's size in memory (measured: 465 KB of JSON, 84 MB peak against
 * a baseline of 56 MB), so 512 KiB keeps an apply under DESIGN's 100 MB budget (thousands of labels).
 */
export const LABELS_FILE_MAX_BYTES = 512 * 1024;

async function parseText(text: string, source: string): Promise<unknown> {
  // JSON when it looks like JSON, else YAML up to 128 KiB (core/apply-text.ts, core/yaml.ts), at most LABELS_FILE_MAX_BYTES; errors say the line and column
  try {
    return await parseJsonOrYaml(text, { jsonMaxBytes: LABELS_FILE_MAX_BYTES });
  } catch (err) {
    if (!(err instanceof TextProblem)) throw err;
    throw new ValidationError(source, err.message, err.hint ?? 'fix the file at that line and column; nothing was sent');
  }
}

/**
 * Parses and validates an apply file of one label or a list of labels (also the output of `labels get
 * --json` / `labels list --json`); every problem names its path in the file.
 */
export async function parseLabelsFile(text: string, source: string): Promise<LabelsFile> {
  const raw = await parseText(text, source);
  if (raw === undefined || raw === null) throw new ValidationError(source, 'is empty', 'write at least `title: <the label title>`');
  // the service's own output (get/list --json) is turned into the file format by a module loaded only for it
  const service = looksLikeService(raw)
    ? (await import('./from-service.js')).fromServiceShape(raw)
    : { value: raw, ignored: [], idFromService: [] as boolean[] };
  const items = Array.isArray(service.value) ? service.value : [service.value];
  const isList = Array.isArray(service.value);
  if (isList && items.length === 0) throw new ValidationError(source, 'is an empty list', 'list at least one label, each with a title');
  const issues: Issues = [];
  const labels = items.map((item, i) => checkLabel(item, isList ? `[${i}]` : '', issues));
  const titles = new Map<string, number>();
  labels.forEach((l, i) => {
    if (!l) return;
    if (titles.has(l.title)) issues.push(`[${i}].title: "${l.title}" is also the title of [${titles.get(l.title)}]`);
    titles.set(l.title, i);
  });
  if (issues.length) {
    throw new ValidationError(
      source,
      `does not describe ${isList ? 'labels' : 'a label'}:\n  ${issues.join('\n  ')}`,
      'see `opsctl labels apply --help` or docs/scripting.md ("Label service") for the file format',
    );
  }
  const out = labels as DesiredLabel[];
  out.forEach((label, i) => {
    if (service.idFromService[i] && label.id) label.idFromService = true;
  });
  return { labels: out, list: isList, ignored: service.ignored };
}

/** Parses an apply file that holds one label. */
export async function parseLabelFile(text: string, source: string): Promise<DesiredLabel> {
  const file = await parseLabelsFile(text, source);
  const [label] = file.labels;
  if (file.list || !label) throw new ValidationError(source, `holds ${file.labels.length} label${file.labels.length === 1 ? '' : 's'}; one was expected`);
  return label;
}
