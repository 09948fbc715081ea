import {
  ROLES,
  denied,
  invalid,
  iso,
  notFound,
  precondition,
  slice,
  type Caller,
  type Content,
  type Life,
  type Revision,
  type Role,
  type StoredChoice,
  type StoredField,
  type StoredLabel,
  type View,
} from './common.js';
import type { MockSlices } from '../../store.js';
import { clone } from '../../tx.js';
import { byId } from '../../indexes.js';

export function findLabel(state: MockSlices, id: string): StoredLabel {
  const label = byId(slice(state).labels, id);
  if (!label) throw notFound(`label labels/${id} does not exist`);
  return label;
}

/** The newest revision: a label gets one when it is created and always keeps its newest. */
export function latest(label: StoredLabel): Revision {
  const rev = label.revisions.at(-1);
  if (!rev) throw new Error(`label labels/${label.id} has no revision (a damaged state)`);
  return rev;
}

export function published(label: StoredLabel): Revision | undefined {
  return [...label.revisions].reverse().find((r) => r.published);
}

/** `@latest` (or none), `@published` or `@REV`. */
export function resolveRevision(label: StoredLabel, rev: string | undefined): Revision {
  if (!rev || rev === 'latest') return latest(label);
  if (rev === 'published') {
    const p = published(label);
    if (!p) throw notFound(`label labels/${label.id} has no published revision (publish it first)`);
    return p;
  }
  const r = label.revisions.find((x) => x.revisionId === rev);
  if (!r) throw notFound(`label labels/${label.id} has no revision ${rev} (older drafts are deleted when a revision is published)`);
  return r;
}

export function hasUnpublishedChanges(label: StoredLabel): boolean {
  return !latest(label).published;
}

export function roleRank(role: string | undefined): number {
  return role ? ROLES.indexOf(role as Role) + 1 : 0;
}

/** The caller's role on a label: its creator is an editor; otherwise the best matching permission. */
export function roleOf(label: StoredLabel, who: Caller): Role | undefined {
  if (label.creatorEmail.toLowerCase() === who.email.toLowerCase()) return 'EDITOR';
  let best: Role | undefined;
  for (const p of label.permissions) {
    const match = (p.email && p.email.toLowerCase() === who.email.toLowerCase()) || p.audience === 'audiences/default';
    if (match && roleRank(p.role) > roleRank(best)) best = p.role;
  }
  return best;
}

/** Editors (and admins with useAdminAccess) see drafts; everyone else sees published revisions only. */
export function seesDrafts(label: StoredLabel, who: Caller, adminAccess: boolean): boolean {
  return adminAccess || roleOf(label, who) === 'EDITOR';
}

/**
 * Finds a label the caller may see (404 otherwise, so that names do not leak). A label that was never
 * published is visible to its editors only: "users can't view the label" while it is a draft.
 */
export function visibleLabel(state: MockSlices, id: string, who: Caller, adminAccess: boolean): StoredLabel {
  const label = findLabel(state, id);
  if (!adminAccess && (!roleOf(label, who) || (!seesDrafts(label, who, adminAccess) && !published(label)))) {
    throw notFound(`label labels/${id} does not exist`);
  }
  return label;
}

/** The revision a reader asks for: for a non-editor, `labels/ID` and `@latest` mean the published revision, and drafts do not exist. */
export function visibleRevision(label: StoredLabel, rev: string | undefined, who: Caller, adminAccess: boolean): Revision {
  if (seesDrafts(label, who, adminAccess)) return resolveRevision(label, rev);
  const r = !rev || rev === 'latest' ? published(label) : resolveRevision(label, rev);
  if (!r?.published) throw notFound(`label labels/${label.id} has no revision ${rev} (older drafts are deleted when a revision is published)`);
  return r;
}

/** A label the caller may change: an editor, or an admin with `useAdminAccess`. Disabled-label writes are allowed. */
export function editableLabel(state: MockSlices, id: string, who: Caller, adminAccess: boolean): StoredLabel {
  const label = visibleLabel(state, id, who, adminAccess);
  if (adminAccess) return label;
  if (roleOf(label, who) !== 'EDITOR') throw denied(`the caller (${who.email}) is not an editor of labels/${id}; ask an editor for the EDITOR role`);
  if (label.labelType === 'ADMIN') throw denied(`labels/${id} is an admin label: change it with useAdminAccess=true and an admin scope`);
  return label;
}

export function assertAdminAccess(who: Caller, adminAccess: boolean, write: boolean): void {
  if (!adminAccess) return;
  if (write ? !who.adminWrite : !who.admin) {
    throw denied(
      `useAdminAccess=true needs the scope https://www.googleapis.com/auth/drive.admin.labels${write ? '' : ' (or .readonly)'}; sign in again with it`,
    );
  }
}

export function assertRevision(label: StoredLabel, required: unknown): void {
  if (required === undefined || required === null || required === '') return;
  if (typeof required !== 'string') throw invalid('writeControl.requiredRevisionId must be a string');
  const current = latest(label).revisionId;
  if (required !== current) {
    throw precondition(
      `writeControl.requiredRevisionId ${required} is not the latest revision of labels/${label.id} (latest: ${current}); read the label again and retry`,
    );
  }
}

export function assertNotLocked(label: StoredLabel): void {
  if (label.locks.some((l) => l.state === 'ACTIVE' && !l.fieldId)) {
    throw precondition(`labels/${label.id} is locked; its schema cannot be changed until the lock is removed`);
  }
}

export function newLife(now: number, who: Caller): Life {
  const t = iso(now);
  return {
    state: 'UNPUBLISHED_DRAFT',
    everPublished: false,
    hasUnpublishedChanges: true,
    createTime: t,
    creator: who.person,
    updateTime: t,
    updater: who.person,
  };
}

export function touch(life: Life, now: number, who: Caller): void {
  life.updateTime = iso(now);
  life.updater = who.person;
  life.hasUnpublishedChanges = true;
}

/** Appends a new draft revision holding `content`; keeps at most maxDraftRevisions drafts. */
export function addRevision(label: StoredLabel, content: Content, now: number, who: Caller, isPublished: boolean, maxDrafts = 50): Revision {
  label.revSeq += 1;
  const rev: Revision = { revisionId: String(label.revSeq), createTime: iso(now), creator: who.person, published: isPublished, content };
  label.revisions.push(rev);
  if (isPublished) {
    label.revisions = label.revisions.filter((r) => r.published);
  } else {
    const drafts = label.revisions.filter((r) => !r.published);
    if (drafts.length > maxDrafts) {
      const drop = new Set(drafts.slice(0, drafts.length - maxDrafts).map((r) => r.revisionId));
      label.revisions = label.revisions.filter((r) => !drop.has(r.revisionId));
    }
  }
  return rev;
}

/** Marks every object of a content as published. */
export function publishContent(content: Content, now: number, who: Caller): void {
  const pub = (life: Life) => {
    if (life.state === 'UNPUBLISHED_DRAFT') life.state = 'PUBLISHED';
    if (!life.everPublished || life.hasUnpublishedChanges) {
      life.publishTime = iso(now);
      life.publisher = who.person;
    }
    life.everPublished = true;
    life.hasUnpublishedChanges = false;
  };
  pub(content.life);
  for (const f of content.fields) {
    pub(f.life);
    for (const c of f.selectionOptions?.choices ?? []) pub(c.life);
  }
}

// ---------- presentation ----------

function lifecycle(life: Life, stateOverride?: string, unpublished?: boolean): Record<string, unknown> {
  return {
    state: stateOverride ?? life.state,
    hasUnpublishedChanges: unpublished ?? life.hasUnpublishedChanges,
    ...(life.disabledPolicy && (stateOverride ?? life.state) === 'DISABLED' ? { disabledPolicy: life.disabledPolicy } : {}),
  };
}

/** Who and when: a Field has a publisher but no publishTime (the discovery document's Field), a Choice has both. */
function people(life: Life, withPublishTime: boolean): Record<string, unknown> {
  return {
    createTime: life.createTime,
    creator: { person: life.creator },
    updateTime: life.updateTime,
    updater: { person: life.updater },
    ...(life.publishTime ? { ...(withPublishTime ? { publishTime: life.publishTime } : {}), publisher: { person: life.publisher } } : {}),
    ...(life.state === 'DISABLED' && life.disableTime ? { disableTime: life.disableTime, disabler: { person: life.disabler } } : {}),
  };
}

function hints(life: Life): Record<string, unknown> {
  const disabled = life.state === 'DISABLED';
  return {
    disabled,
    hiddenInSearch: disabled ? Boolean(life.disabledPolicy?.hideInSearch) : false,
    shownInApply: disabled ? Boolean(life.disabledPolicy?.showInApply) : life.state === 'PUBLISHED',
  };
}

function presentChoice(label: StoredLabel, field: StoredField, c: StoredChoice, editor: boolean): Record<string, unknown> {
  const state = c.life.state;
  return {
    id: c.id,
    properties: { ...c.properties },
    lifecycle: lifecycle(c.life),
    displayHints: { ...hints(c.life), ...(c.properties.badgeConfig ? { badgePriority: c.properties.badgeConfig.priorityOverride ?? '0' } : {}) },
    schemaCapabilities: {
      canUpdate: editor,
      canDelete: editor && (state !== 'PUBLISHED' || !c.life.everPublished),
      canDisable: editor && state !== 'DISABLED',
      canEnable: editor && state === 'DISABLED',
    },
    appliedCapabilities: { canRead: true, canSearch: true, canSelect: state === 'PUBLISHED' },
    lockStatus: { locked: label.locks.some((l) => l.state === 'ACTIVE' && l.fieldId === field.id && l.choiceId === c.id) },
    ...people(c.life, true),
  };
}

function presentField(label: StoredLabel, f: StoredField, editor: boolean): Record<string, unknown> {
  const state = f.life.state;
  const out: Record<string, unknown> = {
    id: f.id,
    queryKey: `labels/${label.id}.${f.id}`,
    properties: { ...f.properties },
    lifecycle: lifecycle(f.life),
    displayHints: { ...hints(f.life), required: Boolean(f.properties.required) },
    schemaCapabilities: {
      canUpdate: editor,
      canDelete: editor && (state !== 'PUBLISHED' || !f.life.everPublished),
      canDisable: editor && state !== 'DISABLED',
      canEnable: editor && state === 'DISABLED',
    },
    appliedCapabilities: { canRead: true, canSearch: true, canWrite: state === 'PUBLISHED' },
    lockStatus: { locked: label.locks.some((l) => l.state === 'ACTIVE' && l.fieldId === f.id && !l.choiceId) },
    ...people(f.life, false),
  };
  if (f.textOptions) out.textOptions = { ...f.textOptions };
  if (f.integerOptions) out.integerOptions = { ...f.integerOptions };
  if (f.dateOptions) out.dateOptions = { ...f.dateOptions };
  if (f.userOptions) out.userOptions = clone(f.userOptions);
  if (f.selectionOptions) {
    out.selectionOptions = {
      ...(f.selectionOptions.listOptions ? { listOptions: { ...f.selectionOptions.listOptions } } : {}),
      choices: f.selectionOptions.choices.map((c) => presentChoice(label, f, c, editor)),
    };
  }
  return out;
}

export interface PresentOptions {
  view?: View;
  who: Caller;
  adminAccess?: boolean;
  /** Put the revision in the name (`labels/ID@REV`): a get by revision, or publishedOnly lists. */
  revisionInName?: boolean;
}

/** A label revision as the API returns it, in the BASIC or FULL view. */
export function present(label: StoredLabel, rev: Revision, opts: PresentOptions): Record<string, unknown> {
  const c = rev.content;
  const base = {
    name: opts.revisionInName ? `labels/${label.id}@${rev.revisionId}` : `labels/${label.id}`,
    id: label.id,
    revisionId: rev.revisionId,
    labelType: label.labelType,
    properties: { ...c.properties },
  };
  if ((opts.view ?? 'LABEL_VIEW_BASIC') === 'LABEL_VIEW_BASIC') return base;
  const role = opts.adminAccess ? 'EDITOR' : roleOf(label, opts.who);
  const editor = role === 'EDITOR';
  const state = label.state;
  const pub = published(label);
  return {
    ...base,
    ...(c.learnMoreUri ? { learnMoreUri: c.learnMoreUri } : {}),
    customer: 'customers/mock',
    createTime: label.createTime,
    creator: { person: label.creator },
    revisionCreateTime: rev.createTime,
    revisionCreator: { person: rev.creator },
    ...(pub && label.publishTime ? { publishTime: label.publishTime, publisher: { person: label.publisher } } : {}),
    ...(state === 'DISABLED' ? { disableTime: label.disableTime, disabler: { person: label.disabler } } : {}),
    lifecycle: {
      state,
      hasUnpublishedChanges: hasUnpublishedChanges(label),
      ...(state === 'DISABLED' && label.disabledPolicy ? { disabledPolicy: label.disabledPolicy } : {}),
    },
    displayHints: {
      disabled: state === 'DISABLED',
      hiddenInSearch: state === 'DISABLED' ? Boolean(label.disabledPolicy?.hideInSearch) : false,
      shownInApply: state === 'PUBLISHED' || (state === 'DISABLED' && Boolean(label.disabledPolicy?.showInApply)),
      priority: '0',
    },
    appliedCapabilities: { canRead: true, canApply: roleRank(role) >= 2 && state === 'PUBLISHED', canRemove: roleRank(role) >= 2 },
    schemaCapabilities: {
      canUpdate: editor,
      canDelete: editor && state !== 'PUBLISHED',
      canDisable: editor && state === 'PUBLISHED',
      canEnable: editor && state === 'DISABLED',
    },
    appliedLabelPolicy: { copyMode: label.copyMode },
    ...(label.enabledApps ? { enabledAppSettings: { enabledApps: label.enabledApps.map((a) => ({ ...a })) } } : {}),
    lockStatus: { locked: label.locks.some((l) => l.state === 'ACTIVE' && !l.fieldId) },
    fields: c.fields.map((f) => presentField(label, f, editor)),
  };
}
