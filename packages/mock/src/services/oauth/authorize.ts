import { randomBytes } from 'node:crypto';
import { escapeHtml, htmlPage } from '@opsctl/shared/html.js';
import { reply, type MockReply, type MockRequest } from '../../http.js';
import { hasOwn, own } from '@opsctl/shared/lookup.js';
import type { Route, ServiceContext } from '../../service.js';
import { clients, errorPage, formParams, oauthOptions, pending, users, type PendingRequest } from './common.js';
import {
  checkRedirectUri,
  clientUsable,
  IDENTITY_SCOPES,
  isEmbeddedUserAgent,
  KNOWN_SCOPES,
  skipsGranularConsent,
  type MockUser,
  type OAuthClient,
} from './registry.js';
import { oauth } from './tokens.js';
import { sweepNeeded, sweepUnused, unusedDays } from './console-core.js';

export const AUTH_PATH = '/o/oauth2/v2/auth';
export const CONSENT_PATH = '/o/oauth2/v2/auth/consent';
const PENDING_TTL_MS = 30 * 60 * 1000;
const CHALLENGE = /^[A-Za-z0-9\-._~]{43,128}$/;

/** The authorization endpoint: validates the request, then shows the sign-in and consent page. */
export function authorizeRoutes(ctx: ServiceContext): Route[] {
  return [
    { method: 'GET', path: AUTH_PATH, handler: (req) => authorize(ctx, req) },
    { method: 'POST', path: CONSENT_PATH, handler: (req) => consent(ctx, req) },
  ];
}

async function authorize(ctx: ServiceContext, req: MockRequest): Promise<MockReply> {
  const q = req.query;
  if (isEmbeddedUserAgent(req.headers['user-agent'])) {
    return errorPage(
      403,
      'disallowed_useragent',
      'This app tried to sign you in from an embedded web view, which this server does not allow. Open the sign-in page in your system browser.',
    );
  }
  // RFC 6749 §3.1: "Request and response parameters MUST NOT be included more than once" (invalid_request).
  // Shown on this page, as the seed shows every authorization endpoint error: a doubled client_id or
  // redirect_uri leaves no redirect URI to trust.
  const doubled = [...new Set(q.keys())].filter((k) => q.getAll(k).length > 1);
  if (doubled.length) {
    return errorPage(400, 'invalid_request', `Parameter${doubled.length > 1 ? 's' : ''} given more than once: ${doubled.join(', ')} (each may appear once)`);
  }
  const clientId = q.get('client_id');
  if (!clientId) return errorPage(400, 'invalid_request', 'Missing required parameter: client_id');
  const now = ctx.now();
  // The console deletes unused clients first; one read says whether that is due and finds the client.
  const days = unusedDays(ctx);
  const seen = await ctx.store.read((s) => ({ sweep: sweepNeeded(s, now, days), client: own(clients(s), clientId) }));
  let client = seen.client;
  if (seen.sweep) client = await ctx.store.write((s) => (sweepUnused(s, now, days), own(clients(s), clientId)));
  if (!client) return errorPage(401, 'invalid_client', `The OAuth client was not found: ${clientId}`);
  const usable = clientUsable(client, now);
  if (!usable.ok) return errorPage(401, usable.error, usable.description);
  const redirectUri = q.get('redirect_uri');
  if (!redirectUri) return errorPage(400, 'invalid_request', 'Missing required parameter: redirect_uri');
  const redirect = checkRedirectUri(client, redirectUri);
  if (!redirect.ok) return errorPage(400, redirect.error, redirect.description);

  const responseType = q.get('response_type');
  if (!responseType) return errorPage(400, 'invalid_request', 'Missing required parameter: response_type');
  if (responseType !== 'code') return errorPage(400, 'invalid_request', `Unsupported response_type "${responseType}": installed apps use response_type=code`);
  const scopeParam = q.get('scope')?.trim();
  if (!scopeParam) return errorPage(400, 'invalid_request', 'Missing required parameter: scope');
  const scopes = [...new Set(scopeParam.split(/\s+/))];
  const unknown = scopes.filter((s) => !hasOwn(KNOWN_SCOPES, s));
  if (unknown.length) return errorPage(400, 'invalid_scope', `Some requested scopes were invalid: ${unknown.join(' ')}`);

  const challenge = q.get('code_challenge') ?? undefined;
  const methodParam = q.get('code_challenge_method') ?? undefined;
  // The seed's table: invalid_grant "with PKCE: code_challenge invalid or missing".
  if (methodParam && !challenge) return errorPage(400, 'invalid_grant', 'Missing code_challenge: code_challenge_method was given without it');
  if (methodParam && methodParam !== 'S256' && methodParam !== 'plain') {
    return errorPage(400, 'invalid_request', `Unsupported code_challenge_method "${methodParam}": use S256 (recommended) or plain`);
  }
  if (challenge && !CHALLENGE.test(challenge)) {
    return errorPage(400, 'invalid_grant', 'Invalid code_challenge: 43 to 128 characters of A-Z a-z 0-9 - . _ ~');
  }

  const request: PendingRequest = {
    id: randomBytes(16).toString('base64url'),
    client_id: client.client_id,
    redirect_uri: redirectUri,
    scopes,
    state: q.get('state') ?? undefined,
    code_challenge: challenge,
    // The seed: plain is the default when a challenge comes without a method.
    code_challenge_method: challenge ? ((methodParam as 'S256' | 'plain' | undefined) ?? 'plain') : undefined,
    nonce: q.get('nonce') ?? undefined,
    login_hint: q.get('login_hint') ?? undefined,
    ...(q.get('include_granted_scopes') === 'true' ? { include_granted_scopes: true } : {}),
    expires_at: now + PENDING_TTL_MS,
  };
  const allUsers = await ctx.store.write((s) => {
    const p = pending(s);
    for (const [id, r] of Object.entries(p)) if (r.expires_at <= now) delete p[id];
    p[request.id] = request;
    return users(s);
  });
  return consentPage(client, request, allUsers);
}

function hintedUser(list: MockUser[], hint: string | undefined): MockUser | undefined {
  if (!hint) return undefined;
  const h = hint.toLowerCase();
  return list.find((u) => u.email.toLowerCase() === h || u.sub === hint);
}

/** The sign-in and consent page: pick an account, tick the scopes to grant (granular unless trusted; unticked at first, as on the real screen), Allow or Deny. */
export function consentPage(client: OAuthClient, request: PendingRequest, list: MockUser[], problem?: string): MockReply {
  const selected = hintedUser(list, request.login_hint) ?? list[0];
  const accounts = list
    .map(
      (u) =>
        `<label><input type="radio" name="user" value="${escapeHtml(u.sub)}" id="user-${escapeHtml(u.sub)}" data-email="${escapeHtml(u.email)}"${u === selected ? ' checked' : ''}> ${escapeHtml(u.name)} &lt;${escapeHtml(u.email)}&gt;</label>`,
    )
    .join('\n');
  const identity = request.scopes.filter((s) => IDENTITY_SCOPES.includes(s));
  const granular = request.scopes.filter((s) => !IDENTITY_SCOPES.includes(s));
  const scopeList = skipsGranularConsent(client)
    ? `<p id="all-or-nothing">${escapeHtml(client.name)} is ${client.trusted ? 'a trusted app' : 'an app with domain-wide delegation'}: it gets all of these or nothing.</p><ul>${request.scopes
        .map((s) => `<li>${escapeHtml(KNOWN_SCOPES[s])} <code>${escapeHtml(s)}</code></li>`)
        .join('')}</ul>`
    : `${identity.length ? `<p>Signing in shares: ${identity.map((s) => escapeHtml(KNOWN_SCOPES[s])).join('; ')}.</p>` : ''}
${granular.length ? '<p id="choose">Tick what you allow (granular consent: nothing is ticked for you).</p>' : ''}
${granular
  .map(
    (s, i) =>
      `<label><input type="checkbox" name="scope" value="${escapeHtml(s)}" id="scope-${i}" data-scope="${escapeHtml(s)}"> ${escapeHtml(KNOWN_SCOPES[s])} <code>${escapeHtml(s)}</code></label>`,
  )
  .join('\n')}`;
  const body = `<h1>Sign in to continue to ${escapeHtml(client.name)}</h1>
${problem ? `<p class="err" id="problem">${escapeHtml(problem)}</p>` : ''}
<form method="POST" action="${CONSENT_PATH}" id="consent">
<input type="hidden" name="request" value="${escapeHtml(request.id)}">
<fieldset><legend>Choose an account</legend>
${accounts}
</fieldset>
<fieldset><legend>${escapeHtml(client.name)} wants to access your account</legend>
${scopeList}
</fieldset>
<fieldset><legend>Access duration</legend>
<select name="access_duration" id="access_duration">
<option value="">Until I remove access</option>
<option value="3600">1 hour</option>
<option value="86400">1 day</option>
<option value="604800">7 days</option>
</select>
</fieldset>
<p class="muted">You are signing in to a mock authorization server (plain HTTP on loopback).</p>
<button type="submit" name="action" value="deny" id="deny">Deny</button>
<button type="submit" name="action" value="allow" id="allow">Allow</button>
</form>`;
  return reply.html(problem ? 400 : 200, htmlPage(`Sign in - ${client.name}`, body), { 'cache-control': 'no-store', 'x-frame-options': 'DENY' });
}

/** Builds the redirect back to the app: query parameters, plus `state` echoed in the fragment as the seed words it. */
export function redirectTo(uri: string, params: Record<string, string | undefined>, state: string | undefined, inFragment?: 'state' | 'all'): MockReply {
  const url = new URL(uri);
  const fragment = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) (inFragment === 'all' ? fragment : url.searchParams).set(k, v);
  if (state !== undefined) {
    if (!inFragment) url.searchParams.set('state', state);
    fragment.set('state', state);
  }
  let location = url.toString();
  if ([...fragment.keys()].length) location += `#${fragment.toString()}`;
  return { status: 302, headers: { location, 'cache-control': 'no-store' } };
}

async function consent(ctx: ServiceContext, req: MockRequest): Promise<MockReply> {
  const form = formParams(req);
  const now = ctx.now();
  const id = form.get('request') ?? '';
  const found = await ctx.store.read((s) => {
    const r = own(pending(s), id);
    const client = r && own(clients(s), r.client_id);
    return r && client ? { request: r, client, list: users(s) } : undefined;
  });
  if (!found || found.request.expires_at <= now) {
    return errorPage(400, 'invalid_request', 'This sign-in request is unknown or has expired. Start again from the application.');
  }
  const { request, client, list } = found;
  const usable = clientUsable(client, now);
  if (!usable.ok) return errorPage(401, usable.error, usable.description);
  const action = form.get('action');
  if (action === 'deny') {
    await ctx.store.write((s) => void delete pending(s)[id]);
    return redirectTo(
      request.redirect_uri,
      { error: 'access_denied', error_description: 'The user denied access' },
      request.state,
      oauthOptions(ctx).responseInFragment,
    );
  }
  if (action !== 'allow') return consentPage(client, request, list, 'Choose Allow or Deny.');
  const user = list.find((u) => u.sub === form.get('user'));
  if (!user) return consentPage(client, request, list, 'Choose an account.');
  if (user.disabled) return errorPage(403, 'access_denied', `The account ${user.email} is disabled.`);
  if (client.org_internal && !user.email.toLowerCase().endsWith(`@${client.org_internal.toLowerCase()}`)) {
    return errorPage(
      403,
      'org_internal',
      `${client.name} is restricted to users within its organization (${client.org_internal}); ${user.email} is not one of them.`,
    );
  }
  const blocked = request.scopes.filter((s) => user.blocked_scopes?.includes(s));
  if (blocked.length) {
    return errorPage(403, 'admin_policy_enforced', `Your administrator's policy does not allow ${user.email} to authorize: ${blocked.join(' ')}`);
  }

  let granted: string[];
  if (skipsGranularConsent(client)) granted = request.scopes;
  else {
    const ticked = new Set(form.getAll('scope'));
    granted = request.scopes.filter((s) => IDENTITY_SCOPES.includes(s) || ticked.has(s));
  }
  if (granted.length === 0) return consentPage(client, request, list, 'Choose at least one permission to grant, or Deny.');
  if (request.include_granted_scopes) {
    // Incremental authorization: the new grant also carries what this user granted this client before
    // (through any refresh token still live), so the app asks only for what it lacks.
    const earlier = await ctx.store.read((s) =>
      Object.values(oauth(s).refreshTokens)
        .filter((t) => t.client_id === client.client_id && t.sub === user.sub && !t.revoked && (t.expires_at === null || t.expires_at > now))
        .flatMap((t) => t.scopes),
    );
    granted = [...new Set([...earlier, ...granted])];
  }
  const duration = Number(form.get('access_duration') || 0);
  const ttl = oauthOptions(ctx).refreshTokenTtlSeconds;
  const codeTtl = oauthOptions(ctx).codeTtlSeconds ?? 600;
  const code = `4/${randomBytes(24).toString('base64url')}`;
  await ctx.store.write((s) => {
    delete pending(s)[id];
    oauth(s).codes[code] = {
      code,
      client_id: client.client_id,
      redirect_uri: request.redirect_uri,
      sub: user.sub,
      email: user.email,
      scopes: granted,
      code_challenge: request.code_challenge,
      code_challenge_method: request.code_challenge_method,
      nonce: request.nonce,
      access_seconds: duration > 0 ? duration : ttl,
      expires_at: now + codeTtl * 1000,
      used: false,
    };
  });
  return redirectTo(request.redirect_uri, { code, scope: granted.join(' '), authuser: '0' }, request.state, oauthOptions(ctx).responseInFragment);
}
