import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as client from 'openid-client';
import { request } from 'undici';
import { SCOPE_BASE } from '../../src/auth/scopes.js';
import { DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET } from '@opsctl/mock/services/oauth/registry.js';
import { runBin } from '../helpers/bin.js';
import { playBrowser } from '../helpers/oauth-browser.js';
import { serveUrl } from '../helpers/serve.js';

/**
 * An independent OAuth/OIDC client (openid-client v6, on oauth4webapi) against the built
 * `opsctl mock serve`: discovery, code exchange with PKCE, ID token checks, refresh and revocation.
 */
describe('openid-client against opsctl mock serve', () => {
  let serve: ReturnType<typeof runBin>;
  let base: string;

  beforeAll(async () => {
    serve = runBin(['mock', 'serve', '--memory', '--port', '0', '--json']);
    base = await serveUrl(serve);
  });
  afterAll(async () => {
    serve.kill('SIGTERM');
    await serve;
  });

  it('a client with domain-wide delegation gets every requested scope with nothing ticked; a project without the data API gets SERVICE_DISABLED there', async () => {
    const signIn = async (clientId: string, secret: string) => {
      const config = await client.discovery(new URL(base), clientId, secret, undefined, { execute: [client.allowInsecureRequests] });
      const verifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      const scope = `openid email ${SCOPE_BASE}/media.readonly ${SCOPE_BASE}/media.upload`;
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: 'http://127.0.0.1:8765/callback',
        scope,
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
      });
      const browser = await playBrowser(url.href, { scopes: [] });
      return client.authorizationCodeGrant(config, new URL(browser.location!.split('#')[0]!), { pkceCodeVerifier: verifier, expectedState: state });
    };
    const delegated = await signIn('delegated-desktop.apps.mock', 'delegated-secret');
    expect(delegated.scope!.split(' ').sort()).toEqual(['email', 'openid', `${SCOPE_BASE}/media.readonly`, `${SCOPE_BASE}/media.upload`].sort());

    const off = await signIn('no-data-api.apps.mock', 'no-data-api-secret');
    // Granular consent (nothing ticked): identity only; the data API then refuses for the project, not the scope.
    expect(off.scope).toBe('openid email');
    const api = await request(`${base}/media/v3/channels?part=id&mine=true`, { headers: { authorization: `Bearer ${off.access_token}` } });
    expect(api.statusCode).toBe(403);
    const body = (await api.body.json()) as any;
    expect(body.error.details[0]).toMatchObject({ reason: 'SERVICE_DISABLED', metadata: { consumer: 'projects/400000000042' } });
  });

  it('runs the code exchange, refresh and revoke and accepts every response', async () => {
    const config = await client.discovery(new URL(base), DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET, undefined, { execute: [client.allowInsecureRequests] });
    expect(config.serverMetadata().token_endpoint).toBe(`${base}/token`);
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const redirect = 'http://127.0.0.1:8765/callback';
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirect,
      scope: `openid email ${SCOPE_BASE}/media.readonly`,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    const browser = await playBrowser(url.href);
    expect(browser.location).toBeTruthy();
    // What a loopback listener receives: the fragment never leaves the browser.
    const callback = new URL(browser.location!.split('#')[0]!);
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state });
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.refresh_token).toBeTruthy();
    expect(tokens.expiresIn()).toBeGreaterThan(3000);
    expect(tokens.claims()).toMatchObject({ email: 'alice@example.com', aud: DEFAULT_CLIENT_ID, iss: base });

    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect(refreshed.scope).toBe(`openid email ${SCOPE_BASE}/media.readonly`);

    const api = await request(`${base}/media/v3/channels?part=id&mine=true`, { headers: { authorization: `Bearer ${refreshed.access_token}` } });
    expect(api.statusCode).toBe(200);
    await api.body.dump();

    await client.tokenRevocation(config, refreshed.access_token);
    // Revoking the access token took its refresh token with it.
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });
});
