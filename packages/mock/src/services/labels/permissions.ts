import { reply, type MockReply, type MockRequest } from '../../http.js';
import { ROLES, body, boolParam, caller, enumParam, invalid, notFound, paginate, type StoredLabel, type StoredPermission } from './common.js';
import { assertAdminAccess, editableLabel, visibleLabel, visibleRevision } from './model.js';
import type { Env } from './labels.js';
import type { MockSlices } from '../../store.js';
import { asList } from '@opsctl/shared/json.js';
import { itemAt } from '../../arrays.js';

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
const AUDIENCE = /^audiences\/[A-Za-z0-9_-]+$/;

function parentName(id: string, rev: string | undefined): string {
  return rev ? `labels/${id}/revisions/${rev}` : `labels/${id}`;
}

function show(parent: string, p: StoredPermission): Record<string, unknown> {
  return { name: `${parent}/permissions/${p.id}`, role: p.role, ...(p.email ? { email: p.email } : {}), ...(p.audience ? { audience: p.audience } : {}) };
}

/** The label behind a permissions parent; a revision parent must name an existing revision. */
function parentLabel(
  s: MockSlices,
  id: string,
  rev: string | undefined,
  req: MockRequest,
  adminAccess: boolean,
  write: boolean,
): { label: StoredLabel; parent: string } {
  const who = caller(req);
  const label = write ? editableLabel(s, id, who, adminAccess) : visibleLabel(s, id, who, adminAccess);
  const revisionId = rev ? visibleRevision(label, rev, who, adminAccess).revisionId : undefined;
  return { label, parent: parentName(id, revisionId) };
}

/**
 * Creates or updates (upsert by principal) one permission. Users and groups are given by `email`,
 * the organisation's default audience by `audience: audiences/default`. `name` alone updates that permission.
 */
function upsert(label: StoredLabel, parent: string, v: unknown, where: string): StoredPermission {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw invalid(`${where} must be a LabelPermission object`);
  const p = v as Record<string, unknown>;
  const role = enumParam(p.role, `${where}.role`, ['LABEL_ROLE_UNSPECIFIED', ...ROLES] as const);
  if (!role || role === 'LABEL_ROLE_UNSPECIFIED') throw invalid(`${where}.role is required: one of ${ROLES.join(', ')}`);
  if (p.group !== undefined || p.person !== undefined) {
    throw invalid(`${where}: user and group permissions are given by email, not by ${p.group !== undefined ? 'group' : 'person'}`);
  }
  const principals = (['email', 'audience'] as const).filter((k) => p[k] !== undefined && p[k] !== '');
  if (principals.length > 1) throw invalid(`${where}: give either email or audience, not both`);
  if (principals.length === 0) {
    if (typeof p.name === 'string' && p.name) {
      const pid = p.name.startsWith(`${parent}/permissions/`) ? p.name.slice(`${parent}/permissions/`.length) : undefined;
      const found = label.permissions.find((x) => x.id === pid);
      if (!found) throw notFound(`${where}.name: no permission ${p.name}`);
      found.role = role;
      return found;
    }
    throw invalid(`${where} needs a principal: email (a user or group) or audience (e.g. audiences/default)`);
  }
  let key: { email?: string; audience?: string };
  if (principals[0] === 'email') {
    if (typeof p.email !== 'string' || !EMAIL.test(p.email)) throw invalid(`${where}.email "${String(p.email)}" is not an email address`);
    key = { email: p.email.toLowerCase() };
  } else {
    if (typeof p.audience !== 'string' || !AUDIENCE.test(p.audience)) throw invalid(`${where}.audience must look like audiences/ID (e.g. audiences/default)`);
    key = { audience: p.audience };
  }
  const existing = label.permissions.find((x) => (key.email ? x.email === key.email : x.audience === key.audience));
  if (existing) {
    existing.role = role;
    return existing;
  }
  label.permSeq += 1;
  const created: StoredPermission = { id: String(label.permSeq), role, ...key };
  label.permissions.push(created);
  return created;
}

function adminAccessOf(req: MockRequest, b?: Record<string, unknown>): boolean {
  return boolParam(b?.useAdminAccess, 'useAdminAccess') ?? boolParam(req.query.get('useAdminAccess'), 'useAdminAccess') ?? false;
}

export async function listPermissions(req: MockRequest, env: Env, id: string, rev?: string): Promise<MockReply> {
  const adminAccess = adminAccessOf(req);
  assertAdminAccess(caller(req), adminAccess, false);
  const items = await env.ctx.store.read((s) => {
    const { label, parent } = parentLabel(s, id, rev, req, adminAccess, false);
    return label.permissions.map((p) => show(parent, p));
  });
  const { page, next } = paginate(items, req, `perms:${id}:${rev ?? ''}`);
  return reply.ok({ labelPermissions: page, ...(next ? { nextPageToken: next } : {}) });
}

/** POST (create) and PATCH (update) are both upserts by principal. */
export async function upsertPermission(req: MockRequest, env: Env, id: string, rev?: string): Promise<MockReply> {
  const adminAccess = adminAccessOf(req);
  assertAdminAccess(caller(req), adminAccess, true);
  const b = body(req);
  return reply.ok(
    await env.ctx.store.write((s) => {
      const { label, parent } = parentLabel(s, id, rev, req, adminAccess, true);
      return show(parent, upsert(label, parent, b, 'labelPermission'));
    }),
  );
}

export async function deletePermission(req: MockRequest, env: Env, id: string, rev: string | undefined, permissionId: string): Promise<MockReply> {
  const adminAccess = adminAccessOf(req);
  assertAdminAccess(caller(req), adminAccess, true);
  await env.ctx.store.write((s) => {
    const { label, parent } = parentLabel(s, id, rev, req, adminAccess, true);
    if (!label.permissions.some((p) => p.id === permissionId)) throw notFound(`no permission ${parent}/permissions/${permissionId}`);
    label.permissions = label.permissions.filter((p) => p.id !== permissionId);
  });
  return reply.ok({});
}

function requestsOf(b: Record<string, unknown>): unknown[] {
  const requests = asList(b.requests);
  if (requests.length === 0) throw invalid('requests must be a non-empty list');
  return requests;
}

function sameParent(given: unknown, parent: string, id: string, where: string): void {
  if (given === undefined || given === '') return;
  const ok = given === parent || given === `labels/${id}` || given === `labels/${id}@latest`;
  if (!ok) throw invalid(`${where}.parent ${JSON.stringify(given)} does not match the request's parent ${parent}`);
}

/** :batchUpdate: every request is an upsert under the same parent; all or nothing. */
export async function batchUpdate(req: MockRequest, env: Env, id: string, rev?: string): Promise<MockReply> {
  const b = body(req);
  const adminAccess = adminAccessOf(req, b);
  assertAdminAccess(caller(req), adminAccess, true);
  const requests = requestsOf(b);
  return reply.ok(
    await env.ctx.store.write((s) => {
      const { label, parent } = parentLabel(s, id, rev, req, adminAccess, true);
      const out = requests.map((r, i) => {
        const where = `requests[${i}]`;
        if (!r || typeof r !== 'object') throw invalid(`${where} must be an object`);
        const q = r as Record<string, unknown>;
        sameParent(q.parent, parent, id, where);
        boolParam(q.useAdminAccess, `${where}.useAdminAccess`);
        if (q.labelPermission === undefined) throw invalid(`${where}.labelPermission is required`);
        return upsert(label, parent, q.labelPermission, `${where}.labelPermission`);
      });
      return { permissions: out.map((p) => show(parent, p)) };
    }),
  );
}

/** :batchDelete: every name must be a permission of the parent; all or nothing. */
export async function batchDelete(req: MockRequest, env: Env, id: string, rev?: string): Promise<MockReply> {
  const b = body(req);
  const adminAccess = adminAccessOf(req, b);
  assertAdminAccess(caller(req), adminAccess, true);
  const requests = requestsOf(b);
  await env.ctx.store.write((s) => {
    const { label, parent } = parentLabel(s, id, rev, req, adminAccess, true);
    const drop = new Set<string>();
    requests.forEach((r, i) => {
      const where = `requests[${i}]`;
      const name = (r as Record<string, unknown> | null)?.name;
      if (typeof name !== 'string' || !name) throw invalid(`${where}.name is required`);
      const m = /^labels\/([^/@]+)(?:\/revisions\/([^/]+))?\/permissions\/([^/]+)$/.exec(name);
      if (!m || m[1] !== id) throw invalid(`${where}.name "${name}" is not a permission of ${parent}`);
      const permissionId = itemAt(m, 3);
      if (!label.permissions.some((p) => p.id === permissionId)) throw notFound(`${where}.name: no permission ${name}`);
      drop.add(permissionId);
    });
    label.permissions = label.permissions.filter((p) => !drop.has(p.id));
  });
  return reply.ok({});
}
