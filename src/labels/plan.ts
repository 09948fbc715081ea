import type { DesiredChoice, DesiredField, DesiredLabel, DisabledState } from './file.js';
import { principalKey } from './names.js';
import type { App, CopyMode } from './schema.js';
import { fieldType, type Choice, type DeltaRequest, type Field, type Label, type LabelLimits, type LabelPermission } from './types.js';
import { itemAt } from '../core/arrays.js';

/**
 * What `labels apply` will send: a label create (when the label does not exist yet) or one `:delta`
 * with the fewest update requests, plus at most one permissions `:batchUpdate` and one `:batchDelete`.
 * Fields and choices the file no longer lists are deleted while they were never published, and
 * disabled once published (deleting published metadata is left to `labels fields delete`).
 */
export interface Plan {
  create?: Record<string, unknown>;
  requests: DeltaRequest[];
  grant: LabelPermission[];
  revoke: LabelPermission[];
  /** `:updateLabelCopyMode` (not revisioned). */
  copyMode?: CopyMode;
  /** `:updateLabelEnabledAppSettings`. */
  enabledApps?: App[];
  /** `:enable` before a publish, and/or `:disable` (with this policy) after it. */
  enable?: boolean;
  disable?: DisabledState;
  /** One human line per change. */
  changes: string[];
}

export class PlanError extends Error {}

export function planWrites(plan: Plan): number {
  const one = (x: unknown) => (x ? 1 : 0);
  return (
    one(plan.create) +
    one(plan.requests.length) +
    one(plan.grant.length) +
    one(plan.revoke.length) +
    one(plan.copyMode) +
    one(plan.enabledApps) +
    one(plan.enable) +
    one(plan.disable)
  );
}

function listOptions({ list }: Pick<DesiredField, 'list'>): { maxEntries?: number } | undefined {
  if (list === undefined || list === false) return undefined;
  return list === true ? {} : { maxEntries: list };
}

function sameList(a: { maxEntries?: number } | undefined, b: { maxEntries?: number } | undefined): boolean {
  if (!a || !b) return !a && !b;
  return (a.maxEntries ?? 0) === (b.maxEntries ?? 0);
}

function typeOptions(f: DesiredField, { withChoices }: { withChoices: boolean }): Record<string, unknown> {
  switch (f.type) {
    case 'text':
      return { textOptions: {} };
    case 'integer':
      return { integerOptions: {} };
    case 'date':
      return { dateOptions: { dateFormatType: f.dateFormat ?? 'LONG_DATE' } };
    case 'user': {
      const lo = listOptions(f);
      return { userOptions: lo ? { listOptions: lo } : {} };
    }
    case 'selection': {
      const lo = listOptions(f);
      return {
        selectionOptions: {
          ...(lo ? { listOptions: lo } : {}),
          ...(withChoices ? { choices: (f.choices ?? []).map((c) => newChoice(c)) } : {}),
        },
      };
    }
  }
}

function newChoice(c: DesiredChoice, before?: string): Record<string, unknown> {
  return {
    ...(c.id ? { id: c.id } : {}),
    properties: { displayName: c.name, ...(c.description ? { description: c.description } : {}), ...(before ? { insertBeforeChoice: before } : {}) },
  };
}

function newField(f: DesiredField, before?: string): Record<string, unknown> {
  return {
    ...(f.id ? { id: f.id } : {}),
    properties: { displayName: f.name, ...(f.required ? { required: true } : {}), ...(before ? { insertBeforeField: before } : {}) },
    ...typeOptions(f, { withChoices: true }),
  };
}

/** Longest strictly increasing subsequence: the indexes (into `seq`) of items that can stay put. */
export function lis(seq: number[]): Set<number> {
  const tails: number[] = [];
  const prev = new Array<number>(seq.length).fill(-1);
  for (let i = 0; i < seq.length; i++) {
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (itemAt(seq, itemAt(tails, mid)) < itemAt(seq, i)) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) prev[i] = itemAt(tails, lo - 1);
    tails[lo] = i;
  }
  const keep = new Set<number>();
  for (let i = tails.at(-1) ?? -1; i >= 0; i = itemAt(prev, i)) keep.add(i);
  return keep;
}

/**
 * The fewest moves that put existing items into the desired order, and where to insert new ones.
 * `desired` lists every wanted item in order, with the id of the existing item it matches (if any).
 * Moves must be sent in the order returned (reverse desired order); each goes before the next existing
 * wanted item ('' = to the end). New items go before the next existing wanted item, sent in desired order.
 */
export function orderPlan(
  current: string[],
  desired: Array<{ existingId?: string }>,
): { moves: Array<{ index: number; before: string }>; insertBefore: Array<string | undefined> } {
  const existing = desired.map((d, i) => ({ i, id: d.existingId })).filter((x): x is { i: number; id: string } => Boolean(x.id));
  const keep = lis(existing.map((x) => current.indexOf(x.id)));
  const stays = new Set(existing.filter((_, k) => keep.has(k)).map((x) => x.i));
  const moves: Array<{ index: number; before: string }> = [];
  const insertBefore = new Array<string | undefined>(desired.length).fill(undefined);
  let next: string | undefined;
  for (let i = desired.length - 1; i >= 0; i--) {
    const id = itemAt(desired, i).existingId;
    if (id) {
      if (!stays.has(i)) moves.push({ index: i, before: next ?? '' });
      next = id;
    } else {
      insertBefore[i] = next;
    }
  }
  return { moves, insertBefore };
}

const isDraft = (x: { lifecycle?: { state?: string } }) => x.lifecycle?.state === 'UNPUBLISHED_DRAFT';
const isDisabled = (x: { lifecycle?: { state?: string } }) => x.lifecycle?.state === 'DISABLED';

type Named = { id: string; properties?: { displayName?: string } };
type Wanted = { id?: string; name: string; renamedFrom?: string[] };

/**
 * Which existing item each wanted one is: by id when it has one the label knows, else by name, and only
 * then by an old name (`renamed_from`), so a rename never takes an item another entry names exactly.
 */
export function matchAll<T extends Named>(current: T[], wanted: Wanted[]): { matched: Array<T | undefined>; taken: Set<string> } {
  const taken = new Set<string>();
  const matched: Array<T | undefined> = wanted.map(() => undefined);
  const claim = (i: number, found: T | undefined) => {
    if (!found) return;
    matched[i] = found;
    taken.add(found.id);
  };
  wanted.forEach((w, i) => claim(i, w.id ? current.find((c) => c.id === w.id) : undefined));
  wanted.forEach(
    (w, i) =>
      matched[i] ||
      claim(
        i,
        current.find((c) => c.properties?.displayName === w.name && !taken.has(c.id)),
      ),
  );
  wanted.forEach(
    (w, i) =>
      matched[i] ||
      claim(
        i,
        current.find((c) => !taken.has(c.id) && (w.renamedFrom ?? []).includes(c.properties?.displayName ?? '')),
      ),
  );
  return { matched, taken };
}

/** How a change line names a displayName change: a rename from the old name. */
const maskText = (mask: string[], cur: Named, move: string) =>
  mask.map((m) => (m === move ? 'move' : m === 'displayName' ? `renamed from "${cur.properties?.displayName}"` : m)).join(', ');

function retire(kind: 'field' | 'choice', x: Field | Choice, fieldId: string | undefined, out: Plan, fieldName?: string): void {
  const where = kind === 'choice' ? ` of "${fieldName}"` : '';
  const id = kind === 'field' ? { id: x.id } : { fieldId, id: x.id };
  if (isDraft(x)) {
    out.requests.push(kind === 'field' ? { deleteField: id } : { deleteSelectionChoice: id });
    out.changes.push(`- ${kind} "${x.properties?.displayName}"${where} (never published: delete)`);
  } else if (!isDisabled(x)) {
    out.requests.push(kind === 'field' ? { disableField: { ...id, disabledPolicy: {} } } : { disableSelectionChoice: { ...id, disabledPolicy: {} } });
    out.changes.push(`- ${kind} "${x.properties?.displayName}"${where} (published: disable)`);
  }
}

function planChoices(field: Field, wanted: DesiredField, out: Plan): void {
  const current = field.selectionOptions?.choices ?? [];
  const wantedChoices = wanted.choices ?? [];
  const { matched, taken } = matchAll(current, wantedChoices);
  for (const c of current) if (!taken.has(c.id)) retire('choice', c, field.id, out, wanted.name);
  const order = orderPlan(
    current.filter((c) => taken.has(c.id)).map((c) => c.id),
    matched.map((m) => ({ existingId: m?.id })),
  );
  const moveOf = new Map(order.moves.map((m) => [m.index, m.before]));
  // updates (with moves) in reverse desired order, so that each move lands before an item already in place
  for (let i = wantedChoices.length - 1; i >= 0; i--) {
    const cur = matched[i];
    const want = itemAt(wantedChoices, i);
    if (!cur) continue;
    if (isDisabled(cur)) {
      out.requests.push({ enableSelectionChoice: { fieldId: field.id, id: cur.id } });
      out.changes.push(`~ choice "${want.name}" of "${wanted.name}": enable`);
    }
    const mask: string[] = [];
    const props: Record<string, unknown> = { displayName: want.name };
    if (cur.properties?.displayName !== want.name) mask.push('displayName');
    if ((cur.properties?.description ?? '') !== (want.description ?? '')) {
      mask.push('description');
      if (want.description) props.description = want.description;
    }
    if (moveOf.has(i)) {
      mask.push('insertBeforeChoice');
      props.insertBeforeChoice = moveOf.get(i);
    }
    if (mask.length) {
      out.requests.push({ updateSelectionChoiceProperties: { fieldId: field.id, id: cur.id, properties: props, updateMask: mask.join(',') } });
      out.changes.push(`~ choice "${want.name}" of "${wanted.name}": ${maskText(mask, cur, 'insertBeforeChoice')}`);
    }
  }
  wantedChoices.forEach((want, i) => {
    if (matched[i]) return;
    out.requests.push({ createSelectionChoice: { fieldId: field.id, choice: newChoice(want, order.insertBefore[i]) } });
    out.changes.push(`+ choice "${want.name}" in "${wanted.name}"`);
  });
}

export interface PlanOptions {
  /** `--publish` is given: a new or never-published label can be disabled after it. */
  publish?: boolean;
}

const DEFAULT_COPY_MODE: CopyMode = 'DO_NOT_COPY';
const appsOf = (l: Label | undefined) => (l?.enabledAppSettings?.enabledApps ?? []).map((a) => a.app ?? '');
const policyText = (p: DisabledState) =>
  [p.hideInSearch ? 'hidden in search' : '', p.showInApply ? 'shown in apply' : ''].filter(Boolean).join(', ') || 'default policy';

/** Copy mode, enabled apps and the disabled state: each its own call, and only when the file names it. */
function planSettings(current: Label | undefined, desired: DesiredLabel, out: Plan, opts: PlanOptions): void {
  const copyMode = (current?.appliedLabelPolicy?.copyMode as CopyMode | undefined) ?? DEFAULT_COPY_MODE;
  if (desired.copyMode && desired.copyMode !== copyMode) {
    out.copyMode = desired.copyMode;
    out.changes.push(`~ copy mode: ${copyMode} → ${desired.copyMode}`);
  }
  if (desired.enabledApps && !out.create) {
    const apps = appsOf(current);
    if (apps.length !== desired.enabledApps.length || apps.some((a) => !desired.enabledApps!.includes(a as App))) {
      out.enabledApps = desired.enabledApps;
      out.changes.push(`~ enabled apps: ${apps.join(', ') || 'none'} → ${desired.enabledApps.join(', ') || 'none'}`);
    }
  }
  if (desired.disabled === undefined) return;
  const state = current?.lifecycle?.state;
  if (state === 'DISABLED') {
    const p = current!.lifecycle?.disabledPolicy ?? {};
    const now: DisabledState = { hideInSearch: Boolean(p.hideInSearch), showInApply: Boolean(p.showInApply) };
    if (desired.disabled === false) {
      out.enable = true;
      out.changes.push('~ label: enable');
    } else if (now.hideInSearch !== desired.disabled.hideInSearch || now.showInApply !== desired.disabled.showInApply) {
      out.enable = true;
      out.disable = desired.disabled;
      out.changes.push(`~ label: disabled policy ${policyText(now)} → ${policyText(desired.disabled)} (enable, then disable)`);
    }
  } else if (desired.disabled) {
    if (state !== 'PUBLISHED' && !opts.publish) {
      throw new PlanError(
        `disabled: only a published label can be disabled; this one ${current ? 'was never published' : 'is new'}: add --publish, or leave out disabled`,
      );
    }
    out.disable = desired.disabled;
    out.changes.push(`~ label: disable (${policyText(desired.disabled)})`);
  }
}

/** Plans the changes that make `current` (undefined: not there yet) look like `desired`. Pure. */
export function planLabel(current: Label | undefined, desired: DesiredLabel, currentPermissions: LabelPermission[] | undefined, opts: PlanOptions = {}): Plan {
  const out: Plan = { requests: [], grant: [], revoke: [], changes: [] };
  if (!current) {
    out.create = {
      labelType: desired.labelType ?? 'SHARED',
      properties: { title: desired.title, ...(desired.description ? { description: desired.description } : {}) },
      ...(desired.enabledApps?.length ? { enabledAppSettings: { enabledApps: desired.enabledApps.map((app) => ({ app })) } } : {}),
      ...(desired.fields.length ? { fields: desired.fields.map((f) => newField(f)) } : {}),
    };
    out.changes.push(
      `+ label "${desired.title}" (${desired.labelType ?? 'SHARED'}${desired.enabledApps?.length ? `; apps ${desired.enabledApps.join(', ')}` : ''})`,
    );
    for (const f of desired.fields) out.changes.push(`+ field "${f.name}" (${f.type}${f.choices ? `: ${f.choices.map((c) => c.name).join(', ')}` : ''})`);
  } else {
    if (desired.labelType && current.labelType && desired.labelType !== current.labelType) {
      throw new PlanError(`labelType: the label is ${current.labelType}; a label's type cannot change (create a new label instead)`);
    }
    const mask: string[] = [];
    if (current.properties?.title !== desired.title) mask.push('title');
    if ((current.properties?.description ?? '') !== (desired.description ?? '')) mask.push('description');
    if (mask.length) {
      out.requests.push({
        updateLabel: { properties: { title: desired.title, ...(desired.description ? { description: desired.description } : {}) }, updateMask: mask.join(',') },
      });
      out.changes.push(`~ label: ${mask.map((m) => (m === 'title' ? `title (renamed from "${current.properties?.title}")` : m)).join(', ')}`);
    }
    planFields(current, desired, out);
  }
  planSettings(current, desired, out, opts);
  if (desired.permissions) planPermissions(currentPermissions ?? [], desired.permissions, out);
  return out;
}

function planFields(current: Label, desired: DesiredLabel, out: Plan): void {
  const fields = current.fields ?? [];
  const { matched, taken } = matchAll(fields, desired.fields);
  for (const f of fields) if (!taken.has(f.id)) retire('field', f, undefined, out);
  const order = orderPlan(
    fields.filter((f) => taken.has(f.id)).map((f) => f.id),
    matched.map((m) => ({ existingId: m?.id })),
  );
  const moveOf = new Map(order.moves.map((m) => [m.index, m.before]));
  for (let i = desired.fields.length - 1; i >= 0; i--) {
    const cur = matched[i];
    const want = itemAt(desired.fields, i);
    if (!cur) continue;
    const mask: string[] = [];
    const props: Record<string, unknown> = { displayName: want.name };
    if (cur.properties?.displayName !== want.name) mask.push('displayName');
    if (Boolean(cur.properties?.required) !== Boolean(want.required)) {
      mask.push('required');
      props.required = Boolean(want.required);
    }
    if (moveOf.has(i)) {
      mask.push('insertBeforeField');
      props.insertBeforeField = moveOf.get(i);
    }
    if (mask.length) {
      out.requests.push({ updateField: { id: cur.id, properties: props, updateMask: mask.join(',') } });
      out.changes.push(`~ field "${want.name}": ${maskText(mask, cur, 'insertBeforeField')}`);
    }
  }
  desired.fields.forEach((want, i) => {
    const cur = matched[i];
    if (!cur) return;
    if (isDisabled(cur)) {
      out.requests.push({ enableField: { id: cur.id } });
      out.changes.push(`~ field "${want.name}": enable`);
    }
    const type = fieldType(cur);
    if (type !== want.type) {
      if (!isDraft(cur)) {
        throw new PlanError(
          `fields[${i}] ("${want.name}"): the field is published as ${type}; its type cannot change to ${want.type}. Give the field a new name (the old one is then disabled).`,
        );
      }
      out.requests.push({ updateFieldType: { id: cur.id, ...typeOptions(want, { withChoices: true }), updateMask: '*' } });
      out.changes.push(`~ field "${want.name}": type ${type} → ${want.type}`);
      return;
    }
    if (want.type === 'date' && (cur.dateOptions?.dateFormatType ?? 'LONG_DATE') !== (want.dateFormat ?? 'LONG_DATE')) {
      out.requests.push({ updateFieldType: { id: cur.id, ...typeOptions(want, { withChoices: false }), updateMask: 'dateOptions.dateFormatType' } });
      out.changes.push(`~ field "${want.name}": dateFormat → ${want.dateFormat ?? 'LONG_DATE'}`);
    }
    if (want.type === 'selection' || want.type === 'user') {
      const curList = want.type === 'selection' ? cur.selectionOptions?.listOptions : cur.userOptions?.listOptions;
      if (!sameList(curList, listOptions(want))) {
        out.requests.push({ updateFieldType: { id: cur.id, ...typeOptions(want, { withChoices: false }), updateMask: `${want.type}Options.listOptions` } });
        out.changes.push(`~ field "${want.name}": list → ${want.list ?? false}`);
      }
    }
    if (want.type === 'selection') planChoices(cur, want, out);
  });
  desired.fields.forEach((want, i) => {
    if (matched[i]) return;
    out.requests.push({ createField: { field: newField(want, order.insertBefore[i]) } });
    out.changes.push(`+ field "${want.name}" (${want.type}${want.choices ? `: ${want.choices.map((c) => c.name).join(', ')}` : ''})`);
  });
}

function planPermissions(current: LabelPermission[], desired: NonNullable<DesiredLabel['permissions']>, out: Plan): void {
  const byKey = new Map(current.filter((p) => p.email || p.audience).map((p) => [principalKey(p), p]));
  const wanted = new Set<string>();
  for (const d of desired) {
    const key = principalKey(d);
    wanted.add(key);
    const cur = byKey.get(key);
    if (!cur) {
      out.grant.push({ ...d });
      out.changes.push(`+ permission ${key} ${d.role}`);
    } else if (cur.role !== d.role) {
      out.grant.push({ ...d });
      out.changes.push(`~ permission ${key}: ${cur.role} → ${d.role}`);
    }
  }
  for (const [key, p] of byKey) {
    if (wanted.has(key)) continue;
    out.revoke.push(p);
    out.changes.push(`- permission ${key} ${p.role}`);
  }
}

/** The file's breaches of `limits/label`, counting disabled fields and choices the label keeps. */
export function limitProblems(desired: DesiredLabel, current: Label | undefined, limits: LabelLimits): string[] {
  const problems: string[] = [];
  const fl = limits.fieldLimits ?? {};
  const sl = fl.selectionLimits ?? {};
  const over = (n: number, max: number | undefined) => max !== undefined && n > max;
  if (over(desired.title.length, limits.maxTitleLength)) problems.push(`title: ${desired.title.length} characters; the limit is ${limits.maxTitleLength}`);
  if (desired.description && over(desired.description.length, limits.maxDescriptionLength)) {
    problems.push(`description: ${desired.description.length} characters; the limit is ${limits.maxDescriptionLength}`);
  }
  const { matched, taken } = matchAll(current?.fields ?? [], desired.fields);
  const keptFields = (current?.fields ?? []).filter((f) => !taken.has(f.id) && !isDraft(f)).length;
  const total = desired.fields.length + keptFields;
  if (over(total, limits.maxFields)) {
    problems.push(
      `fields: the label would have ${total} fields (${desired.fields.length} in the file${keptFields ? ` + ${keptFields} disabled ones it keeps` : ''}); the limit is ${limits.maxFields}`,
    );
  }
  desired.fields.forEach((f, i) => {
    if (over(f.name.length, fl.maxDisplayNameLength)) problems.push(`fields[${i}].name: ${f.name.length} characters; the limit is ${fl.maxDisplayNameLength}`);
    if (f.id && over(f.id.length, fl.maxIdLength)) problems.push(`fields[${i}].id: ${f.id.length} characters; the limit is ${fl.maxIdLength}`);
    const maxEntries = f.type === 'user' ? fl.userLimits?.listLimits?.maxEntries : sl.listLimits?.maxEntries;
    if (typeof f.list === 'number' && over(f.list, maxEntries)) problems.push(`fields[${i}].list: ${f.list} entries; the limit is ${maxEntries}`);
    if (f.type !== 'selection') return;
    const choices = f.choices ?? [];
    const ct = matchAll(matched[i]?.selectionOptions?.choices ?? [], choices).taken;
    const keptChoices = (matched[i]?.selectionOptions?.choices ?? []).filter((c) => !ct.has(c.id) && !isDraft(c)).length;
    if (over(choices.length + keptChoices, sl.maxChoices)) {
      problems.push(
        `fields[${i}].choices: ${choices.length + keptChoices} choices (${choices.length} in the file${keptChoices ? ` + ${keptChoices} disabled` : ''}); the limit is ${sl.maxChoices}`,
      );
    }
    choices.forEach((c, j) => {
      if (over(c.name.length, sl.maxDisplayNameLength))
        problems.push(`fields[${i}].choices[${j}].name: ${c.name.length} characters; the limit is ${sl.maxDisplayNameLength}`);
    });
  });
  return problems;
}
