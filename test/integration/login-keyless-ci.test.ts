import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempConfigDir } from '../helpers/cli.js';
import { OIDC_CLIENT_ID, startOidcProvider } from '../helpers/oidc-provider.mjs';

/**
 * Keyless CI sign-in (RFC 8693): a CI provider's OIDC token, signed by a key the provider trusts, is
 * exchanged for an access token (`login --with-oidc-token FILE|-`, OPSCTL_OIDC_TOKEN_FILE); no browser,
 * no stored refresh token. Against the embedded mock trusting a key set the test made (as a CI issuer's).
 * `auth token --adc FILE` writes the credentials other tools read, in gcloud's application-default shape.
 */
const cfg = tempConfigDir('opsctl-keyless-');
let jwksDoc: { keys: unknown[] };
let sign: (claims: Record<string, unknown>, aud?: string) => Promise<string>;
let env: NodeJS.ProcessEnv;
const file = (name: string, text: string) => (writeFileSync(join(cfg.dir, name), text), join(cfg.dir, name));

beforeAll(async () => {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  jwksDoc = { keys: [{ ...(await exportJWK(publicKey)), kid: 'ci-1', alg: 'ES256', use: 'sig' }] };
  const jwks = file('ci-jwks.json', JSON.stringify(jwksDoc));
  sign = (claims, aud = 'opsctl') =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 'ci-1' })
      .setIssuer('https://token.ci.example')
      .setAudience(aud)
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(privateKey);
  env = { OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_MOCK_TRUST_JWKS: jwks };
});
afterAll(() => cfg.cleanup());

describe('login --with-oidc-token (the embedded mock trusting a CI key set)', () => {
  it('exchanges the CI token: signed in as the CI identity, the token never printed, then the label service answers', async () => {
    const token = await sign({ sub: 'repo:ops/deploy:ref:refs/heads/main', email: 'deploy-bot@ci.example' });
    const ci = file('ci-token', `${token}\n`);
    const r = await runCli(['login', '--with-oidc-token', ci, '--insecure-storage', '--json'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json<{ account: string; via: string }>()).toMatchObject({ account: 'deploy-bot@ci.example', via: 'token-exchange' });
    expect(r.stdout + r.stderr).not.toContain(token);
    const status = await runCli(['auth', 'status', '--json'], { env });
    expect(status.json<{ account: string }>().account).toBe('deploy-bot@ci.example');
    expect((await runCli(['labels', 'list'], { env })).code).toBe(0);
  });

  it('from stdin, and from OPSCTL_OIDC_TOKEN_FILE with no flag', async () => {
    const piped = await runCli(['login', '--with-oidc-token', '-', '--insecure-storage', '--json'], { env, stdin: await sign({ sub: 'job-1' }) });
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.json<{ account: string }>().account).toBe('job-1');
    const viaEnv = await runCli(['login', '--insecure-storage', '--json'], {
      env: { ...env, OPSCTL_OIDC_TOKEN_FILE: file('t2', await sign({ sub: 'job-2' })) },
    });
    expect(viaEnv.code, viaEnv.stderr).toBe(0);
    expect(viaEnv.json<{ account: string }>().account).toBe('job-2');
  });

  it('refused: another audience, an unknown key, not a JWT, an empty file (exit 4 or 2, nothing stored)', async () => {
    const before = readFileSync(join(cfg.dir, 'credentials.json'), 'utf8');
    const aud = await runCli(['login', '--with-oidc-token', file('aud', await sign({ sub: 'x' }, 'someone-else')), '--insecure-storage'], { env });
    expect(aud.code).toBe(4);
    expect(aud.stderr).toContain('the provider refused the CI token');
    expect(aud.stderr).toMatch(/aud/);
    const other = await generateKeyPair('ES256');
    const forged = await new SignJWT({ sub: 'x' })
      .setProtectedHeader({ alg: 'ES256', kid: 'ci-1' })
      .setIssuer('i')
      .setAudience('opsctl')
      .setExpirationTime('5m')
      .sign(other.privateKey);
    expect((await runCli(['login', '--with-oidc-token', file('forged', forged), '--insecure-storage'], { env })).code).toBe(4);
    const junk = await runCli(['login', '--with-oidc-token', file('junk', 'not a token'), '--insecure-storage'], { env });
    expect(junk.code).toBe(2);
    expect(junk.stderr).toContain('not a JWT');
    const empty = await runCli(['login', '--with-oidc-token', file('empty', '\n')], { env });
    expect(empty.code).toBe(2);
    expect(readFileSync(join(cfg.dir, 'credentials.json'), 'utf8')).toBe(before);
    const combined = await runCli(['login', '--with-oidc-token', file('c', 'x'), '--device'], { env });
    expect(combined.code).toBe(2);
    // the trust file is checked before anything listens (mock serve) or starts (the embedded mock)
    const serve = await runCli(['mock', 'serve', '--memory', '--trust-jwks', join(cfg.dir, 'missing.json')], { env });
    expect(serve.code).toBe(2);
    expect(serve.stderr).toContain('--trust-jwks:');
    const notJwks = await runCli(['labels', 'list'], { env: { ...env, OPSCTL_MOCK_TRUST_JWKS: file('nokeys.json', '{}') } });
    expect(notJwks.code).toBe(2);
    expect(notJwks.stderr).toContain('is not a JSON Web Key Set');
  });
});

describe('login --with-oidc-token against an independent provider (oidc-provider with an RFC 8693 grant)', () => {
  it("exchanges at the issuer's token endpoint; a token for another audience is refused with the provider's error", async () => {
    const op = await startOidcProvider({ tokenExchange: { jwks: jwksDoc, audience: 'opsctl' } });
    try {
      const opEnv = { OPSCTL_CONFIG_DIR: join(cfg.dir, 'op'), OPSCTL_ISSUER: op.issuer, OPSCTL_CLIENT_ID: OIDC_CLIENT_ID };
      const ok = await runCli(
        ['login', '--with-oidc-token', file('op-token', await sign({ sub: 'ci-runner-7' })), '--scopes', 'api:read', '--insecure-storage', '--json'],
        {
          env: opEnv,
        },
      );
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.json<{ account: string; scopes: string[] }>()).toMatchObject({ account: 'ci-runner-7', scopes: ['api:read'] });
      const token = await runCli(['auth', 'token'], { env: opEnv });
      expect(token.code, token.stderr).toBe(0);
      expect(token.stdout.trim().length).toBeGreaterThan(20);
      const bad = await runCli(['login', '--with-oidc-token', file('op-bad', await sign({ sub: 'x' }, 'elsewhere')), '--insecure-storage'], { env: opEnv });
      expect(bad.code).toBe(4);
      expect(bad.stderr).toContain('invalid_request');
    } finally {
      await op.close();
    }
  });
});

describe('auth token --adc', () => {
  it('a keyless CI job: an external_account file naming the CI token file and the token endpoint, mode 0600', async () => {
    const ciFile = file('ci-adc-token', await sign({ sub: 'job-adc' }));
    const r = await runCli(['auth', 'token', '--adc', join(cfg.dir, 'adc-ci.json')], { env: { ...env, OPSCTL_OIDC_TOKEN_FILE: ciFile } });
    expect(r.code, r.stderr).toBe(0);
    const path = join(cfg.dir, 'adc-ci.json');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const doc = JSON.parse(readFileSync(path, 'utf8')) as Record<string, any>;
    expect(doc).toMatchObject({ type: 'external_account', subject_token_type: 'urn:ietf:params:oauth:token-type:jwt', credential_source: { file: ciFile } });
    expect(doc.token_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/token$/);
    expect(r.stdout).toBe('');
  });

  it('a signed-in person: an authorized_user file with the client and refresh token, nothing secret on the terminal', async () => {
    const login = await runCli(['login', '--consent-as', 'alice@example.com', '--insecure-storage'], { env });
    expect(login.code, login.stderr).toBe(0);
    const path = join(cfg.dir, 'adc-user.json');
    const r = await runCli(['auth', 'token', '--adc', path], { env });
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(readFileSync(path, 'utf8')) as Record<string, string>;
    expect(doc.type).toBe('authorized_user');
    expect(doc.client_id).toBeTruthy();
    expect(doc.refresh_token).toBeTruthy();
    expect(r.stdout + r.stderr).not.toContain(doc.refresh_token);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });
});
