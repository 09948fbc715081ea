import { randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { escapeHtml, htmlPage } from '@opsctl/shared/html.js';
import type { MockReply, MockRequest } from '../../http.js';
import { dict, hasOwn, own, type Dict } from '@opsctl/shared/lookup.js';
import type { Route, ServiceContext } from '../../service.js';
import type { MockState } from '../../store.js';
import { clients, formParams, issuer, oauthError, users } from './common.js';
import { clientUsable, KNOWN_SCOPES, type MockUser } from './registry.js';
import { oauth } from './tokens.js';

/**
 * The device authorization grant (RFC 8628), an extension of the mock authorization server (the seed
 * leaves devices out of scope): `POST /device/code` starts it, a person approves or denies the user code
 * on the verification page `/device`, and the token endpoint answers the device's polls
 * (`authorization_pending`, `slow_down`, `expired_token`, `access_denied`, then the tokens, once).
 */
export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
export const DEVICE_CODE_PATH = '/device/code';
export const VERIFICATION_PATH = '/device';
/** RFC 8628 §6.1: no vowels (no words), no look-alikes; shown as XXXX-XXXX. */
const USER_CODE_CHARS = 'BCDFGHJKLMNPQRSTVWXZ';
const PUBLIC_TYPES = new Set(['mobile_a', 'mobile_b', 'extension']);

/** The mock's device knobs (`createMockServer({options: {oauth: …}})`, `mock serve --device-interval/--device-slow-down`). */
interface DeviceOptions {
  /** The polling interval the server asks for (default 5 s, RFC 8628 §3.2). */
  deviceIntervalSeconds?: number;
  /** How long a device code lives (default 600 s). */
  deviceCodeTtlSeconds?: number;
  /** Answer `slow_down` to the first N polls of each device code, as a loaded server does (default 0). */
  deviceSlowDown?: number;
}

interface DeviceRecord {
  device_code: string;
  user_code: string;
  client_id: string;
  scopes: string[];
  expires_at: number;
  interval: number;
  /** Epoch ms of the last poll (slow_down when the next comes sooner than the interval). */
  last_poll?: number;
  polls: number;
  status: 'pending' | 'approved' | 'denied' | 'used';
  sub?: string;
  email?: string;
}

function devices(s: MockState): Dict<DeviceRecord> {
  const slice = oauth(s) as ReturnType<typeof oauth> & { devices?: Dict<DeviceRecord> };
  return dict((slice.devices ??= {}));
}

function deviceOptions(ctx: ServiceContext): DeviceOptions {
  return ctx.options.oauth ?? {};
}

function userCode(): string {
  let code = '';
  for (let i = 0; i < 8; i++) code += USER_CODE_CHARS[randomInt(USER_CODE_CHARS.length)];
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/** What a person types: case, spaces and dashes do not matter (RFC 8628 §6.1). */
function normalise(code: string): string {
  const bare = code.toUpperCase().replace(/[^A-Z]/g, '');
  return bare.length === 8 ? `${bare.slice(0, 4)}-${bare.slice(4)}` : bare;
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

export function deviceRoutes(ctx: ServiceContext): Route[] {
  return [
    { method: 'POST', path: DEVICE_CODE_PATH, handler: (req) => deviceCode(ctx, req) },
    { method: 'GET', path: VERIFICATION_PATH, handler: (req) => verificationPage(ctx, req) },
    { method: 'POST', path: VERIFICATION_PATH, handler: (req) => decide(ctx, req) },
  ];
}

/** RFC 8628 §3.1–3.2: the device authorization request and response. */
async function deviceCode(ctx: ServiceContext, req: MockRequest): Promise<MockReply> {
  if (!req.contentType.includes('application/x-www-form-urlencoded')) {
    throw oauthError(400, 'invalid_request', 'the device authorization endpoint takes Content-Type: application/x-www-form-urlencoded');
  }
  const form = formParams(req);
  const clientId = form.get('client_id');
  if (!clientId) throw oauthError(400, 'invalid_request', 'Missing required parameter: client_id');
  const scopes = [...new Set((form.get('scope') ?? '').split(/\s+/).filter(Boolean))];
  if (!scopes.length) throw oauthError(400, 'invalid_scope', 'Missing required parameter: scope');
  const unknown = scopes.filter((s) => !hasOwn(KNOWN_SCOPES, s));
  if (unknown.length) throw oauthError(400, 'invalid_scope', `Some requested scopes were invalid: ${unknown.join(' ')}`);
  const now = ctx.now();
  const opts = deviceOptions(ctx);
  const record = await ctx.store.write((s) => {
    const client = own(clients(s), clientId);
    if (!client) throw oauthError(401, 'invalid_client', 'The OAuth client was not found.');
    const usable = clientUsable(client, now);
    if (!usable.ok) throw oauthError(401, 'deleted_client', usable.description);
    const secret = form.get('client_secret');
    if (!PUBLIC_TYPES.has(client.type) && client.client_secret && secret !== null && !sameSecret(secret, client.client_secret)) {
      throw oauthError(401, 'invalid_client', 'Unauthorized: the client secret is wrong.');
    }
    const all = devices(s);
    for (const [k, d] of Object.entries(all)) if (d.expires_at < now - 3_600_000) delete all[k];
    const r: DeviceRecord = {
      device_code: randomBytes(32).toString('base64url'),
      user_code: userCode(),
      client_id: clientId,
      scopes,
      expires_at: now + (opts.deviceCodeTtlSeconds ?? 600) * 1000,
      interval: opts.deviceIntervalSeconds ?? 5,
      polls: 0,
      status: 'pending',
    };
    all[r.device_code] = r;
    return r;
  });
  const iss = issuer(req);
  return {
    status: 200,
    json: {
      device_code: record.device_code,
      user_code: record.user_code,
      verification_uri: `${iss}${VERIFICATION_PATH}`,
      verification_uri_complete: `${iss}${VERIFICATION_PATH}?user_code=${encodeURIComponent(record.user_code)}`,
      expires_in: Math.round((record.expires_at - now) / 1000),
      interval: record.interval,
    },
    headers: NO_STORE,
  };
}

function page(status: number, title: string, body: string): MockReply {
  return { status, html: htmlPage(title, body), headers: { 'cache-control': 'no-store', 'x-frame-options': 'DENY' } };
}

function codeForm(list: MockUser[], code: string, problem?: string): MockReply {
  const accounts = list
    .map(
      (u, i) =>
        `<label><input type="radio" name="login" value="${escapeHtml(u.email)}" id="user-${escapeHtml(u.sub)}"${i === 0 ? ' checked' : ''}> ${escapeHtml(u.name)} &lt;${escapeHtml(u.email)}&gt;</label>`,
    )
    .join('\n');
  return page(
    problem ? 400 : 200,
    'Connect a device',
    `<h1>Connect a device</h1>
${problem ? `<p class="err" id="problem">${escapeHtml(problem)}</p>` : '<p>Enter the code shown on your device.</p>'}
<form method="POST" action="${VERIFICATION_PATH}" id="device">
<label>Code <input type="text" name="user_code" id="user_code" value="${escapeHtml(code)}" autocomplete="off"></label>
<fieldset><legend>Choose an account</legend>
${accounts}
</fieldset>
<button type="submit" name="action" value="allow" id="allow">Allow</button>
<button type="submit" name="action" value="deny" id="deny">Deny</button>
</form>`,
  );
}

async function verificationPage(ctx: ServiceContext, req: MockRequest): Promise<MockReply> {
  const list = await ctx.store.read(users);
  return codeForm(list, normalise(req.query.get('user_code') ?? ''));
}

/** The person's answer on the verification page: the code, the account, Allow or Deny. */
async function decide(ctx: ServiceContext, req: MockRequest): Promise<MockReply> {
  const form = formParams(req);
  const code = normalise(form.get('user_code') ?? '');
  const action = form.get('action');
  const login = (form.get('login') ?? '').toLowerCase();
  const now = ctx.now();
  const outcome = await ctx.store.write((s): { problem: string } | { done: DeviceRecord } => {
    const found = Object.values(devices(s)).find((d) => d.user_code === code);
    if (!found || found.status === 'used') return { problem: `The code ${code || '(none)'} is not valid. Check the code shown on your device.` };
    if (found.expires_at <= now) return { problem: `The code ${code} has expired. Start again on your device.` };
    if (found.status !== 'pending') return { problem: `The code ${code} was already ${found.status}.` };
    if (action === 'deny') {
      found.status = 'denied';
      return { done: found };
    }
    if (action !== 'allow') return { problem: 'Choose Allow or Deny.' };
    const user = users(s).find((u) => u.email.toLowerCase() === login || u.sub === login);
    if (!user || user.disabled) return { problem: `No usable account ${login || '(none)'}: choose one of the accounts.` };
    const client = own(clients(s), found.client_id);
    if (!client || !clientUsable(client, now).ok) return { problem: 'The app that asked was deleted.' };
    Object.assign(found, { status: 'approved', sub: user.sub, email: user.email });
    return { done: found };
  });
  if ('problem' in outcome) return codeForm(await ctx.store.read(users), code, outcome.problem);
  const d = outcome.done;
  return d.status === 'denied'
    ? page(200, 'Access denied', '<h1 id="result">Access denied</h1><p>The device was not connected. You can close this page.</p>')
    : page(
        200,
        'Device connected',
        `<h1 id="result">Device connected</h1><p>Signed in as ${escapeHtml(d.email)}. Return to your device; you can close this page.</p>`,
      );
}

type Failure = { ok: false; err: ReturnType<typeof oauthError> };

/**
 * RFC 8628 §3.4–3.5 at the token endpoint (client already authenticated): the errors of a device that
 * polls, or, once approved, an authorization code for the approved user that the caller exchanges as
 * usual (the same tokens, refresh-token limits and ID token as a browser sign-in).
 */
export function deviceCodeGrant(
  s: MockState,
  clientId: string,
  form: URLSearchParams,
  now: number,
  slowDown = 0,
): Failure | { ok: true; form: URLSearchParams } {
  const fail = (status: number, error: string, description: string): Failure => ({ ok: false, err: oauthError(status, error, description) });
  const value = form.get('device_code');
  if (!value) return fail(400, 'invalid_request', 'Missing required parameter: device_code');
  const d = own(devices(s), value);
  if (!d || d.status === 'used') return fail(400, 'invalid_grant', 'The device code is not valid.');
  if (d.client_id !== clientId) return fail(400, 'invalid_grant', 'The device code was issued to another client.');
  if (d.expires_at <= now) return fail(400, 'expired_token', 'The device code has expired: start the sign-in again.');
  const early = d.last_poll !== undefined && now - d.last_poll < d.interval * 1000;
  d.last_poll = now;
  d.polls += 1;
  if (early || d.polls <= slowDown) {
    d.interval += 5;
    return fail(400, 'slow_down', `Polling too fast: wait at least ${d.interval} s between requests.`);
  }
  if (d.status === 'denied') {
    d.status = 'used';
    return fail(400, 'access_denied', 'The user denied the request.');
  }
  if (d.status === 'pending') return fail(400, 'authorization_pending', 'The user has not yet approved the request.');
  d.status = 'used';
  const code = `4/${randomBytes(24).toString('base64url')}`;
  const slice = oauth(s);
  slice.codes[code] = {
    code,
    client_id: d.client_id,
    redirect_uri: DEVICE_GRANT,
    sub: d.sub ?? '',
    email: d.email ?? '',
    scopes: d.scopes,
    expires_at: now + 60_000,
    used: false,
  };
  return { ok: true, form: new URLSearchParams({ code, redirect_uri: DEVICE_GRANT }) };
}

/** The polls a device code gets `slow_down` for regardless of pace (`mock serve --device-slow-down`). */
export function slowDownPolls(options: Record<string, unknown> | undefined): number {
  return Number((options as DeviceOptions | undefined)?.deviceSlowDown ?? 0) || 0;
}
