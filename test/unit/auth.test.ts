import { describe, expect, it } from 'vitest';
import { request } from 'undici';
import { escapeHtml, resultPage } from '../../src/auth/html.js';
import { startListener } from '../../src/auth/listener.js';
import { browserDecision } from '../../src/core/browser.js';
import { challengeS256, createPkce, createVerifier, VERIFIER_PATTERN } from '../../src/auth/pkce.js';
import { expandScope, missingScopes, parseScopes } from '../../src/auth/scopes.js';
import { checkRedirectUri, clientUsable, restoreClient, seedClients, type OAuthClient } from '@opsctl/mock/services/oauth/registry.js';

describe('PKCE', () => {
  it('matches the RFC 7636 appendix B vector', () => {
    expect(challengeS256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });
  it('makes 43-character verifiers of the unreserved alphabet, fresh each time', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const v = createVerifier();
      expect(v).toHaveLength(43);
      expect(v).toMatch(VERIFIER_PATTERN);
      expect(v).toMatch(/^[A-Za-z0-9\-._~]+$/);
      seen.add(v);
    }
    expect(seen.size).toBe(200);
    expect(createVerifier(96)).toHaveLength(128);
    const p = createPkce();
    expect(p.method).toBe('S256');
    expect(p.challenge).toBe(challengeS256(p.verifier));
  });
});

describe('loopback listener', () => {
  it('ignores stray requests, rejects a wrong state, takes the right one and closes', async () => {
    let wrong = 0;
    const l = await startListener({ state: 'good-state', onWrongState: () => wrong++ });
    expect(l.redirectUri).toBe(`http://127.0.0.1:${l.port}/`);
    const get = async (path: string) => {
      const r = await request(`http://127.0.0.1:${l.port}${path}`);
      return { status: r.statusCode, body: await r.body.text(), type: r.headers['content-type'] };
    };
    expect((await get('/favicon.ico')).status).toBe(404);
    // No state in the query: the page that reads the fragment (asked again with the marker, a 404 without one).
    const r = await request(`http://127.0.0.1:${l.port}/`);
    const csp = String(r.headers['content-security-policy']);
    const nonce = /script-src 'nonce-([\w-]+)'/.exec(csp)?.[1];
    expect(r.statusCode).toBe(200);
    expect(csp).toContain("default-src 'none'");
    const html = await r.body.text();
    expect(html).toContain(`<script nonce="${nonce}">`);
    expect(html).not.toMatch(/<script[^>]*src=/);
    expect((await get('/?opsctl_fragment=1')).status).toBe(404);
    expect((await get('/?code=abc&opsctl_fragment=1')).status).toBe(400);
    wrong = 0;
    expect((await get('/other?code=abc&state=good-state')).status).toBe(404);
    const bad = await get('/?code=abc&state=evil');
    expect(bad.status).toBe(400);
    expect(bad.body).toContain('does not match');
    expect(wrong).toBe(1);
    let settled = false;
    void l.result.then(() => (settled = true));
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false);

    const pending = get('/?code=the-code&state=good-state&scope=openid');
    const cb = await l.result;
    expect(cb.params).toMatchObject({ code: 'the-code', state: 'good-state', scope: 'openid' });
    cb.respond({ ok: true, title: 'Signed in', lines: ['as <b>x</b>'] });
    const page = await pending;
    expect(page.status).toBe(200);
    expect(page.type).toContain('text/html');
    expect(page.body).toContain('as &#60;b&#62;x&#60;/b&#62;');
    await l.close();
    await expect(request(`http://127.0.0.1:${l.port}/`)).rejects.toThrow();
  });

  it('accepts a pasted redirect URL, checking its state', async () => {
    const l = await startListener({ state: 's1' });
    expect(l.accept('not a url')).toMatch(/not a URL/);
    expect(l.accept(`http://127.0.0.1:${l.port}/?foo=1`)).toMatch(/no code/);
    expect(l.accept(`http://127.0.0.1:${l.port}/?code=c&state=s2`)).toMatch(/does not match/);
    expect(l.accept(`http://127.0.0.1:${l.port}/?code=c&state=s1`)).toBeUndefined();
    expect((await l.result).params.code).toBe('c');
    await l.close();
  });

  it('port in use → a usage error naming --port', async () => {
    const a = await startListener({ state: 'x' });
    await expect(startListener({ state: 'y', port: a.port })).rejects.toThrow(/--port: port \d+ on 127.0.0.1 is already in use/);
    await a.close();
  });
});

describe('HTML escaping', () => {
  it('escapes error values on the result page', () => {
    const evil = `<script>alert("x")</script>&'`;
    expect(escapeHtml(evil)).toBe('&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62;&#38;&#39;');
    const page = resultPage({ ok: false, title: evil, lines: [evil] });
    expect(page).not.toContain('<script>');
    expect(page).toContain('&#60;script&#62;');
  });
});

describe('small parts', () => {
  it('decides whether to open a browser', () => {
    expect(browserDecision({ DISPLAY: ':0' }, { browser: true, platform: 'linux' }).open).toBe(true);
    expect(browserDecision({}, { browser: true, platform: 'linux' })).toMatchObject({ open: false });
    expect(browserDecision({ WAYLAND_DISPLAY: 'w' }, { browser: true, platform: 'linux' }).open).toBe(true);
    expect(browserDecision({ DISPLAY: ':0', CI: '1' }, { browser: true, platform: 'linux' }).open).toBe(false);
    expect(browserDecision({ DISPLAY: ':0', SSH_CONNECTION: '1 2 3 4' }, { browser: true, platform: 'linux' }).open).toBe(false);
    expect(browserDecision({}, { browser: true, platform: 'darwin' }).open).toBe(true);
    expect(browserDecision({}, { browser: false, platform: 'darwin' })).toEqual({ open: false, reason: '--no-browser' });
    // BROWSER names the program to run: it needs no display (w3m, a script), and it was chosen for this session
    expect(browserDecision({ BROWSER: 'w3m' }, { browser: true, platform: 'linux' }).open).toBe(true);
    expect(browserDecision({ BROWSER: 'w3m', SSH_CONNECTION: '1 2 3 4' }, { browser: true, platform: 'linux' }).open).toBe(true);
    expect(browserDecision({ BROWSER: 'w3m', CI: '1' }, { browser: true, platform: 'linux' })).toEqual({ open: false, reason: 'CI is set' });
    expect(browserDecision({ BROWSER: 'w3m' }, { browser: false, platform: 'linux' }).open).toBe(false);
  });
  it('parses scopes', () => {
    expect(parseScopes(['openid,email', 'media.readonly'])).toEqual(['openid', 'email', 'https://www.googleapis.com/auth/media.readonly']);
    expect(expandScope('https://x.example/s')).toBe('https://x.example/s');
    expect(missingScopes(['a', 'b', 'c'], ['b'])).toEqual(['a', 'c']);
  });
});

describe('mock client registry', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  const byId = Object.fromEntries(seedClients(now).map((c) => [c.client_id, c])) as Record<string, OAuthClient>;
  const client = (id: string): OAuthClient => {
    const c = byId[id];
    if (!c) throw new Error(`no seeded client ${id}`);
    return c;
  };
  it('applies the redirect rules per client type', () => {
    const desktop = client('opsctl-desktop.apps.mock');
    expect(checkRedirectUri(desktop, 'http://127.0.0.1:1234/')).toEqual({ ok: true });
    expect(checkRedirectUri(desktop, 'http://[::1]:80')).toEqual({ ok: true });
    expect(checkRedirectUri(desktop, 'http://localhost:1234/')).toMatchObject({ error: 'redirect_uri_mismatch' });
    expect(checkRedirectUri(desktop, 'urn:ietf:wg:oauth:2.0:oob')).toMatchObject({ error: 'redirect_uri_mismatch' });
    const uni = client('universal.apps.mock');
    expect(checkRedirectUri(uni, 'com.example.universal:/cb')).toEqual({ ok: true });
    expect(checkRedirectUri(uni, 'com.example.universal://cb')).toMatchObject({ error: 'redirect_uri_mismatch' });
    expect(checkRedirectUri({ ...uni, schemes: ['com.example.' + 'a'.repeat(28)] }, `com.example.${'a'.repeat(28)}:/x`).ok).toBe(false);
    expect(checkRedirectUri({ ...uni, schemes: ['com.example.' + 'a'.repeat(27)] }, `com.example.${'a'.repeat(27)}:/x`).ok).toBe(true);
    expect(checkRedirectUri(client('mobile-a.apps.mock'), 'com.example.mobilea:/cb')).toMatchObject({ error: 'invalid_request' });
    expect(checkRedirectUri(client('mobile-a-schemes.apps.mock'), 'com.example.mobilea2:/cb')).toEqual({ ok: true });
    expect(checkRedirectUri(client('mobile-b.apps.mock'), 'nodot:/cb')).toMatchObject({ error: 'redirect_uri_mismatch' });
    expect(checkRedirectUri(client('mobile-b.apps.mock'), 'mock.apps.mobile-b:/cb')).toEqual({ ok: true });
  });
  it('restores deleted clients within 30 days only', () => {
    const recent = { ...client('deleted-recently.apps.mock') };
    expect(clientUsable(recent, now)).toMatchObject({ ok: false, error: 'deleted_client' });
    expect(restoreClient(recent, now)).toBeUndefined();
    expect(clientUsable(recent, now)).toEqual({ ok: true });
    const old = { ...client('deleted-long-ago.apps.mock') };
    expect(restoreClient(old, now)).toMatch(/more than 30 days/);
  });
});
