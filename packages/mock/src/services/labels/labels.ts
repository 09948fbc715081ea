import { reply, type MockReply, type MockRequest } from '../../http.js';
import type { ServiceContext } from '../../service.js';
import { sliceField, type MockSlices } from '../../store.js';
import { promised } from '@opsctl/shared/promised.js';
import { asList, asObject } from '@opsctl/shared/json.js';
import type { App } from '@opsctl/shared/labels/schema.js';
import {
  APPS,
  COPY_MODES,
  ROLES,
  VIEWS,
  body,
  boolParam,
  caller,
  denied,
  enumParam,
  invalid,
  iso,
  languageParam,
  newId,
  notFound,
  paginate,
  precondition,
  slice,
  type Content,
  type LabelLimits,
  type StoredLabel,
  type View,
} from './common.js';
import { applyRequest, checkLimits, createField, parseDisabledPolicy, type DeltaEnv } from './delta.js';
import {
  addRevision,
  assertAdminAccess,
  assertNotLocked,
  assertRevision,
  editableLabel,
  hasUnpublishedChanges,
  latest,
  newLife,
  present,
  publishContent,
  published,
  roleOf,
  roleRank,
  seesDrafts,
  visibleLabel,
  visibleRevision,
} from './model.js';
import type { LabelVerb } from './paths.js';
import { seedUsers, type MockUser } from '../oauth/registry.js';
import { clone } from '../../tx.js';

export interface Env {
  ctx: ServiceContext;
  limits: LabelLimits;
}

function adminQuery(req: MockRequest): boolean {
  return boolParam(req.query.get('useAdminAccess'), 'useAdminAccess') ?? false;
}

function adminBody(b: Record<string, unknown>, req: MockRequest): boolean {
  return boolParam(b.useAdminAccess, 'useAdminAccess') ?? adminQuery(req);
}

function viewOf(v: unknown, name = 'view'): View | undefined {
  return enumParam(v, name, VIEWS);
}

export async function createLabel(req: MockRequest, env: Env): Promise<MockReply> {
  const who = caller(req);
  const adminAccess = adminQuery(req);
  assertAdminAccess(who, adminAccess, true);
  languageParam(req.query.get('languageCode'));
  const b = body(req);
  const labelType = enumParam(b.labelType, 'labelType', ['SHARED', 'ADMIN', 'LABEL_TYPE_UNSPECIFIED', 'GOOGLE_APP'] as const);
  if (!labelType || labelType === 'LABEL_TYPE_UNSPECIFIED') throw invalid('labelType is required: SHARED or ADMIN');
  if (labelType === 'GOOGLE_APP') throw invalid('labelType GOOGLE_APP labels are owned by Google applications and cannot be created');
  if (labelType === 'ADMIN' && !adminAccess) throw denied('an ADMIN label can only be created with useAdminAccess=true and an admin scope');
  const props = b.properties;
  if (props === undefined || props === null) throw invalid('properties is required (with properties.title)');
  if (typeof props !== 'object' || Array.isArray(props)) throw invalid('properties must be an object (with properties.title)');
  const { title, description } = asObject(props);
  if (title !== undefined && title !== null && typeof title !== 'string') throw invalid('properties.title must be a string');
  if (typeof title !== 'string' || !title.trim()) throw invalid('properties.title is required');
  if (title.length > env.limits.maxTitleLength) throw invalid(`properties.title is ${title.length} characters; the limit is ${env.limits.maxTitleLength}`);
  if (description !== undefined && typeof description !== 'string') throw invalid('properties.description must be a string');
  if (typeof description === 'string' && description.length > env.limits.maxDescriptionLength) {
    throw invalid(`properties.description is ${description.length} characters; the limit is ${env.limits.maxDescriptionLength}`);
  }
  const learnMoreUri = b.learnMoreUri;
  if (learnMoreUri !== undefined && (typeof learnMoreUri !== 'string' || !/^https?:\/\/\S+$/.test(learnMoreUri))) {
    throw invalid('learnMoreUri must be an http(s) URL');
  }
  if (b.fields !== undefined && !Array.isArray(b.fields)) throw invalid('fields must be a list');
  const fields = asList(b.fields);
  const apps = b.enabledAppSettings === undefined ? undefined : enabledApps(b.enabledAppSettings, 'enabledAppSettings');
  const now = env.ctx.now();
  const out = await env.ctx.store.write((s) => {
    const t = iso(now);
    const content: Content = {
      properties: { title, ...(description ? { description } : {}) },
      ...(learnMoreUri ? { learnMoreUri } : {}),
      life: newLife(now, who),
      fields: [],
    };
    const label: StoredLabel = {
      id: newId(),
      labelType,
      createTime: t,
      creator: who.person,
      creatorEmail: who.email,
      state: 'UNPUBLISHED_DRAFT',
      revSeq: 0,
      revisions: [],
      copyMode: 'DO_NOT_COPY',
      ...(apps ? { enabledApps: apps } : {}),
      permSeq: 0,
      permissions: [],
      locks: [],
    };
    const denv: DeltaEnv = { label, limits: env.limits, now, who };
    fields.forEach((f, i) => createField(content, f, `fields[${i}]`, denv));
    checkLimits(content, env.limits);
    addRevision(label, content, now, who, false, env.limits.maxDraftRevisions);
    slice(s).labels.push(label);
    return present(label, latest(label), { view: 'LABEL_VIEW_FULL', who, adminAccess });
  });
  return reply.ok(out);
}

export async function listLabels(req: MockRequest, env: Env): Promise<MockReply> {
  const who = caller(req);
  const adminAccess = adminQuery(req);
  assertAdminAccess(who, adminAccess, false);
  const view = viewOf(req.query.get('view')) ?? 'LABEL_VIEW_BASIC';
  languageParam(req.query.get('languageCode'));
  const publishedOnly = boolParam(req.query.get('publishedOnly'), 'publishedOnly') ?? false;
  const minimumRole = enumParam(req.query.get('minimumRole'), 'minimumRole', ['LABEL_ROLE_UNSPECIFIED', ...ROLES] as const);
  const customer = req.query.get('customer');
  if (customer && !/^customers\/[A-Za-z0-9_-]+$/.test(customer)) throw invalid(`customer must look like customers/ID (got "${customer}")`);
  const min = roleRank(!minimumRole || minimumRole === 'LABEL_ROLE_UNSPECIFIED' ? 'READER' : minimumRole);
  const key = JSON.stringify([view, publishedOnly, minimumRole ?? '', adminAccess, customer ?? '']);
  const items = await env.ctx.store.read((s) => {
    if (customer && customer !== 'customers/mock') return [];
    const out: Array<Record<string, unknown>> = [];
    for (const label of slice(s).labels) {
      if (!adminAccess && roleRank(roleOf(label, who)) < min) continue;
      const pub = published(label);
      if (publishedOnly) {
        if (!pub) continue;
        out.push(present(label, pub, { view, who, adminAccess, revisionInName: true }));
      } else if (seesDrafts(label, who, adminAccess)) {
        out.push(present(label, latest(label), { view, who, adminAccess }));
      } else if (pub) {
        // readers, appliers and organisers see the published revision; a never-published label is hidden from them
        out.push(present(label, pub, { view, who, adminAccess }));
      }
    }
    return out;
  });
  const { page, next } = paginate(items, req, key);
  return reply.ok({ labels: page, ...(next ? { nextPageToken: next } : {}) });
}

export async function getLabel(req: MockRequest, env: Env, id: string, rev: string | undefined): Promise<MockReply> {
  const who = caller(req);
  const adminAccess = adminQuery(req);
  assertAdminAccess(who, adminAccess, false);
  const view = viewOf(req.query.get('view')) ?? 'LABEL_VIEW_BASIC';
  languageParam(req.query.get('languageCode'));
  return reply.ok(
    await env.ctx.store.read((s) => {
      const label = visibleLabel(s, id, who, adminAccess);
      return present(label, visibleRevision(label, rev, who, adminAccess), { view, who, adminAccess, revisionInName: rev !== undefined });
    }),
  );
}

export async function deleteLabel(req: MockRequest, env: Env, id: string, rev: string | undefined): Promise<MockReply> {
  if (rev && rev !== 'latest') throw invalid(`delete takes the label name labels/${id}, not a revision (@${rev})`);
  const who = caller(req);
  const adminAccess = adminQuery(req);
  assertAdminAccess(who, adminAccess, true);
  await env.ctx.store.write((s) => {
    const label = editableLabel(s, id, who, adminAccess);
    assertRevision(label, req.query.get('writeControl.requiredRevisionId') ?? undefined);
    assertNotLocked(label);
    if (label.state === 'PUBLISHED') {
      throw precondition(`labels/${id} is published: disable it before deleting it (only draft or disabled labels can be deleted)`);
    }
    const sl = slice(s);
    sl.labels = sl.labels.filter((l) => l.id !== id);
  });
  return reply.ok({});
}

function enabledApps(v: unknown, where: string): Array<{ app: App }> {
  if (v === undefined || v === null) throw invalid(`${where} is required (an object with enabledApps)`);
  if (typeof v !== 'object' || Array.isArray(v)) throw invalid(`${where} must be an object (with enabledApps)`);
  const list = (v as Record<string, unknown>).enabledApps ?? [];
  if (!Array.isArray(list)) throw invalid(`${where}.enabledApps must be a list`);
  const seen = new Set<string>();
  return list.map((a, i) => {
    const app = enumParam((a as Record<string, unknown> | null)?.app, `${where}.enabledApps[${i}].app`, ['APP_UNSPECIFIED', ...APPS] as const);
    if (!app || app === 'APP_UNSPECIFIED') throw invalid(`${where}.enabledApps[${i}].app is required: ${APPS.join(' or ')}`);
    if (seen.has(app)) throw invalid(`${where}.enabledApps lists ${app} twice`);
    seen.add(app);
    return { app };
  });
}

/** POST labels/ID:verb */
export async function labelVerb(req: MockRequest, env: Env, id: string, verb: LabelVerb): Promise<MockReply> {
  const who = caller(req);
  const b = body(req);
  const adminAccess = adminBody(b, req);
  assertAdminAccess(who, adminAccess, true);
  const view = viewOf(b.view);
  languageParam(b.languageCode);
  const wc = b.writeControl;
  if (wc !== undefined && (typeof wc !== 'object' || wc === null || Array.isArray(wc))) throw invalid('writeControl must be an object');
  const required = (wc as Record<string, unknown> | undefined)?.requiredRevisionId;
  const now = env.ctx.now();
  const lim = env.limits;

  const out = await env.ctx.store.write((s) => {
    const label = editableLabel(s, id, who, adminAccess);
    const show = (v: View | undefined) => present(label, latest(label), { view: v, who, adminAccess });
    switch (verb) {
      case 'delta': {
        assertRevision(label, required);
        assertNotLocked(label);
        const requests = asList(b.requests);
        if (requests.length === 0) throw invalid('requests must be a non-empty list of update requests');
        const content = clone(latest(label).content);
        const denv: DeltaEnv = { label, limits: lim, now, who };
        const responses = requests.map((r, i) => applyRequest(content, r, i, denv));
        checkLimits(content, lim);
        addRevision(label, content, now, who, false, lim.maxDraftRevisions);
        return { responses, ...(view ? { updatedLabel: show(view) } : {}) };
      }
      case 'publish': {
        assertRevision(label, required);
        if (label.state === 'DISABLED') throw precondition(`labels/${id} is disabled: enable it before publishing`);
        if (!hasUnpublishedChanges(label)) throw precondition(`labels/${id} has no unpublished changes to publish`);
        const content = clone(latest(label).content);
        checkLimits(content, lim);
        publishContent(content, now, who);
        addRevision(label, content, now, who, true);
        label.state = 'PUBLISHED';
        label.publishTime = iso(now);
        label.publisher = who.person;
        return show('LABEL_VIEW_FULL');
      }
      case 'disable':
      case 'enable': {
        assertRevision(label, required);
        if (verb === 'disable' && label.state !== 'PUBLISHED') {
          throw precondition(
            `labels/${id} is ${label.state}: only a published label can be disabled${label.state === 'UNPUBLISHED_DRAFT' ? ' (publish it, or delete the draft)' : ''}`,
          );
        }
        if (verb === 'enable' && label.state !== 'DISABLED') throw precondition(`labels/${id} is ${label.state}: only a disabled label can be enabled`);
        const policy = verb === 'disable' ? parseDisabledPolicy(b.disabledPolicy, 'disabledPolicy') : undefined;
        const draft = hasUnpublishedChanges(label) ? clone(latest(label).content) : undefined;
        addRevision(label, clone(published(label)!.content), now, who, true);
        if (draft) addRevision(label, draft, now, who, false, lim.maxDraftRevisions);
        if (verb === 'disable') {
          label.state = 'DISABLED';
          label.disabledPolicy = policy;
          label.disableTime = iso(now);
          label.disabler = who.person;
        } else {
          label.state = 'PUBLISHED';
          delete label.disabledPolicy;
          delete label.disableTime;
          delete label.disabler;
        }
        return show('LABEL_VIEW_FULL');
      }
      case 'updateLabelCopyMode': {
        const mode = enumParam(b.copyMode, 'copyMode', ['COPY_MODE_UNSPECIFIED', ...COPY_MODES] as const);
        if (!mode || mode === 'COPY_MODE_UNSPECIFIED') throw invalid(`copyMode is required: one of ${COPY_MODES.join(', ')}`);
        label.copyMode = mode;
        return show(view);
      }
      case 'updateLabelEnabledAppSettings': {
        label.enabledApps = enabledApps(b.enabledAppSettings, 'enabledAppSettings');
        return show(view);
      }
    }
  });
  return reply.ok(out);
}

export async function listLocks(req: MockRequest, env: Env, id: string, rev: string | undefined): Promise<MockReply> {
  const who = caller(req);
  const items = await env.ctx.store.read((s) => {
    const adminAccess = adminQuery(req);
    const label = visibleLabel(s, id, who, adminAccess);
    const parent = rev ? `labels/${id}/revisions/${visibleRevision(label, rev, who, adminAccess).revisionId}` : `labels/${id}`;
    const editor = roleOf(label, who) === 'EDITOR';
    return label.locks.map((l) => ({
      name: `${parent}/locks/${l.id}`,
      ...(l.fieldId ? { fieldId: l.fieldId } : {}),
      ...(l.choiceId ? { choiceId: l.choiceId } : {}),
      state: l.state,
      createTime: l.createTime,
      ...(l.creator ? { creator: { person: l.creator } } : {}),
      capabilities: { canViewPolicy: editor },
    }));
  });
  // locks page by 100 by default (discovery: "Default: 100. Max: 200")
  const { page, next } = paginate(items, req, `locks:${id}:${rev ?? ''}`, 100);
  return reply.ok({ labelLocks: page, ...(next ? { nextPageToken: next } : {}) });
}

export function getLimits(req: MockRequest, env: Env): Promise<MockReply> {
  return promised(() => {
    const name = req.query.get('name');
    if (name && name !== 'limits/label') throw invalid(`name must be "limits/label" (got "${name}")`);
    return reply.ok(clone(env.limits));
  });
}

type KnownUser = Pick<MockUser, 'sub' | 'email'>;

function isKnownUser(v: unknown): v is KnownUser {
  const u = asObject(v);
  return typeof u.sub === 'string' && typeof u.email === 'string';
}

/** The authorization server's users (its seeded ones when it runs elsewhere), as far as this service needs them. */
function knownUsers(s: MockSlices): KnownUser[] {
  return asList(sliceField(s, 'oauth', 'users') ?? seedUsers()).filter(isKnownUser);
}

/**
 * `users/{user}/capabilities`: `me`, or any user the mock knows (by numeric id or email). The caller's
 * own capabilities follow from its token's scopes; another user's are a signed-in user's defaults (they
 * have no token here): the label manager and shared labels, no administration. An unknown user is 404.
 */
export async function getCapabilities(req: MockRequest, user: string, env: Env): Promise<MockReply> {
  const customer = req.query.get('customer');
  if (customer && !/^customers\/[A-Za-z0-9_-]+$/.test(customer)) throw invalid(`customer must look like customers/ID (got "${customer}")`);
  const who = caller(req);
  // the authorization server's users, and the caller itself
  const people = await env.ctx.store.read((s) => knownUsers(s).concat({ sub: who.token.sub, email: who.email }));
  const known = user === 'me' ? undefined : people.find((u) => u.sub === user || u.email.toLowerCase() === user.toLowerCase());
  if (user !== 'me' && !known) throw notFound(`users/${user} is not a known user (give "me", a user's numeric id or email)`);
  const self = user === 'me' || known!.sub === who.token.sub;
  return reply.ok({
    name: `users/${user}/capabilities`,
    canAccessLabelManager: true,
    canAdministrateLabels: self ? who.admin : false,
    canCreateSharedLabels: self ? who.canWrite : true,
    canCreateAdminLabels: self ? who.adminWrite : false,
  });
}
