import {
  invalid,
  iso,
  notFound,
  parseMask,
  precondition,
  type Caller,
  type Content,
  type DisabledPolicy,
  type LabelLimits,
  type StoredChoice,
  type StoredField,
  type StoredLabel,
} from './common.js';
import { newLife, touch } from './model.js';
import { randomBytes } from 'node:crypto';
import {
  DATE_FORMATS,
  DELTA_KINDS,
  ID_PATTERNS,
  PROPERTIES,
  TYPE_OPTION_KEYS,
  type DateFormat,
  type DeltaKind,
  type TypeOptionsKey,
} from '@opsctl/shared/labels/schema.js';

export { DELTA_KINDS, type DeltaKind };

const TYPE_KEYS = TYPE_OPTION_KEYS;
type TypeKey = TypeOptionsKey;

export interface DeltaEnv {
  label: StoredLabel;
  limits: LabelLimits;
  now: number;
  who: Caller;
}

function obj(v: unknown, where: string, required = true): Record<string, unknown> | undefined {
  if (v === undefined || v === null) {
    if (required) throw invalid(`${where} is required`);
    return undefined;
  }
  if (typeof v !== 'object' || Array.isArray(v)) throw invalid(`${where} must be an object`);
  return v as Record<string, unknown>;
}

function str(v: unknown, where: string, opts: { required?: boolean; max?: number; pattern?: RegExp; patternText?: string } = {}): string | undefined {
  if (v === undefined || v === null || v === '') {
    if (opts.required) throw invalid(`${where} is required`);
    return undefined;
  }
  if (typeof v !== 'string') throw invalid(`${where} must be a string`);
  if (opts.max !== undefined && v.length > opts.max) throw invalid(`${where} is ${v.length} characters; the limit is ${opts.max}`);
  if (opts.pattern && !opts.pattern.test(v)) throw invalid(`${where} "${v}" must match ${opts.patternText ?? opts.pattern.source}`);
  return v;
}

function bool(v: unknown, where: string): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw invalid(`${where} must be true or false`);
  return v;
}

function disabledPolicy(v: unknown, where: string): DisabledPolicy {
  const o = obj(v, where, false) ?? {};
  const out: DisabledPolicy = {};
  const h = bool(o.hideInSearch, `${where}.hideInSearch`);
  const s = bool(o.showInApply, `${where}.showInApply`);
  if (h !== undefined) out.hideInSearch = h;
  if (s !== undefined) out.showInApply = s;
  return out;
}

export function parseDisabledPolicy(v: unknown, where: string): DisabledPolicy {
  return disabledPolicy(v, where);
}

function listOptions(v: unknown, where: string, maxEntries: number): { maxEntries?: number } | undefined {
  const o = obj(v, where, false);
  if (!o) return undefined;
  const n = o.maxEntries;
  if (n === undefined) return {};
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > maxEntries) {
    throw invalid(`${where}.maxEntries must be an integer from 1 to ${maxEntries}`);
  }
  return { maxEntries: n };
}

function genId(): string {
  return randomBytes(5).toString('hex').toUpperCase();
}

function color(v: unknown, where: string): Record<string, number> | undefined {
  const o = obj(v, where, false);
  if (!o) return undefined;
  const out: Record<string, number> = {};
  for (const k of ['red', 'green', 'blue', 'alpha']) {
    const n = o[k];
    if (n === undefined) continue;
    if (typeof n !== 'number' || n < 0 || n > 1) throw invalid(`${where}.${k} must be a number from 0 to 1`);
    out[k] = n;
  }
  return out;
}

function choiceProperties(v: unknown, where: string, env: DeltaEnv, partial: boolean): StoredChoice['properties'] & { insertBeforeChoice?: string } {
  const o = obj(v, where)!;
  const lim = env.limits.fieldLimits;
  const out: StoredChoice['properties'] & { insertBeforeChoice?: string } = {
    displayName: str(o.displayName, `${where}.displayName`, { required: !partial, max: lim.selectionLimits.maxDisplayNameLength }) as string,
  };
  const d = str(o.description, `${where}.description`, { max: lim.maxDescriptionLength });
  if (d !== undefined) out.description = d;
  const badge = obj(o.badgeConfig, `${where}.badgeConfig`, false);
  if (badge) {
    const c = color(badge.color, `${where}.badgeConfig.color`);
    const p = int64Text(badge.priorityOverride, `${where}.badgeConfig.priorityOverride`);
    out.badgeConfig = { ...(c ? { color: c } : {}), ...(p !== undefined ? { priorityOverride: p } : {}) };
  }
  const ib = str(o.insertBeforeChoice, `${where}.insertBeforeChoice`);
  if (ib !== undefined) out.insertBeforeChoice = ib;
  return out;
}

/** An int64 as JSON carries it: a string of digits, or a number. */
function int64Text(v: unknown, where: string): string | undefined {
  if (v === undefined) return undefined;
  const text = typeof v === 'string' || typeof v === 'number' ? String(v) : '';
  if (!/^-?\d{1,18}$/.test(text)) throw invalid(`${where} must be an int64 (as a string)`);
  return text;
}

function isDateFormat(v: unknown): v is DateFormat {
  return typeof v === 'string' && (DATE_FORMATS as readonly string[]).includes(v);
}

function place<T extends { id: string }>(list: T[], item: T, before: string | undefined, where: string): void {
  const existing = list.indexOf(item);
  if (existing >= 0) list.splice(existing, 1);
  if (!before) {
    list.push(item);
    return;
  }
  const at = list.findIndex((x) => x.id === before);
  if (at < 0) {
    if (existing >= 0) list.splice(existing, 0, item);
    throw invalid(`${where}: no item with id "${before}" to insert before`);
  }
  list.splice(at, 0, item);
}

function newChoice(v: unknown, where: string, field: StoredField, env: DeltaEnv): StoredChoice {
  const o = obj(v, where)!;
  const lim = env.limits.fieldLimits.selectionLimits;
  const id = str(o.id, `${where}.id`, { max: lim.maxIdLength, pattern: ID_PATTERNS.choice, patternText: '([a-zA-Z0-9_])+' }) ?? genId();
  const choices = field.selectionOptions!.choices;
  if (choices.some((c) => c.id === id)) throw invalid(`${where}.id "${id}" is already used by a choice of field ${field.id}`);
  const { insertBeforeChoice, ...properties } = choiceProperties(o.properties, `${where}.properties`, env, false);
  if (choices.some((c) => c.properties.displayName === properties.displayName)) {
    throw invalid(`${where}.properties.displayName "${properties.displayName}" is already used by a choice of field ${field.id}`);
  }
  const choice: StoredChoice = { id, properties, life: newLife(env.now, env.who) };
  place(choices, choice, insertBeforeChoice, `${where}.properties.insertBeforeChoice`);
  return choice;
}

/** Validates one type's options and returns the stored form (output-only values filled from the limits). */
function typeOptions(key: TypeKey, v: unknown, where: string, env: DeltaEnv, field: StoredField, keepChoices: boolean): void {
  const o = obj(v, where)!;
  const lim = env.limits.fieldLimits;
  for (const k of TYPE_KEYS) delete field[k];
  switch (key) {
    case 'textOptions':
      field.textOptions = { minLength: lim.textLimits.minLength, maxLength: lim.textLimits.maxLength };
      return;
    case 'integerOptions':
      field.integerOptions = { minValue: lim.integerLimits.minValue, maxValue: lim.integerLimits.maxValue };
      return;
    case 'dateOptions': {
      const fmt = o.dateFormatType;
      if (fmt !== undefined && !isDateFormat(fmt)) throw invalid(`${where}.dateFormatType must be one of ${DATE_FORMATS.join(', ')}`);
      const t = fmt ?? 'LONG_DATE';
      field.dateOptions = {
        dateFormatType: t,
        dateFormat: t === 'SHORT_DATE' ? 'M/d/yy' : 'MMMM d, y',
        minValue: lim.dateLimits.minValue,
        maxValue: lim.dateLimits.maxValue,
      };
      return;
    }
    case 'userOptions': {
      const lo = listOptions(o.listOptions, `${where}.listOptions`, lim.userLimits.listLimits.maxEntries);
      field.userOptions = lo ? { listOptions: lo } : {};
      return;
    }
    case 'selectionOptions': {
      const lo = listOptions(o.listOptions, `${where}.listOptions`, lim.selectionLimits.listLimits.maxEntries);
      const prior = keepChoices ? (field.selectionOptions?.choices ?? []) : [];
      field.selectionOptions = { ...(lo ? { listOptions: lo } : {}), choices: prior };
      if (!keepChoices && o.choices !== undefined) {
        if (!Array.isArray(o.choices)) throw invalid(`${where}.choices must be a list`);
        o.choices.forEach((c: unknown, i: number) => newChoice(c, `${where}.choices[${i}]`, field, env));
      }
      return;
    }
  }
}

/** The one item of `list`; undefined when it has none or several. */
function only<T>(list: readonly T[]): T | undefined {
  return list.length === 1 ? list[0] : undefined;
}

function oneType(o: Record<string, unknown>, where: string): TypeKey {
  const given = TYPE_KEYS.filter((k) => o[k] !== undefined && o[k] !== null);
  const type = only(given);
  if (type === undefined) {
    throw invalid(`${where} needs exactly one of ${TYPE_KEYS.join(', ')} (got ${given.length ? given.join(', ') : 'none'})`);
  }
  return type;
}

/** Builds a new field (createField, or the fields of a label create) and adds it to `content`. */
export function createField(content: Content, v: unknown, where: string, env: DeltaEnv): StoredField {
  const o = obj(v, where)!;
  const lim = env.limits.fieldLimits;
  const id = str(o.id, `${where}.id`, { max: lim.maxIdLength, pattern: ID_PATTERNS.field, patternText: '([a-zA-Z0-9])+' }) ?? genId();
  if (content.fields.some((f) => f.id === id)) throw invalid(`${where}.id "${id}" is already used by another field`);
  const p = obj(o.properties, `${where}.properties`)!;
  const displayName = str(p.displayName, `${where}.properties.displayName`, { required: true, max: lim.maxDisplayNameLength }) as string;
  if (content.fields.some((f) => f.properties.displayName === displayName))
    throw invalid(`${where}.properties.displayName "${displayName}" is already used by another field`);
  const required = bool(p.required, `${where}.properties.required`);
  const before = str(p.insertBeforeField, `${where}.properties.insertBeforeField`);
  const field: StoredField = { id, properties: { displayName, ...(required !== undefined ? { required } : {}) }, life: newLife(env.now, env.who) };
  const type = oneType(o, where);
  typeOptions(type, o[type], `${where}.${type}`, env, field, false);
  place(content.fields, field, before, `${where}.properties.insertBeforeField`);
  return field;
}

function fieldById(content: Content, id: unknown, where: string): StoredField {
  const key = str(id, where, { required: true }) as string;
  const f = content.fields.find((x) => x.id === key);
  if (!f) throw notFound(`${where}: the label has no field "${key}"`);
  return f;
}

function selectionField(content: Content, id: unknown, where: string): StoredField {
  const f = fieldById(content, id, where);
  if (!f.selectionOptions) throw invalid(`${where}: field "${f.id}" is not a selection field`);
  return f;
}

function choiceById(field: StoredField, id: unknown, where: string): StoredChoice {
  const key = str(id, where, { required: true }) as string;
  const c = field.selectionOptions!.choices.find((x) => x.id === key);
  if (!c) throw notFound(`${where}: field "${field.id}" has no choice "${key}"`);
  return c;
}

function assertFieldUnlocked(env: DeltaEnv, fieldId: string, choiceId: string | undefined, where: string): void {
  const locked = env.label.locks.some((l) => l.state === 'ACTIVE' && l.fieldId === fieldId && (!l.choiceId || l.choiceId === choiceId));
  if (locked) throw precondition(`${where}: ${choiceId ? `choice ${choiceId} of ` : ''}field ${fieldId} is locked`);
}

function disable(life: StoredField['life'], policy: DisabledPolicy, env: DeltaEnv, what: string): void {
  if (life.state === 'DISABLED') throw precondition(`${what} is already disabled`);
  life.state = 'DISABLED';
  life.disabledPolicy = policy;
  life.disableTime = iso(env.now);
  life.disabler = env.who.person;
  touch(life, env.now, env.who);
}

function enable(life: StoredField['life'], env: DeltaEnv, what: string): void {
  if (life.state !== 'DISABLED') throw precondition(`${what} is not disabled`);
  life.state = life.everPublished ? 'PUBLISHED' : 'UNPUBLISHED_DRAFT';
  delete life.disabledPolicy;
  delete life.disableTime;
  delete life.disabler;
  touch(life, env.now, env.who);
}

function assertDeletable(life: StoredField['life'], what: string): void {
  if (life.everPublished && life.state !== 'DISABLED') throw precondition(`${what} is published: disable it before deleting it`);
}

const FIELD_PROPS = PROPERTIES.field;
const CHOICE_PROPS = PROPERTIES.choice;
const LABEL_PROPS = PROPERTIES.label;

/** Applies one request to `content` (a working copy) and returns its response. */
export function applyRequest(content: Content, request: unknown, i: number, env: DeltaEnv): Record<string, unknown> {
  const where = `requests[${i}]`;
  const r = obj(request, where)!;
  const kinds = Object.keys(r).filter((k) => r[k] !== undefined && r[k] !== null);
  const key = only(kinds);
  if (key === undefined || !(DELTA_KINDS as readonly string[]).includes(key)) {
    throw invalid(`${where} must hold exactly one of ${DELTA_KINDS.join(', ')} (got ${kinds.join(', ') || 'none'})`);
  }
  const kind = key as DeltaKind;
  const at = `${where}.${kind}`;
  const q = obj(r[kind], at)!;
  const pos = (list: Array<{ id: string }>, id: string) => list.findIndex((x) => x.id === id) + 1;

  switch (kind) {
    case 'updateLabel': {
      const mask = parseMask(q.updateMask, LABEL_PROPS, at);
      const p = obj(q.properties, `${at}.properties`)!;
      const title = str(p.title, `${at}.properties.title`, { max: env.limits.maxTitleLength });
      const description = str(p.description, `${at}.properties.description`, { max: env.limits.maxDescriptionLength });
      const all = mask === '*';
      const has = (k: string) => all || (mask ? mask.has(k) : p[k] !== undefined);
      if (has('title')) {
        if (!title) throw invalid(`${at}.properties.title is required (a label needs a title)`);
        content.properties.title = title;
      }
      if (has('description')) {
        if (description === undefined) delete content.properties.description;
        else content.properties.description = description;
      }
      touch(content.life, env.now, env.who);
      return { updateLabel: {} };
    }
    case 'createField': {
      const f = createField(content, q.field, `${at}.field`, env);
      return { createField: { id: f.id, priority: pos(content.fields, f.id) } };
    }
    case 'updateField': {
      const f = fieldById(content, q.id, `${at}.id`);
      assertFieldUnlocked(env, f.id, undefined, at);
      const mask = parseMask(q.updateMask, FIELD_PROPS, at);
      const p = obj(q.properties, `${at}.properties`)!;
      const all = mask === '*';
      const has = (k: string) => all || (mask ? mask.has(k) : p[k] !== undefined);
      if (has('displayName')) {
        const name = str(p.displayName, `${at}.properties.displayName`, { required: true, max: env.limits.fieldLimits.maxDisplayNameLength }) as string;
        if (content.fields.some((x) => x !== f && x.properties.displayName === name))
          throw invalid(`${at}.properties.displayName "${name}" is already used by another field`);
        f.properties.displayName = name;
      }
      if (has('required')) {
        const req = bool(p.required, `${at}.properties.required`);
        if (req) f.properties.required = true;
        else delete f.properties.required;
      }
      if (has('insertBeforeField')) {
        const before = str(p.insertBeforeField, `${at}.properties.insertBeforeField`);
        if (before === f.id) throw invalid(`${at}.properties.insertBeforeField cannot be the field itself`);
        place(content.fields, f, before, `${at}.properties.insertBeforeField`);
      }
      touch(f.life, env.now, env.who);
      return { updateField: { priority: pos(content.fields, f.id) } };
    }
    case 'updateFieldType': {
      const f = fieldById(content, q.id, `${at}.id`);
      assertFieldUnlocked(env, f.id, undefined, at);
      parseMask(
        q.updateMask,
        [
          'textOptions',
          'integerOptions',
          'dateOptions',
          'selectionOptions',
          'userOptions',
          'listOptions',
          'dateFormatType',
          'selectionOptions.listOptions',
          'userOptions.listOptions',
          'dateOptions.dateFormatType',
        ],
        at,
      );
      const key = oneType(q, at);
      const current = TYPE_KEYS.find((k) => f[k] !== undefined);
      if (current !== key && f.life.everPublished) {
        throw precondition(`${at}: field ${f.id} is published as ${current}; its type cannot change (create a new field instead)`);
      }
      typeOptions(key, q[key], `${at}.${key}`, env, f, current === key);
      touch(f.life, env.now, env.who);
      return { updateFieldType: {} };
    }
    case 'enableField': {
      const f = fieldById(content, q.id, `${at}.id`);
      assertFieldUnlocked(env, f.id, undefined, at);
      enable(f.life, env, `${at}: field ${f.id}`);
      return { enableField: {} };
    }
    case 'disableField': {
      const f = fieldById(content, q.id, `${at}.id`);
      assertFieldUnlocked(env, f.id, undefined, at);
      parseMask(q.updateMask, ['hideInSearch', 'showInApply', 'disabledPolicy'], at);
      disable(f.life, disabledPolicy(q.disabledPolicy, `${at}.disabledPolicy`), env, `${at}: field ${f.id}`);
      return { disableField: {} };
    }
    case 'deleteField': {
      const f = fieldById(content, q.id, `${at}.id`);
      assertFieldUnlocked(env, f.id, undefined, at);
      assertDeletable(f.life, `${at}: field ${f.id}`);
      content.fields.splice(content.fields.indexOf(f), 1);
      return { deleteField: {} };
    }
    case 'createSelectionChoice': {
      const f = selectionField(content, q.fieldId, `${at}.fieldId`);
      assertFieldUnlocked(env, f.id, undefined, at);
      const c = newChoice(q.choice, `${at}.choice`, f, env);
      touch(f.life, env.now, env.who);
      return { createSelectionChoice: { fieldId: f.id, id: c.id } };
    }
    case 'updateSelectionChoiceProperties': {
      const f = selectionField(content, q.fieldId, `${at}.fieldId`);
      const c = choiceById(f, q.id, `${at}.id`);
      assertFieldUnlocked(env, f.id, c.id, at);
      const mask = parseMask(q.updateMask, CHOICE_PROPS, at);
      const p = choiceProperties(q.properties, `${at}.properties`, env, true);
      const raw = q.properties as Record<string, unknown>;
      const all = mask === '*';
      const has = (k: string) => all || (mask ? mask.has(k) : raw[k] !== undefined);
      if (has('displayName')) {
        if (!p.displayName) throw invalid(`${at}.properties.displayName is required`);
        if (f.selectionOptions!.choices.some((x) => x !== c && x.properties.displayName === p.displayName)) {
          throw invalid(`${at}.properties.displayName "${p.displayName}" is already used by a choice of field ${f.id}`);
        }
        c.properties.displayName = p.displayName;
      }
      if (has('description')) {
        if (p.description === undefined) delete c.properties.description;
        else c.properties.description = p.description;
      }
      if (has('badgeConfig')) {
        if (p.badgeConfig === undefined) delete c.properties.badgeConfig;
        else c.properties.badgeConfig = p.badgeConfig;
      }
      if (has('insertBeforeChoice')) {
        if (p.insertBeforeChoice === c.id) throw invalid(`${at}.properties.insertBeforeChoice cannot be the choice itself`);
        place(f.selectionOptions!.choices, c, p.insertBeforeChoice, `${at}.properties.insertBeforeChoice`);
      }
      touch(c.life, env.now, env.who);
      return { updateSelectionChoiceProperties: { priority: pos(f.selectionOptions!.choices, c.id) } };
    }
    case 'enableSelectionChoice': {
      const f = selectionField(content, q.fieldId, `${at}.fieldId`);
      const c = choiceById(f, q.id, `${at}.id`);
      assertFieldUnlocked(env, f.id, c.id, at);
      enable(c.life, env, `${at}: choice ${c.id}`);
      return { enableSelectionChoice: {} };
    }
    case 'disableSelectionChoice': {
      const f = selectionField(content, q.fieldId, `${at}.fieldId`);
      const c = choiceById(f, q.id, `${at}.id`);
      assertFieldUnlocked(env, f.id, c.id, at);
      parseMask(q.updateMask, ['hideInSearch', 'showInApply', 'disabledPolicy'], at);
      disable(c.life, disabledPolicy(q.disabledPolicy, `${at}.disabledPolicy`), env, `${at}: choice ${c.id}`);
      return { disableSelectionChoice: {} };
    }
    case 'deleteSelectionChoice': {
      const f = selectionField(content, q.fieldId, `${at}.fieldId`);
      const c = choiceById(f, q.id, `${at}.id`);
      assertFieldUnlocked(env, f.id, c.id, at);
      assertDeletable(c.life, `${at}: choice ${c.id}`);
      f.selectionOptions!.choices.splice(f.selectionOptions!.choices.indexOf(c), 1);
      touch(f.life, env.now, env.who);
      return { deleteSelectionChoice: {} };
    }
  }
}

/** Checks the structural limits of a content after a change. */
export function checkLimits(content: Content, limits: LabelLimits, where = 'label'): void {
  if (content.fields.length > limits.maxFields) {
    throw invalid(`${where} would have ${content.fields.length} fields; the limit is ${limits.maxFields} (see GET /v2/limits/label)`);
  }
  const max = limits.fieldLimits.selectionLimits.maxChoices;
  for (const f of content.fields) {
    const n = f.selectionOptions?.choices.length ?? 0;
    if (n > max) throw invalid(`field ${f.id} ("${f.properties.displayName}") would have ${n} choices; the limit is ${max} (see GET /v2/limits/label)`);
  }
}
