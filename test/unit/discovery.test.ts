import { describe, expect, it } from 'vitest';
import { issuerProblem, metadataCachePath, oidcDiscoveryUrl, rfc8414Url } from '../../src/auth/discovery.js';
import { parseScopes } from '../../src/auth/scopes.js';
import { configuredIssuer } from '../../src/config/server-id.js';

describe('where a provider publishes its metadata', () => {
  it.each([
    // [issuer, OpenID Connect Discovery §4, RFC 8414 §3.1]
    [
      'https://accounts.google.com',
      'https://accounts.google.com/.well-known/openid-configuration',
      'https://accounts.google.com/.well-known/oauth-authorization-server',
    ],
    [
      'https://example.eu.auth0.com/',
      'https://example.eu.auth0.com/.well-known/openid-configuration',
      'https://example.eu.auth0.com/.well-known/oauth-authorization-server',
    ],
    [
      'https://sso.example.com/realms/ops',
      'https://sso.example.com/realms/ops/.well-known/openid-configuration',
      'https://sso.example.com/.well-known/oauth-authorization-server/realms/ops',
    ],
    [
      'https://example.okta.com/oauth2/default',
      'https://example.okta.com/oauth2/default/.well-known/openid-configuration',
      'https://example.okta.com/.well-known/oauth-authorization-server/oauth2/default',
    ],
    [
      'https://login.microsoftonline.com/TENANT/v2.0/',
      'https://login.microsoftonline.com/TENANT/v2.0/.well-known/openid-configuration',
      'https://login.microsoftonline.com/.well-known/oauth-authorization-server/TENANT/v2.0',
    ],
    [
      'http://127.0.0.1:5556/dex',
      'http://127.0.0.1:5556/dex/.well-known/openid-configuration',
      'http://127.0.0.1:5556/.well-known/oauth-authorization-server/dex',
    ],
  ])('%s', (issuer, oidc, rfc8414) => {
    expect(oidcDiscoveryUrl(issuer)).toBe(oidc);
    expect(rfc8414Url(issuer)).toBe(rfc8414);
  });

  it('an issuer is an http(s) URL without query or fragment', () => {
    expect(issuerProblem('https://sso.example.com/realms/ops')).toBeUndefined();
    expect(issuerProblem('sso.example.com')).toBe('is not a URL');
    expect(issuerProblem('ftp://sso.example.com')).toBe('must be an https:// URL');
    expect(issuerProblem('https://sso.example.com/?tenant=1')).toBe('must not have a query or fragment');
    expect(issuerProblem('https://sso.example.com/#x')).toBe('must not have a query or fragment');
  });

  it('one cache file per issuer, exactly as written (a trailing slash is another issuer)', () => {
    const a = metadataCachePath('/d', 'https://x.example/');
    expect(a).toMatch(/^\/d\/oidc-metadata\/[0-9a-f]{24}\.json$/);
    expect(metadataCachePath('/d', 'https://x.example')).not.toBe(a);
  });
});

describe('issuer profiles', () => {
  it('OPSCTL_ISSUER beats the profile; OPSCTL_AUTH_URL points the auth service elsewhere and turns discovery off', () => {
    expect(configuredIssuer({}, { issuer: 'https://p.example' })).toBe('https://p.example');
    expect(configuredIssuer({ OPSCTL_ISSUER: 'https://e.example' }, { issuer: 'https://p.example' })).toBe('https://e.example');
    expect(configuredIssuer({ OPSCTL_AUTH_URL: 'http://127.0.0.1:1' }, { issuer: 'https://p.example' })).toBeUndefined();
  });

  it('scopes: OpenID Connect scopes never expand; an issuer profile keeps every scope as written', () => {
    expect(parseScopes(['openid offline_access media.readonly'])).toEqual(['openid', 'offline_access', 'https://www.googleapis.com/auth/media.readonly']);
    expect(parseScopes(['openid', 'okta.users.read,roles'], { expand: false })).toEqual(['openid', 'okta.users.read', 'roles']);
  });
});
