/**
 * The mock's developer-console API, under /oauth2/mock/ (not part of the OAuth API): clients of every
 * seed type, the integrity check of mobile B clients and its metrics, ownership verification, deletion
 * and the automatic deletion of unused clients, and security-event receivers and events.
 * JSON in, JSON out, OAuth error shape; every client mistake is a 4xx naming the field.
 */

import { randomBytes } from 'node:crypto';
import { MockError, pathParam, type MockReply, type MockRequest } from '../../http.js';
import { emptyDict, own } from '@opsctl/shared/lookup.js';
import type { Route, ServiceContext } from '../../service.js';
import type { MockState } from '../../store.js';
import { issuer, users } from './common.js';
import {
  afterRestore,
  allClients,
  clientView,
  findClient,
  newClientId,
  newClientSecret,
  OWNERSHIP_FIELDS,
  storeListings,
  sweepUnused,
  verifyOwnership,
  type ConsoleClient,
} from './console.js';
import { consoleOptions, ensureSigningKey, sweepIfDue, unusedDays } from './console-core.js';
import { checkClientFields, EVENT_KINDS, INTEGRITY_ACTIONS, type ClientType, type EventKind, type IntegrityAction } from './console-schema.js';
import { Deliverer } from './delivery.js';
import { deliveryView, enqueueEvent, secEvents, type Delivery, type Receiver } from './events.js';
import { configuredMode, DEFAULT_INTEGRITY_DELAY_SECONDS, emptyMetrics, integrityTransition, integrityView, mintIntegrityToken } from './integrity.js';
import type { MockUser } from './registry.js';
import { oauth, revokeGrant, storedField } from './tokens.js';
import { clone } from '../../tx.js';

export const ADMIN_PREFIX = '/oauth2/mock';
const MAX_ADMIN_BODY = 64 * 1024;
const MAX_RECEIVERS = 100;

const bad = (field: string, message: string, hint?: string) =>
  new MockError(400, 'invalid_request', `${field}: ${message}${hint ? ` (${hint})` : ''}`, { field });
const conflict = (field: string, message: string) => new MockError(409, 'failed_precondition', `${field}: ${message}`, { field });
const notFound = (what: string) => new MockError(404, 'not_found', what);

/** The JSON object body of an admin request (size-limited; `{}` when empty). */
function jsonBody(req: MockRequest): Record<string, unknown> {
  if (req.rawBody.length > MAX_ADMIN_BODY) throw new MockError(413, 'invalid_request', `the request body is larger than ${MAX_ADMIN_BODY} bytes`);
  if (req.rawBody.length === 0) return {};
  if (!req.contentType.includes('json')) throw new MockError(415, 'invalid_request', 'send the body as Content-Type: application/json');
  const b = req.body;
  if (typeof b !== 'object' || b === null || Array.isArray(b)) throw bad('body', 'must be a JSON object');
  return b as Record<string, unknown>;
}

function stringField(body: Record<string, unknown>, field: string, required: true): string;
function stringField(body: Record<string, unknown>, field: string, required?: false): string | undefined;
function stringField(body: Record<string, unknown>, field: string, required = false): string | undefined {
  const v = own(body, field);
  if (v === undefined || v === null) {
    if (required) throw bad(field, 'is required');
    return undefined;
  }
  if (typeof v !== 'string' || !v.trim() || v.length > 2048) throw bad(field, 'must be a non-empty string (at most 2048 characters)');
  return v;
}

function liveClient(s: MockState, id: string): ConsoleClient {
  const c = findClient(s, id);
  if (!c) throw notFound(`The OAuth client ${id} does not exist.`);
  if (c.deleted_at !== undefined)
    throw conflict('client_id', `${id} is deleted: restore it first (POST ${ADMIN_PREFIX}/clients/${id}/restore, within 30 days)`);
  return c;
}

function findUser(s: MockState, who: string): MockUser {
  const w = who.toLowerCase();
  const u = users(s).find((x) => x.sub === who || x.email.toLowerCase() === w);
  if (!u) throw new MockError(404, 'not_found', `user: no account ${who}`, { field: 'user' });
  return u;
}

export interface AdminRoutes {
  routes: Route[];
  deliverer: Deliverer;
}

export function adminRoutes(ctx: ServiceContext): AdminRoutes {
  const opts = consoleOptions(ctx);
  const delayMs = Math.max(0, (opts.integrityDelaySeconds ?? DEFAULT_INTEGRITY_DELAY_SECONDS) * 1000);
  const deliverer = new Deliverer(ctx.store, () => ctx.now(), opts.events);
  const routes = [...clientRoutes(ctx, delayMs), ...checkRoutes(ctx, delayMs), ...storeRoutes(ctx), ...eventRoutes(ctx, deliverer)];
  return { routes, deliverer };
}

/** A write on one live client, answered with its view. */
async function onClient(ctx: ServiceContext, id: string, fn: (s: MockState, c: ConsoleClient, now: number) => void): Promise<MockReply> {
  const now = ctx.now();
  const view = await ctx.store.write((s) => {
    const c = liveClient(s, id);
    fn(s, c, now);
    return clientView(c, now);
  });
  return { status: 200, json: view };
}

/** The clients: list, create, get, change, delete. */
function clientRoutes(ctx: ServiceContext, delayMs: number): Route[] {
  const P = ADMIN_PREFIX;
  return [
    {
      method: 'GET',
      path: `${P}/clients`,
      handler: async () => {
        await sweepIfDue(ctx);
        const now = ctx.now();
        return { status: 200, json: { clients: await ctx.store.read((s) => allClients(s).map((c) => clientView(c, now))) } };
      },
    },
    {
      method: 'POST',
      path: `${P}/clients`,
      handler: (req) => createClient(ctx, req, delayMs),
    },
    {
      method: 'GET',
      path: `${P}/clients/:client_id`,
      handler: async (req) => {
        const id = pathParam(req, 'client_id');
        await sweepIfDue(ctx);
        const now = ctx.now();
        const view = await ctx.store.read((s) => {
          const c = findClient(s, id);
          return c && clientView(c, now);
        });
        if (!view) throw notFound(`The OAuth client ${id} does not exist.`);
        return { status: 200, json: view };
      },
    },
    {
      method: 'PATCH',
      path: `${P}/clients/:client_id`,
      handler: async (req) => {
        const body = jsonBody(req);
        const id = pathParam(req, 'client_id');
        return onClient(ctx, id, (_s, c) => updateClient(c, id, body));
      },
    },
    {
      method: 'DELETE',
      path: `${P}/clients/:client_id`,
      handler: async (req) => {
        const id = pathParam(req, 'client_id');
        return onClient(ctx, id, (_s, c, now) => {
          c.deleted_at = now;
          c.deleted_by = 'manual';
        });
      },
    },
  ];
}

/** POST /clients: a client of one of the seed types; its secret is in this answer only. */
async function createClient(ctx: ServiceContext, req: MockRequest, delayMs: number): Promise<MockReply> {
  const checked = checkClientFields(jsonBody(req), 'create');
  if (!checked.ok) throw bad(checked.field, checked.message, checked.hint);
  const { integrity, ...fields } = checked.value as Record<string, unknown> & { integrity?: boolean; type?: never };
  const type = (req.body as { type: ClientType }).type;
  const now = ctx.now();
  const created = await ctx.store.write((s) => {
    const id = (fields.client_id as string | undefined) ?? newClientId();
    if (findClient(s, id)) throw conflict('client_id', `${id} already exists`);
    const secret = newClientSecret(type);
    const c: ConsoleClient = { ...(fields as object), client_id: id, type, name: fields.name as string, created_at: now };
    if (secret) c.client_secret = secret;
    if (type === 'mobile_a') c.custom_scheme_enabled = Boolean(fields.custom_scheme_enabled);
    if (type === 'mobile_a' || type === 'extension') c.ownership = { state: 'unverified' };
    if (integrity) {
      const t = integrityTransition(c, 'enable', now, delayMs);
      if (!t.ok)
        throw new MockError(t.status, t.status === 400 ? 'invalid_request' : 'failed_precondition', `${t.field}: ${t.message}${t.hint ? ` (${t.hint})` : ''}`, {
          field: t.field,
        });
    }
    (oauth(s).clients ??= emptyDict())[id] = c;
    // The secret is shown once, at creation, as the console does.
    return { ...clientView(c, now), ...(secret ? { client_secret: secret } : {}) };
  });
  return { status: 201, json: created };
}

/** PATCH /clients/:id: the changed fields, checked against the client's type and the integrity check's rules. */
function updateClient(c: ConsoleClient, id: string, body: Record<string, unknown>): void {
  const P = ADMIN_PREFIX;
  const checked = checkClientFields(body, 'update', c.type);
  if (!checked.ok) throw bad(checked.field, checked.message, checked.hint);
  const v = checked.value;
  if ('integrity' in v) throw bad('integrity', `is switched with POST ${P}/clients/${id}/integrity {"action": "enable|enforce|unenforce|disable"}`);
  if ('bundle_id' in v && v.bundle_id !== c.bundle_id && c.integrity?.used) {
    throw conflict('bundle_id', 'cannot be changed once the integrity check has been used; create a new client for another app');
  }
  if ('team_id' in v && v.team_id === null && configuredMode(c.integrity) !== 'disabled') {
    throw conflict('team_id', 'is required while the integrity check is enabled; disable the check first');
  }
  let voids = false;
  const target = c as unknown as Record<string, unknown>;
  for (const [k, val] of Object.entries(v)) {
    if (OWNERSHIP_FIELDS.has(k) && val !== target[k]) voids = true;
    if (val === null) delete target[k];
    else target[k] = val;
  }
  if (voids && c.ownership) c.ownership = { state: 'unverified', problem: 'the package name, fingerprint or item ID changed since the last verification' };
}

/** mobile_b's integrity check (switch, metrics, tokens) and the ownership verification of mobile_a and extension clients. */
function checkRoutes(ctx: ServiceContext, delayMs: number): Route[] {
  const P = ADMIN_PREFIX;
  return [
    {
      method: 'POST',
      path: `${P}/clients/:client_id/integrity`,
      handler: async (req) => {
        const action = stringField(jsonBody(req), 'action', true);
        if (!(INTEGRITY_ACTIONS as readonly string[]).includes(action))
          throw bad('action', `"${action}" is not an integrity-check action`, `one of ${INTEGRITY_ACTIONS.join(', ')}`);
        return onClient(ctx, pathParam(req, 'client_id'), (_s, c, now) => {
          if (c.type !== 'mobile_b') throw bad('client_id', `the integrity check is a setting of mobile_b clients; ${c.client_id} is ${c.type}`);
          const t = integrityTransition(c, action as IntegrityAction, now, delayMs);
          if (!t.ok)
            throw new MockError(
              t.status,
              t.status === 400 ? 'invalid_request' : 'failed_precondition',
              `${t.field}: ${t.message}${t.hint ? ` (${t.hint})` : ''}`,
              { field: t.field },
            );
        });
      },
    },
    {
      method: 'GET',
      path: `${P}/clients/:client_id/metrics`,
      handler: async (req) => {
        const id = pathParam(req, 'client_id');
        const now = ctx.now();
        const out = await ctx.store.read((s) => {
          const c = findClient(s, id);
          if (!c) throw notFound(`The OAuth client ${id} does not exist.`);
          if (c.type !== 'mobile_b') throw bad('client_id', `integrity metrics exist for mobile_b clients only; ${c.client_id} is ${c.type}`);
          return { client_id: c.client_id, ...integrityView(c.integrity, now), metrics: c.integrity?.metrics ?? emptyMetrics() };
        });
        return { status: 200, json: out };
      },
    },
    {
      method: 'POST',
      path: `${P}/clients/:client_id/integrity-token`,
      handler: async (req) => {
        await ensureSigningKey(ctx);
        const now = ctx.now();
        const iss = issuer(req);
        const out = await ctx.store.write((s) => {
          const c = liveClient(s, pathParam(req, 'client_id'));
          if (c.type !== 'mobile_b') throw bad('client_id', `integrity tokens are for mobile_b clients; ${c.client_id} is ${c.type}`);
          if (!c.team_id) throw bad('team_id', 'is not set: the attestation service identifies the app by team ID and bundle identifier');
          return mintIntegrityToken(s, c, iss, now);
        });
        return { status: 200, json: out, headers: { 'cache-control': 'no-store' } };
      },
    },
    {
      method: 'POST',
      path: `${P}/clients/:client_id/verify-ownership`,
      handler: async (req) => {
        const account = stringField(jsonBody(req), 'account', true);
        const now = ctx.now();
        const res = await ctx.store.write((s) => {
          const c = liveClient(s, pathParam(req, 'client_id'));
          if (c.type !== 'mobile_a' && c.type !== 'extension')
            throw bad('client_id', `ownership verification is for mobile_a and extension clients; ${c.client_id} is ${c.type}`);
          const { problem, retryAfterS } = verifyOwnership(s, c, account, now, Math.max(0, (consoleOptions(ctx).ownershipDelaySeconds ?? 0) * 1000));
          return { problem, retryAfterS, view: clientView(c, now) };
        });
        // The failed attempt is recorded (the console shows why), so it is answered, not thrown.
        if (res.problem)
          return {
            status: 409,
            ...(res.retryAfterS === undefined ? {} : { headers: { 'retry-after': String(res.retryAfterS) } }),
            json: {
              error: 'failed_precondition',
              error_description: `ownership not verified: ${res.problem}`,
              ...(res.retryAfterS === undefined ? {} : { retry_after: res.retryAfterS }),
              client: res.view,
            },
          };
        return { status: 200, json: res.view };
      },
    },
  ];
}

/** The automatic deletion of unused clients, and the store listings ownership is verified against. */
function storeRoutes(ctx: ServiceContext): Route[] {
  const P = ADMIN_PREFIX;
  return [
    {
      method: 'POST',
      path: `${P}/sweep`,
      handler: async () => {
        const now = ctx.now();
        const days = unusedDays(ctx);
        const deleted = await ctx.store.write((s) => sweepUnused(s, now, days));
        return { status: 200, json: { deleted, unused_client_days: days } };
      },
    },
    {
      method: 'GET',
      path: `${P}/store`,
      handler: async () => ({ status: 200, json: await ctx.store.read((s) => clone(storedField(s, 'store') ?? { apps: [], items: [] })) }),
    },
    {
      method: 'POST',
      path: `${P}/store/apps`,
      handler: async (req) => {
        const body = jsonBody(req);
        const checked = checkClientFields(
          { type: 'mobile_a', name: 'store', package_name: body.package_name, sha1_fingerprint: body.sha1_fingerprint },
          'create',
        );
        if (!checked.ok) throw bad(checked.field, checked.message, checked.hint);
        const admins = body.admins;
        if (!Array.isArray(admins) || admins.length === 0 || admins.some((a) => typeof a !== 'string' || !a.includes('@'))) {
          throw bad('admins', 'must be a non-empty list of e-mail addresses with administrator rights on the app');
        }
        const app = {
          package_name: checked.value.package_name as string,
          sha1_fingerprint: checked.value.sha1_fingerprint as string,
          admins: admins as string[],
          granted_at: ctx.now(),
        };
        await ctx.store.write((s) => {
          const st = storeListings(s);
          st.apps = st.apps.filter((a) => !(a.package_name === app.package_name && a.sha1_fingerprint === app.sha1_fingerprint));
          st.apps.push(app);
        });
        return { status: 201, json: app };
      },
    },
    {
      method: 'POST',
      path: `${P}/store/items`,
      handler: async (req) => {
        const body = jsonBody(req);
        const checked = checkClientFields({ type: 'extension', name: 'store', item_id: body.item_id }, 'create');
        if (!checked.ok) throw bad(checked.field, checked.message, checked.hint);
        const publisher = stringField(body, 'publisher', true);
        if (!publisher.includes('@')) throw bad('publisher', "must be the publisher's e-mail address");
        const item = { item_id: checked.value.item_id as string, publisher, granted_at: ctx.now() };
        await ctx.store.write((s) => {
          const st = storeListings(s);
          st.items = st.items.filter((i) => i.item_id !== item.item_id);
          st.items.push(item);
        });
        return { status: 201, json: item };
      },
    },
  ];
}

function eventRoutes(ctx: ServiceContext, deliverer: Deliverer): Route[] {
  const P = `${ADMIN_PREFIX}/events`;
  return [
    {
      method: 'GET',
      path: `${P}/receivers`,
      // a read makes nothing: no receivers yet is an empty list, not a slice filled in memory only
      handler: async () => ({ status: 200, json: { receivers: await ctx.store.read((s) => clone(storedField(s, 'secevents')?.receivers ?? [])) } }),
    },
    {
      method: 'POST',
      path: `${P}/receivers`,
      handler: (req) => addReceiver(ctx, req),
    },
    {
      method: 'DELETE',
      path: `${P}/receivers/:id`,
      handler: async (req) => {
        const id = req.params.id;
        const dropped = await ctx.store.write((s) => {
          // an unknown receiver changes nothing (not even a filled-in slice): the 404 leaves no trace in the journal
          if (!storedField(s, 'secevents')?.receivers.some((r) => r.id === id)) return 0;
          const ev = secEvents(s);
          ev.receivers = ev.receivers.filter((r) => r.id !== id);
          // Nothing more goes to it: its pending SETs are dropped with it (and counted).
          const pending = ev.deliveries.filter((d) => d.receiver_id === id && d.status === 'pending').length;
          ev.deliveries = ev.deliveries.filter((d) => !(d.receiver_id === id && d.status === 'pending'));
          return pending + 1;
        });
        if (!dropped) throw notFound(`no receiver ${id}`);
        return { status: 200, json: { id, removed: true, pending_dropped: dropped - 1 } };
      },
    },
    {
      method: 'GET',
      path: P,
      handler: async (req) => {
        const status = req.query.get('status');
        if (status && !['pending', 'delivered', 'rejected'].includes(status))
          throw bad('status', `"${status}" is not a delivery status`, 'pending, delivered or rejected');
        const withSet = req.query.get('set') === 'true';
        const list = await ctx.store.read((s) =>
          secEvents(s)
            .deliveries.filter((d) => !status || d.status === status)
            .map((d) => deliveryView(d, withSet)),
        );
        return { status: 200, json: { events: list } };
      },
    },
    {
      method: 'POST',
      path: P,
      handler: (req) => triggerEvent(ctx, deliverer, req),
    },
    {
      method: 'POST',
      path: `${P}/deliver`,
      handler: async () => {
        await deliverer.runNow('all');
        const counts = await ctx.store.read((s) => {
          const c = { pending: 0, delivered: 0, rejected: 0 };
          for (const d of secEvents(s).deliveries) c[d.status]++;
          return c;
        });
        return { status: 200, json: counts };
      },
    },
  ];
}

/** POST /events/receivers: where the security events for one client go (at most 100 receivers). */
async function addReceiver(ctx: ServiceContext, req: MockRequest): Promise<MockReply> {
  const body = jsonBody(req);
  const url = stringField(body, 'url', true);
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw bad('url', `"${url}" is not a URL`, 'e.g. https://app.example.com/secevents');
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw bad('url', `${u.protocol} is not http: or https:`);
  if (u.username || u.password) throw bad('url', 'must not carry credentials (user:password@): they would show in every event listing');
  const clientId = stringField(body, 'client_id', true);
  let events: EventKind[] = [...EVENT_KINDS];
  if (body.events !== undefined) {
    if (!Array.isArray(body.events) || body.events.length === 0) throw bad('events', 'must be a non-empty list of event kinds', EVENT_KINDS.join(', '));
    const unknown = body.events.filter((e) => !(EVENT_KINDS as readonly unknown[]).includes(e));
    if (unknown.length) throw bad('events', `unknown event kind ${String(unknown[0])}`, `one of ${EVENT_KINDS.join(', ')}`);
    events = [...new Set(body.events as EventKind[])];
  }
  const now = ctx.now();
  const r = await ctx.store.write((s) => {
    if (!findClient(s, clientId)) throw new MockError(404, 'not_found', `client_id: the OAuth client ${clientId} does not exist`, { field: 'client_id' });
    if (secEvents(s).receivers.length >= MAX_RECEIVERS) throw conflict('url', `the mock keeps at most ${MAX_RECEIVERS} receivers; remove one first`);
    const rec: Receiver = { id: `rcv_${randomBytes(6).toString('hex')}`, url: u.toString(), client_id: clientId, events, created_at: now };
    secEvents(s).receivers.push(rec);
    return rec;
  });
  return { status: 201, json: r };
}

/** POST /events: a security event for a user (its state changed as the event says), with its first delivery attempt to each receiver made before the answer. */
async function triggerEvent(ctx: ServiceContext, deliverer: Deliverer, req: MockRequest): Promise<MockReply> {
  const body = jsonBody(req);
  const kind = stringField(body, 'event', true);
  if (!(EVENT_KINDS as readonly string[]).includes(kind)) throw bad('event', `"${kind}" is not an event kind`, `one of ${EVENT_KINDS.join(', ')}`);
  const who = stringField(body, 'user', true);
  const clientId = stringField(body, 'client_id');
  const reason = stringField(body, 'reason');
  if (reason !== undefined && (kind !== 'account-disabled' || !['hijacking', 'bulk-account'].includes(reason))) {
    throw bad('reason', kind === 'account-disabled' ? `"${reason}" is not a reason` : `is only for account-disabled`, 'hijacking or bulk-account');
  }
  if (kind === 'token-revoked' && !clientId) throw bad('client_id', 'is required for token-revoked: whose refresh tokens the user revokes');
  await ensureSigningKey(ctx);
  const now = ctx.now();
  const iss = issuer(req);
  const created = await ctx.store.write((s) => {
    const made = enqueueFor(s, { kind: kind as EventKind, who, clientId, reason, iss, now });
    for (const d of made) deliverer.lease(d, now);
    return made.map((d) => clone(d));
  });
  // The first attempt happens now (leased in the write above), so the answer shows how it went.
  const sent = await deliverer.deliverLeased(created);
  const byJti = new Map(sent.map((d) => [d.jti, d]));
  return { status: 201, json: { event: kind, user: who, events: created.map((d) => deliveryView(byJti.get(d.jti) ?? d)) } };
}

/** Changes the user's state as the event says and queues its SETs (one per receiver that wants it). */
function enqueueFor(s: MockState, e: { kind: EventKind; who: string; clientId?: string; reason?: string; iss: string; now: number }): Delivery[] {
  const { kind, who, clientId, reason, iss, now } = e;
  const user = findUser(s, who);
  const subject = { sub: user.sub, email: user.email, reason };
  switch (kind) {
    case 'token-revoked': {
      if (!findClient(s, clientId as string))
        throw new MockError(404, 'not_found', `client_id: the OAuth client ${clientId} does not exist`, { field: 'client_id' });
      const live = Object.values(oauth(s).refreshTokens).filter((r) => r.sub === user.sub && r.client_id === clientId && !r.revoked);
      if (!live.length) throw conflict('client_id', `${user.email} has no live refresh token for ${clientId}: nothing to revoke`);
      return live.flatMap((r) => {
        revokeGrant(s, r.token);
        return enqueueEvent(s, 'token-revoked', { ...subject, token: r.token }, iss, now, r.client_id);
      });
    }
    case 'account-disabled':
      if (user.disabled) throw conflict('user', `${user.email} is already disabled`);
      user.disabled = true;
      return enqueueEvent(s, 'account-disabled', subject, iss, now);
    case 'account-enabled':
      if (!user.disabled) throw conflict('user', `${user.email} is not disabled`);
      user.disabled = false;
      return enqueueEvent(s, 'account-enabled', subject, iss, now);
    default:
      return enqueueEvent(s, 'sessions-revoked', subject, iss, now);
  }
}

export { afterRestore };
