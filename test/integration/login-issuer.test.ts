import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { metadataCachePath } from '../../src/auth/discovery.js';
import { SCOPE_BASE } from '../../src/auth/scopes.js';
import { signJwt, type SigningKey } from '@opsctl/mock/services/oauth/jwt.js';
import { DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET } from '@opsctl/mock/services/oauth/registry.js';
import { runCli, tempConfigDir } from '../helpers/cli.js';
import { readCredentials } from '../helpers/credentials.js';
import { startMock, type TestState } from '../helpers/mock.js';
import { followRedirect, playBrowser, postForm } from '../helpers/oauth-browser.js';

const READ = `${SCOPE_BASE}/media.readonly`;
let mock: Awaited<ReturnType<typeof startMock>>;
let cfg: ReturnType<typeof tempConfigDir>;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  mock = await startMock({ services: ['oauth', 'api'] });
});
afterAll(async () => {
  await mock.close();
});
beforeEach(() => {
  cfg = tempConfigDir();
  // DISPLAY makes login "open a browser": the test's openBrowser plays the user over HTTP.
  env = { OPSCTL_CONFIG_DIR: cfg.dir, DISPLAY: ':99', OPSCTL_CLIENT_ID: DEFAULT_CLIENT_ID, OPSCTL_CLIENT_SECRET: DEFAULT_CLIENT_SECRET };
});
afterEach(() => cfg.cleanup());

/** A browser that consents (after `tamper` changed the URL, as an attacker could) and lands on opsctl's listener. */
function browser(seen: { url?: string } = {}, tamper?: (u: URL) => void) {
  return async (url: string) => {
    seen.url = url;
    const u = new URL(url);
    tamper?.(u);
    void (async () => {
      const r = await playBrowser(u.toString(), { email: 'alice@example.com' });
      if (r.location) await followRedirect(r.location);
    })();
    return true;
  };
}

const login = (args: string[], seen: { url?: string } = {}, tamper?: (u: URL) => void, extra: NodeJS.ProcessEnv = {}) =>
  runCli(['login', '--timeout', '20s', ...args], { env: { ...env, ...extra }, openBrowser: browser(seen, tamper) });
const stored = (profile = 'embedded') => {
  const file = join(cfg.dir, 'credentials.json');
  return existsSync(file) ? readCredentials(file)[profile]?.oauth : undefined;
};

/** A small HTTP server the test scripts (metadata documents, a token-endpoint proxy); logs the paths asked for. */
async function serve(
  handler: (req: IncomingMessage, res: ServerResponse, body: string) => unknown,
): Promise<{ url: string; paths: string[]; close: () => Promise<void> }> {
  const paths: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      paths.push(req.url ?? '');
      void handler(req, res, body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    paths,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
const json = (res: ServerResponse, status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

describe('issuer: the provider metadata', () => {
  it('discovers the endpoints from <issuer>/.well-known/openid-configuration once, caches them, and checks the ID token', async () => {
    const seen: { url?: string } = {};
    await fetch(`${mock.url}/__mock/requests`, { method: 'DELETE' });
    const r = await login(['--scopes', 'openid', 'email', READ], seen, undefined, { OPSCTL_ISSUER: mock.url });
    expect(r.code, r.stderr).toBe(0);
    expect(seen.url).toMatch(new RegExp(`^${mock.url}/o/oauth2/v2/auth\\?`));
    expect(new URL(seen.url!).searchParams.get('nonce')).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(stored()).toMatchObject({ account: 'alice@example.com', scope: `openid email ${READ}` });
    const cache = metadataCachePath(join(cfg.dir, 'data'), mock.url);
    expect(JSON.parse(readFileSync(cache, 'utf8')).metadata).toMatchObject({
      issuer: mock.url,
      token_endpoint: `${mock.url}/token`,
      jwks_uri: `${mock.url}/oauth2/v3/certs`,
    });

    const again = await login(['--scopes', 'openid', 'email', READ], {}, undefined, { OPSCTL_ISSUER: mock.url });
    expect(again.code, again.stderr).toBe(0);
    const discoveries = mock.requests.filter((q) => q.path === '/.well-known/openid-configuration');
    expect(discoveries).toHaveLength(1);
  });

  it('uses a fresh cache without asking, refetches after a day, and names and replaces a corrupt cache file', async () => {
    const cache = metadataCachePath(join(cfg.dir, 'data'), mock.url);
    mkdirSync(join(cache, '..'), { recursive: true });
    const md = await (await fetch(`${mock.url}/.well-known/openid-configuration`)).json();
    const write = (fetchedAt: number) =>
      writeFileSync(
        cache,
        JSON.stringify({ fetched_at: fetchedAt, source: 'test', metadata: { ...md, authorization_endpoint: `${mock.url}/o/oauth2/v2/auth?from=cache` } }),
      );

    write(Date.now() - 60_000);
    const seen: { url?: string } = {};
    expect((await login(['--scopes', READ], seen, undefined, { OPSCTL_ISSUER: mock.url })).code).toBe(0);
    expect(new URL(seen.url!).searchParams.get('from')).toBe('cache');

    write(Date.now() - 25 * 3600_000);
    expect((await login(['--scopes', READ], seen, undefined, { OPSCTL_ISSUER: mock.url })).code).toBe(0);
    expect(new URL(seen.url!).searchParams.get('from')).toBeNull();

    writeFileSync(cache, '{"fetched_at": 17');
    const r = await login(['--scopes', READ], seen, undefined, { OPSCTL_ISSUER: mock.url });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`ignoring the corrupt provider metadata cache ${cache}`);
    expect(JSON.parse(readFileSync(cache, 'utf8')).metadata.issuer).toBe(mock.url);
  });

  it('falls back to RFC 8414 (/.well-known/oauth-authorization-server inserted before the issuer path); no revocation endpoint: logout forgets locally, exit 0', async () => {
    const as = await serve((req, res) => {
      if (req.url === '/.well-known/oauth-authorization-server/tenant-a') {
        return json(res, 200, {
          issuer: `${as.url}/tenant-a`,
          authorization_endpoint: `${mock.url}/o/oauth2/v2/auth`,
          token_endpoint: `${mock.url}/token`,
          code_challenge_methods_supported: ['S256'],
        });
      }
      json(res, 404, { error: 'not_found' });
    });
    try {
      await runCli(['config', 'set', 'issuer', `${as.url}/tenant-a`, '--profile', 'corp'], { env });
      const e = { OPSCTL_PROFILE: 'corp' };
      const r = await login(['--scopes', READ], {}, undefined, e);
      expect(r.code, r.stderr).toBe(0);
      expect(as.paths).toEqual(['/tenant-a/.well-known/openid-configuration', '/.well-known/oauth-authorization-server/tenant-a']);
      expect(stored('corp')).toMatchObject({ scope: READ });

      const out = await runCli(['logout', '--json'], { env: { ...env, ...e } });
      expect(out.code, out.stderr).toBe(0);
      expect(out.json()).toMatchObject({ revoked: false, revocation_supported: false, removed: true });
      expect(out.stderr).toContain('the provider has no revocation endpoint');
      expect(out.stderr).toContain('could not revoke');
      expect(stored('corp')).toBeUndefined();
    } finally {
      await as.close();
    }
  });

  it('refuses metadata for another issuer (RFC 8414 §3.3), naming the URL and the setting; nothing stored', async () => {
    const as = await serve((_req, res) =>
      json(res, 200, { issuer: 'https://evil.example', authorization_endpoint: `${mock.url}/o/oauth2/v2/auth`, token_endpoint: `${mock.url}/token` }),
    );
    try {
      const r = await login(['--scopes', READ], {}, undefined, { OPSCTL_ISSUER: as.url });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(
        `the metadata at ${as.url}/.well-known/openid-configuration is for issuer "https://evil.example", not the configured ${as.url}`,
      );
      expect(r.stderr).toContain('opsctl config set issuer');
      expect(stored()).toBeUndefined();
      expect(existsSync(join(cfg.dir, 'data', 'oidc-metadata')) ? readdirSync(join(cfg.dir, 'data', 'oidc-metadata')) : []).toEqual([]);
    } finally {
      await as.close();
    }
  });

  it('a dead discovery URL, or no metadata at either place: exit 1 naming the URLs and the issuer setting', async () => {
    const dead = await serve(() => undefined);
    const deadUrl = dead.url;
    await dead.close();
    const r = await login([], {}, undefined, { OPSCTL_ISSUER: deadUrl, OPSCTL_HTTP_TIMEOUT_MS: '2000' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`cannot reach the provider's metadata at ${deadUrl}/.well-known/openid-configuration`);
    expect(r.stderr).toContain('opsctl config get issuer');

    const html = await serve((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>an app</html>'));
    try {
      const h = await login([], {}, undefined, { OPSCTL_ISSUER: `${html.url}/realms/ops` });
      expect(h.code).toBe(1);
      expect(h.stderr).toContain(`${html.url}/realms/ops/.well-known/openid-configuration: not a JSON metadata document`);
      expect(h.stderr).toContain(`${html.url}/.well-known/oauth-authorization-server/realms/ops: not a JSON metadata document`);
    } finally {
      await html.close();
    }

    const bad = await runCli(['login'], { env: { ...env, OPSCTL_ISSUER: 'ftp://x.example' } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('issuer "ftp://x.example" must be an https:// URL');
  });

  it('refuses a provider that supports only plain PKCE, before opening anything', async () => {
    const as = await serve((req, res) =>
      json(res, 200, {
        issuer: as.url,
        authorization_endpoint: `${mock.url}/o/oauth2/v2/auth`,
        token_endpoint: `${mock.url}/token`,
        code_challenge_methods_supported: ['plain'],
      }),
    );
    try {
      const seen: { url?: string } = {};
      const r = await login([], seen, undefined, { OPSCTL_ISSUER: as.url });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('supports only PKCE plain; opsctl signs in only with S256');
      expect(seen.url).toBeUndefined();
    } finally {
      await as.close();
    }
  });

  it('endpoints set by hand win over the metadata (authorize_url, token_url, revoke_url)', async () => {
    const as = await serve((_req, res) =>
      json(res, 200, {
        issuer: as.url,
        authorization_endpoint: 'http://127.0.0.1:9/nowhere',
        token_endpoint: 'http://127.0.0.1:9/token',
        revocation_endpoint: 'http://127.0.0.1:9/revoke',
      }),
    );
    try {
      for (const [k, v] of [
        ['issuer', as.url],
        ['authorize_url', `${mock.url}/o/oauth2/v2/auth`],
        ['token_url', `${mock.url}/token`],
        ['revoke_url', `${mock.url}/revoke`],
      ] as const) {
        expect((await runCli(['config', 'set', k, v, '--profile', 'hand'], { env })).code).toBe(0);
      }
      const seen: { url?: string } = {};
      const r = await login(['--scopes', READ], seen, undefined, { OPSCTL_PROFILE: 'hand' });
      expect(r.code, r.stderr).toBe(0);
      expect(seen.url).toMatch(new RegExp(`^${mock.url}/o/oauth2/v2/auth\\?`));
      const out = await runCli(['logout'], { env: { ...env, OPSCTL_PROFILE: 'hand' } });
      expect(out.code, out.stderr).toBe(0);
      expect(out.stderr).toContain('tokens revoked on the server');
    } finally {
      await as.close();
    }
  });
});

describe('ID token checks (the embedded mock signs them; the test tampers)', () => {
  let key: SigningKey;
  beforeAll(async () => {
    // Make the mock create its signing key, then read it: the test can then sign tokens the mock "could have" sent.
    await (await fetch(`${mock.url}/oauth2/v3/certs`)).text();
    // (a config dir of its own: beforeAll runs before any beforeEach, so `cfg` is the last test's, removed already)
    const own = tempConfigDir();
    try {
      const r = await login(['--scopes', 'openid'], {}, undefined, { OPSCTL_AUTH_URL: mock.url, OPSCTL_CONFIG_DIR: own.dir });
      expect(r.code, r.stderr).toBe(0);
    } finally {
      own.cleanup();
    }
    key = await mock.store.read((s: TestState) => s.oauth.signing as SigningKey);
  });

  /** A token endpoint in front of the mock's that rewrites the ID token of every answer. */
  async function tokenProxy(rewrite: (idToken: string, claims: Record<string, unknown>) => string) {
    return serve(async (_req, res, body) => {
      const out = await postForm(`${mock.url}/token`, Object.fromEntries(new URLSearchParams(body)));
      if (out.json?.id_token) {
        const claims = JSON.parse(Buffer.from(out.json.id_token.split('.')[1], 'base64url').toString());
        out.json.id_token = rewrite(out.json.id_token, claims);
      }
      json(res, out.status, out.json);
    });
  }

  const resign = (change: (c: Record<string, unknown>) => void) => (_t: string, claims: Record<string, unknown>) => {
    const c = { ...claims };
    change(c);
    return signJwt(key, c);
  };
  const now = () => Math.floor(Date.now() / 1000);

  const cases: Array<[string, (t: string, c: Record<string, unknown>) => string, RegExp]> = [
    [
      'a changed payload (signature no longer verifies)',
      (t) => {
        const [h, p, s] = t.split('.');
        const claims = JSON.parse(Buffer.from(p!, 'base64url').toString());
        return `${h}.${Buffer.from(JSON.stringify({ ...claims, sub: 'someone-else' })).toString('base64url')}.${s}`;
      },
      /signature does not verify against the provider's keys at http:\/\/127\.0\.0\.1:\d+\/oauth2\/v3\/certs/,
    ],
    [
      'an unsigned token (alg none)',
      (_t, c) => `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify(c)).toString('base64url')}.`,
      /refused/,
    ],
    ['another issuer', resign((c) => (c.iss = 'https://evil.example')), /"iss" claim is "https:\/\/evil\.example", expected http:\/\/127\.0\.0\.1/],
    ['another audience', resign((c) => (c.aud = 'other-app.apps.mock')), /"aud" claim is "other-app\.apps\.mock", expected opsctl-desktop\.apps\.mock/],
    ['several audiences without azp', resign((c) => ((c.aud = [DEFAULT_CLIENT_ID, 'other-app']), delete c.azp)), /several audiences .* no "azp"/],
    ['an azp of another client', resign((c) => (c.azp = 'other-app')), /"azp" claim is "other-app", expected opsctl-desktop\.apps\.mock/],
    ['expired beyond the clock skew', resign((c) => ((c.exp = now() - 600), (c.iat = now() - 4200))), /expired at .*allowing 120 s of clock skew/],
    ['a nonce from another sign-in (replayed)', resign((c) => (c.nonce = 'replayed-nonce')), /"nonce" is not the one opsctl sent/],
    ['no exp', resign((c) => delete c.exp), /"exp" claim is missing/],
  ];

  for (const [what, rewrite, message] of cases) {
    it(`refuses ${what}: exit 4, nothing stored, the browser told`, async () => {
      const proxy = await tokenProxy(rewrite);
      try {
        const r = await login(['--scopes', 'openid', 'email', READ], {}, undefined, { OPSCTL_AUTH_URL: mock.url, OPSCTL_TOKEN_URL: `${proxy.url}/token` });
        expect(r.code, r.stderr).toBe(4);
        expect(r.stderr).toMatch(/the ID token from the token endpoint was refused/);
        expect(r.stderr).toMatch(message);
        expect(r.stderr).toContain('nothing was stored');
        expect(stored()).toBeUndefined();
      } finally {
        await proxy.close();
      }
    });
  }

  it('accepts a token that expired within the clock skew, and a multi-audience one with azp = client_id', async () => {
    const proxy = await tokenProxy(resign((c) => ((c.exp = now() - 30), (c.aud = [DEFAULT_CLIENT_ID, 'other-app']), (c.azp = DEFAULT_CLIENT_ID))));
    try {
      const r = await login(['--scopes', 'openid', 'email', READ], {}, undefined, { OPSCTL_AUTH_URL: mock.url, OPSCTL_TOKEN_URL: `${proxy.url}/token` });
      expect(r.code, r.stderr).toBe(0);
      expect(stored()).toMatchObject({ account: 'alice@example.com' });
    } finally {
      await proxy.close();
    }
  });

  it('a refreshed ID token is checked: tampered → exit 4 and the stored sign-in unchanged; keys unreachable → new tokens kept, previous ID token', async () => {
    const e = { OPSCTL_AUTH_URL: mock.url };
    expect((await login(['--scopes', 'openid', 'email', READ], {}, undefined, e)).code).toBe(0);
    const expire = () => {
      const file = join(cfg.dir, 'credentials.json');
      const all = readCredentials(file);
      all.embedded.oauth.expires_at = Date.now() - 1000;
      writeFileSync(file, JSON.stringify(all), { mode: 0o600 });
      return all.embedded.oauth;
    };
    const before = expire();
    const proxy = await tokenProxy(resign((c) => (c.sub = 'someone-else')));
    try {
      const t = await runCli(['auth', 'token'], { env: { ...env, ...e, OPSCTL_TOKEN_URL: `${proxy.url}/token` } });
      expect(t.code).toBe(4);
      expect(t.stderr).toMatch(/"sub" is "someone-else", not the signed-in user/);
      expect(stored().access_token).toBe(before.access_token);
    } finally {
      await proxy.close();
    }
    const dead = await serve(() => undefined);
    await dead.close();
    const again = expire();
    const t = await runCli(['auth', 'token'], { env: { ...env, ...e, OPSCTL_JWKS_URI: `${dead.url}/certs`, OPSCTL_HTTP_TIMEOUT_MS: '2000' } });
    expect(t.code, t.stderr).toBe(0);
    expect(t.stderr).toContain(`could not check the refreshed ID token (cannot fetch the provider's signing keys from ${dead.url}/certs`);
    const after = stored();
    expect(after.access_token).not.toBe(again.access_token);
    expect(t.stdout.trim()).toBe(after.access_token);
    expect(after.id_token).toBe(again.id_token);
  });

  it('the mock echoes the nonce; a code obtained for another nonce is refused (the browser URL tampered)', async () => {
    const r = await login(['--scopes', 'openid', 'email'], {}, (u) => u.searchParams.set('nonce', 'attacker-nonce'), { OPSCTL_AUTH_URL: mock.url });
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/"nonce" is not the one opsctl sent/);
    expect(stored()).toBeUndefined();
  });

  it('the embedded mock (inside the opsctl process): one path, its tokens checked against its own key set like any provider', async () => {
    const ok = await login(['--scopes', 'openid', 'email']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(stored()).toMatchObject({ account: 'alice@example.com' });
    const r = await login(['--scopes', 'openid', 'email'], {}, (u) => u.searchParams.set('nonce', 'attacker-nonce'));
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/"nonce" is not the one opsctl sent/);
    // The refused sign-in stored nothing: the earlier one is still there.
    expect(stored()).toMatchObject({ account: 'alice@example.com' });
    // The signature is checked too: a key set that does not hold the embedded mock's key refuses its token
    // (no skipped check for a server inside this process).
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const other = await serve((_req, res) => json(res, 200, { keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'other', use: 'sig', alg: 'RS256' }] }));
    try {
      const forged = await login(['--scopes', 'openid', 'email'], {}, undefined, { OPSCTL_JWKS_URI: `${other.url}/certs` });
      expect(forged.code).toBe(4);
      expect(forged.stderr).toMatch(/ID token .* refused/);
      expect(other.paths).toContain('/certs');
    } finally {
      await other.close();
    }
  });
});
