import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';

/** A client registered at the test's oidc-provider: what opsctl signs in as. */
export const OIDC_CLIENT_ID = 'opsctl-native';
/** The provider's own API scopes (beyond OpenID's); anything else asked for is not granted. */
export const API_SCOPES = ['api:read', 'api:write'];

/**
 * oidc-provider (the certified Node implementation of OpenID Connect, written by others) on 127.0.0.1,
 * port 0, in this process: a native public client with a loopback redirect (any port, RFC 8252 §7.3),
 * PKCE required, refresh tokens for offline_access, revocation on, and its own development
 * interaction pages (login + consent). `scopes`: the API scopes it knows (others asked for are not granted);
 * `revocation: false` leaves the revocation endpoint out of its metadata; `deviceFlow: true` turns on RFC 8628;
 * `tokenExchange: {jwks, audience}` registers an RFC 8693 grant (oidc-provider's registerGrantType) that
 * trades a CI token signed by a key of `jwks` for an access token of its subject.
 */
export async function startOidcProvider(opts = {}) {
  const { default: Provider } = await import('oidc-provider');
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const accounts = new Map();
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: OIDC_CLIENT_ID,
        application_type: 'native',
        redirect_uris: ['http://127.0.0.1/'],
        token_endpoint_auth_method: 'none',
        grant_types: [
          'authorization_code',
          'refresh_token',
          ...(opts.deviceFlow ? ['urn:ietf:params:oauth:grant-type:device_code'] : []),
          ...(opts.tokenExchange ? [TOKEN_EXCHANGE] : []),
        ],
        response_types: ['code'],
      },
    ],
    scopes: ['openid', 'offline_access', 'email', 'profile', ...(opts.scopes ?? API_SCOPES)],
    claims: { email: ['email', 'email_verified'], profile: ['name'] },
    pkce: { required: () => true },
    features: { revocation: { enabled: opts.revocation ?? true }, devInteractions: { enabled: true }, deviceFlow: { enabled: Boolean(opts.deviceFlow) } },
    findAccount: async (_ctx, sub) => {
      if (!accounts.has(sub)) accounts.set(sub, { email: sub.includes('@') ? sub : `${sub}@example.org` });
      const a = accounts.get(sub);
      return { accountId: sub, claims: async () => ({ sub, email: a.email, email_verified: true, name: sub }) };
    },
  });
  if (opts.tokenExchange) {
    const { jwks, audience } = opts.tokenExchange;
    provider.registerGrantType(
      TOKEN_EXCHANGE,
      async (ctx) => {
        const { createLocalJWKSet, jwtVerify } = await import('jose');
        const p = ctx.oidc.params;
        let payload;
        try {
          ({ payload } = await jwtVerify(p.subject_token, createLocalJWKSet(jwks), { audience }));
        } catch (err) {
          ctx.status = 400;
          // RFC 8693 §2.2.2: an invalid or unacceptable subject token is invalid_request
          ctx.body = { error: 'invalid_request', error_description: `subject_token: ${err.message}` };
          return;
        }
        const token = new ctx.oidc.provider.AccessToken({
          accountId: payload.sub,
          client: ctx.oidc.client,
          grantId: randomUUID(),
          gty: 'token_exchange',
          scope: p.scope || 'api:read',
        });
        ctx.body = {
          access_token: await token.save(),
          issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
          token_type: 'Bearer',
          expires_in: token.expiration,
          scope: token.scope,
        };
      },
      ['subject_token', 'subject_token_type', 'requested_token_type', 'scope', 'audience'],
    );
  }
  // The issuer is plain http on loopback (tests only); oidc-provider then sets non-secure cookies.
  server.on('request', provider.callback());
  return {
    issuer,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A cookie jar that honours each cookie's path (oidc-provider scopes its interaction cookies by path). */
class CookieJar {
  cookies = new Map();
  store(res) {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const path =
        attrs
          .map((a) => a.trim())
          .find((a) => a.toLowerCase().startsWith('path='))
          ?.slice(5) ?? '/';
      const expired =
        attrs.some((a) => /^expires=/i.test(a.trim()) && Date.parse(a.trim().slice(8)) < Date.now()) || attrs.some((a) => /^max-age=0$/i.test(a.trim()));
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, { value: pair.slice(eq + 1).trim(), path });
    }
  }
  header(url) {
    return [...this.cookies]
      .filter(([, c]) => url.pathname === c.path || url.pathname.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`))
      .map(([n, c]) => `${n}=${c.value}`)
      .join('; ');
  }
}

/** The form on an oidc-provider interaction page: its action and its inputs' names and values. */
function formOf(html, base) {
  const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
  if (!action) throw new Error(`no form on the interaction page: ${html.slice(0, 300)}`);
  const fields = new URLSearchParams();
  for (const m of html.matchAll(/<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g)) fields.set(m[1], m[2]);
  return { action: new URL(action.replace(/&amp;/g, '&'), base), fields };
}

/**
 * Plays the user's browser through oidc-provider's own interaction pages over HTTP: follows the
 * redirects from the authorization URL, fills the login form as `login`, presses Continue on the
 * consent page, and returns the final redirect to the client (not followed). Cookies are kept per path.
 */
export async function signInThroughPages(authorizeUrl, login) {
  const jar = new CookieJar();
  const pages = [];
  let url = new URL(authorizeUrl);
  let method = 'GET';
  let body;
  for (let hop = 0; hop < 20; hop++) {
    const res = await fetch(url, {
      method,
      body,
      redirect: 'manual',
      headers: { cookie: jar.header(url), ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    });
    jar.store(res);
    method = 'GET';
    body = undefined;
    if (res.status >= 300 && res.status < 400) {
      await res.arrayBuffer();
      const next = new URL(res.headers.get('location') ?? '', url);
      if (next.origin !== url.origin || !next.pathname.match(/^\/(auth|interaction)\b/)) return { location: next, pages };
      url = next;
      continue;
    }
    const html = await res.text();
    if (res.status !== 200) throw new Error(`oidc-provider answered ${res.status} at ${url.pathname}: ${html.slice(0, 500)}`);
    const form = formOf(html, url);
    const prompt = form.fields.get('prompt');
    pages.push(prompt ?? 'unknown');
    if (prompt === 'login') {
      form.fields.set('login', login);
      form.fields.set('password', 'any password');
    } else if (prompt !== 'consent') throw new Error(`unexpected interaction page (prompt ${prompt}): ${html.slice(0, 300)}`);
    url = form.action;
    method = 'POST';
    body = form.fields;
  }
  throw new Error('too many redirects in the sign-in');
}

/**
 * Plays a person on another device through oidc-provider's device flow pages (RFC 8628): the code
 * page (types `userCode`), the confirmation, login as `login`, consent, up to "Sign-in Success".
 */
export async function approveDeviceThroughPages(verificationUri, userCode, login) {
  const jar = new CookieJar();
  const pages = [];
  let url = new URL(verificationUri);
  let method = 'GET';
  let body;
  for (let hop = 0; hop < 30; hop++) {
    const res = await fetch(url, {
      method,
      body,
      redirect: 'manual',
      headers: { cookie: jar.header(url), ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    });
    jar.store(res);
    method = 'GET';
    body = undefined;
    if (res.status >= 300 && res.status < 400) {
      await res.arrayBuffer();
      url = new URL(res.headers.get('location') ?? '', url);
      continue;
    }
    const html = await res.text();
    if (res.status !== 200) throw new Error(`oidc-provider answered ${res.status} at ${url.pathname}: ${html.slice(0, 500)}`);
    if (html.includes('Sign-in Success')) return { pages: [...pages, 'success'] };
    const form = formOf(html, url);
    if (html.includes('op.deviceInputForm')) {
      pages.push('code');
      form.fields.set('user_code', userCode);
    } else if (html.includes('op.deviceConfirmForm')) pages.push('confirm');
    else if (html.includes('<title>Submitting Callback</title>')) pages.push('callback');
    else {
      const prompt = form.fields.get('prompt');
      pages.push(prompt ?? 'unknown');
      if (prompt === 'login') {
        form.fields.set('login', login);
        form.fields.set('password', 'any password');
      } else if (prompt !== 'consent') throw new Error(`unexpected page (prompt ${prompt}): ${html.slice(0, 300)}`);
    }
    url = form.action;
    method = 'POST';
    body = form.fields;
  }
  throw new Error('too many steps in the device sign-in');
}
