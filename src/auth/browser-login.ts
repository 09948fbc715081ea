import type { LoginDeps } from './deps.js';
import { AuthError, InterruptedError, OpsError, UsageError } from '../core/errors.js';
import { startListener, type Callback } from './listener.js';
import { createPkce, createState } from './pkce.js';
import { missingScopes } from './scopes.js';
import { toStored } from './session.js';
import { oauthSettings, type OAuthSettings } from './settings.js';
import { exchangeCode } from './token-client.js';
import { isLoopbackHost } from '../core/redact.js';
import { browserDecision } from '../core/browser.js';

export interface LoginOptions {
  scopes?: string[];
  loginHint?: string;
  /** false with --no-browser. */
  browser: boolean;
  timeoutMs: number;
  port?: number;
  /** Demo/test only, local mock only: submit the consent form over HTTP as this account instead of a browser. */
  consentAs?: string;
  /** Keep the tokens in the 0600 credential file, not the OS keyring. */
  insecureStorage?: boolean;
  /**
   * Incremental consent (`auth refresh --scopes`): ask only for `scopes`, with include_granted_scopes=true,
   * and keep the scopes this account was already granted.
   */
  incremental?: { account: string; granted: string[]; requested: string[]; refreshToken?: string; idToken?: string };
  /** What the sign-in is doing, for the verb to show (as the device flow's `show`): auth/ writes to no stream. */
  progress: (event: LoginProgress) => void;
}

/** The steps of a browser sign-in a person is told about, in order. */
export type LoginProgress =
  /** The authorization URL to open (not with --consent-as). */
  | { kind: 'open-url'; host: string; url: string }
  /** --consent-as: opsctl answers the mock's consent form itself. */
  | { kind: 'consent-as'; host: string; account: string }
  /** The system browser could not be launched. */
  | { kind: 'browser-failed' }
  /** No browser is launched (why), so the redirect may have to be pasted; `local`: the mock, which --consent-as can answer. */
  | { kind: 'no-browser'; reason: string; local: boolean; redirectUri: string }
  | { kind: 'waiting'; seconds: number }
  /** A response with the wrong state came in (a stale tab or a forged request) and was ignored. */
  | { kind: 'wrong-state' }
  /** A pasted line was not the redirect (why). */
  | { kind: 'paste-refused'; problem: string };

export interface LoginOutcome {
  account?: string;
  profile: string;
  scopes: string[];
  missing: string[];
  expiresAt?: number;
  refreshExpiresAt?: number;
  storedIn: string;
  /** `keyring` when the tokens went to the OS keyring. */
  storage: 'file' | 'keyring';
  authServer: string;
  /** Incremental consent only: the server ignored include_granted_scopes and opsctl kept the earlier grant on record. */
  unionKeptLocally?: boolean;
}

export function buildAuthorizeUrl(
  settings: OAuthSettings,
  p: { redirectUri: string; scopes: string[]; challenge: string; state: string; nonce: string; loginHint?: string; includeGrantedScopes?: boolean },
): string {
  const url = new URL(settings.authorizeUrl);
  const q = url.searchParams;
  q.set('client_id', settings.clientId);
  q.set('redirect_uri', p.redirectUri);
  q.set('response_type', 'code');
  q.set('scope', p.scopes.join(' '));
  q.set('code_challenge', p.challenge);
  q.set('code_challenge_method', 'S256');
  q.set('state', p.state);
  // OpenID Connect: the ID token must carry this back (checked before anything is stored). Only with
  // openid: a provider refuses a nonce without it (an incremental request for API scopes alone).
  if (p.scopes.includes('openid')) q.set('nonce', p.nonce);
  // Google-shaped servers issue a refresh token for access_type=offline; others ignore the parameter.
  q.set('access_type', 'offline');
  // OpenID Connect Core §11: offline_access is only honoured together with prompt=consent.
  if (p.scopes.includes('offline_access')) q.set('prompt', 'consent');
  if (p.loginHint) q.set('login_hint', p.loginHint);
  // Incremental authorization: the new grant includes what this user already granted this client.
  if (p.includeGrantedScopes) q.set('include_granted_scopes', 'true');
  return url.toString();
}

/**
 * The authorization endpoint accepts TLS only (seed 000; RFC 6749 §3.1): a plain-HTTP authorize URL off
 * this machine is refused before anything is printed or opened, since the browser would send the
 * request, and the person's session at the provider, in the clear. Loopback (a local mock) is allowed.
 */
function refusePlainHttpAuthorize(settings: OAuthSettings): void {
  const u = new URL(settings.authorizeUrl);
  if (u.protocol === 'https:' || isLoopbackHost(u.hostname)) return;
  throw new UsageError(`the authorization endpoint ${u.origin}${u.pathname} is plain HTTP: it accepts TLS only`, {
    code: 'insecure_authorize_url',
    field: settings.issuer ? 'issuer' : 'authorize_url',
    hint: `point profile ${settings.profile} at the provider's https:// address (opsctl config set ${settings.issuer ? 'issuer' : 'auth'} https://… --profile ${settings.profile}, or authorize_url if set by hand); nothing was opened`,
  });
}

/**
 * Installed-app sign-in (RFC 8252 + RFC 7636): PKCE S256, a random state, a one-shot loopback listener,
 * the system browser (or the printed URL, or a pasted redirect), the code exchange, and the tokens
 * stored 0600. Nothing is stored unless the whole flow succeeds.
 */
export async function login(ctx: LoginDeps, opts: LoginOptions): Promise<LoginOutcome> {
  await (await import('./preflight.js')).signInPreflight(ctx);
  // a sign-in writes the credential file anyway: a client secret an older opsctl left in config.json moves there now
  await (await import('./client-secret.js')).moveClientSecretsOutOfConfig(ctx, await ctx.profileName());
  const settings = await oauthSettings(ctx);
  const scopes = opts.scopes?.length ? opts.scopes : settings.defaultScopes;
  if (opts.consentAs && !settings.local) {
    throw new UsageError('--consent-as only works against a local mock authorization server', { field: 'consent-as', hint: 'sign in with a browser instead' });
  }
  refusePlainHttpAuthorize(settings);
  const pkceMethods = settings.metadata?.code_challenge_methods_supported;
  if (pkceMethods && !pkceMethods.includes('S256')) {
    // RFC 7636 §4.2: S256 is mandatory to implement; `plain` sends the verifier's equal through the browser.
    throw new OpsError(`the provider ${settings.authUrl} supports only PKCE ${pkceMethods.join(', ') || '(none)'}; opsctl signs in only with S256`, 1, {
      code: 'pkce_unsupported',
      field: 'issuer',
      hint: 'enable PKCE with S256 for this client at the provider (RFC 7636 makes S256 mandatory to implement)',
    });
  }
  const pkce = createPkce();
  const state = createState();
  const nonce = createState();
  const listener = await startListener({
    port: opts.port,
    state,
    onWrongState: () => opts.progress({ kind: 'wrong-state' }),
  });
  const url = buildAuthorizeUrl(settings, {
    redirectUri: listener.redirectUri,
    scopes,
    challenge: pkce.challenge,
    state,
    nonce,
    loginHint: opts.loginHint ?? opts.incremental?.account,
    includeGrantedScopes: Boolean(opts.incremental),
  });
  const cleanups: Array<() => void> = [() => void listener.close()];
  let consentFailed: Promise<never> | undefined;
  try {
    // --consent-as involves no browser: say what opsctl does instead of how to use one
    const host = new URL(settings.authUrl).host;
    if (!opts.consentAs) opts.progress({ kind: 'open-url', host, url });
    const decision = browserDecision(ctx.env, { browser: opts.browser && !opts.consentAs });
    if (opts.consentAs) {
      opts.progress({ kind: 'consent-as', host, account: opts.consentAs });
      ctx.debug(`authorization request ${url}`);
      const { submitConsent } = await import('./autoconsent.js');
      // Nobody else will answer: a consent that fails ends the wait at once (no 5-minute hang).
      const localError = settings.local ? () => ctx.inProcessServerError() : undefined;
      consentFailed = submitConsent(url, opts.consentAs, { http: await ctx.http('auth'), localError }).then(() => new Promise<never>(() => undefined));
    } else if (decision.open) {
      const opened = await ctx.openBrowser(url);
      if (!opened) opts.progress({ kind: 'browser-failed' });
    } else {
      opts.progress({ kind: 'no-browser', reason: decision.reason ?? 'no browser', local: settings.local, redirectUri: listener.redirectUri });
      cleanups.push(await readPastedUrls(ctx, (line) => listener.accept(line), opts.progress));
    }
    if (!opts.consentAs) opts.progress({ kind: 'waiting', seconds: Math.round(opts.timeoutMs / 1000) });
    const callback = await waitFor(ctx, consentFailed ? Promise.race([listener.result, consentFailed]) : listener.result, opts.timeoutMs);
    return await finish(ctx, settings, callback, {
      verifier: pkce.verifier,
      redirectUri: listener.redirectUri,
      scopes,
      nonce,
      insecure: Boolean(opts.insecureStorage),
      incremental: opts.incremental,
    });
  } finally {
    for (const fn of cleanups) fn();
    await listener.close();
  }
}

async function finish(
  ctx: LoginDeps,
  settings: OAuthSettings,
  cb: Callback,
  p: { verifier: string; redirectUri: string; scopes: string[]; nonce: string; insecure: boolean; incremental?: LoginOptions['incremental'] },
): Promise<LoginOutcome> {
  const { params } = cb;
  const issProblem = issuerParamProblem(settings, params.iss);
  if (issProblem) {
    cb.respond({ ok: false, title: 'Sign-in response rejected', lines: [issProblem, 'Nothing was stored.'] });
    throw new AuthError(`${issProblem}; nothing was stored`, {
      code: 'issuer_mismatch',
      hint: 'run opsctl login again; check the issuer setting (opsctl config get issuer)',
    });
  }
  if (params.error) {
    const denied = params.error === 'access_denied';
    cb.respond({
      ok: false,
      title: denied ? 'Access denied' : `Sign-in failed: ${params.error}`,
      lines: [params.error_description ?? params.error, 'Nothing was stored.'],
    });
    throw new AuthError(
      denied
        ? 'access was denied in the browser; nothing was stored'
        : `the authorization server refused: ${params.error}${params.error_description ? ` (${params.error_description})` : ''}`,
      {
        code: params.error,
        hint: denied
          ? 'run opsctl login again and choose Allow'
          : 'run opsctl login again; check the client settings (opsctl config get client_id) if it keeps failing',
      },
    );
  }
  let tokens;
  let unionKeptLocally = false;
  try {
    const res = await exchangeCode(ctx, settings, params.code as string, p.verifier, p.redirectUri);
    let claims: Record<string, unknown> | undefined;
    if (res.id_token) {
      const { verifyIdToken } = await import('./id-token.js');
      // A nonce was sent only with openid; an incremental grant may carry an ID token without one.
      claims = await verifyIdToken(ctx, settings, res.id_token, p.scopes.includes('openid') ? { nonce: p.nonce } : {});
    }
    tokens = toStored(res, ctx.now(), {}, settings, p.scopes);
    // Providers that keep the e-mail out of the ID token (oidc-provider, Keycloak by configuration) serve it at userinfo.
    const granted = (tokens.scope ?? '').split(/\s+/);
    if (claims && typeof claims.email !== 'string' && settings.userinfoUrl && granted.includes('email')) {
      const { userinfo } = await import('./userinfo.js');
      const info = await userinfo(ctx, settings.userinfoUrl, res.access_token);
      // OpenID Connect Core §5.3.2: userinfo about another subject is not to be used.
      if ('claims' in info && info.claims.sub === claims.sub && typeof info.claims.email === 'string') tokens.account = info.claims.email;
    }
    if (p.incremental) {
      if (tokens.account !== undefined && tokens.account !== p.incremental.account) {
        throw new AuthError(`signed in as ${tokens.account}, not ${p.incremental.account}: nothing was stored`, {
          code: 'wrong_account',
          hint: `run opsctl auth refresh again and choose ${p.incremental.account} on the sign-in page (or opsctl login to add ${tokens.account} as another account)`,
        });
      }
      tokens.account = p.incremental.account;
      // A provider that issues no new refresh token for the added scopes (no offline_access asked): the
      // earlier one stays, and so does the earlier ID token (nothing new asked about the user).
      tokens.refresh_token ??= p.incremental.refreshToken;
      tokens.id_token ??= p.incremental.idToken;
      // The server's grant includes the earlier scopes when it honours include_granted_scopes; when it
      // ignores the parameter, the earlier grant still stands at the server (refresh tokens keep it), and
      // opsctl keeps it on record so status and scripts see the whole grant.
      const got = new Set((tokens.scope ?? '').split(/\s+/).filter(Boolean));
      unionKeptLocally = p.incremental.granted.some((s) => !got.has(s));
      tokens.scope = [...new Set([...p.incremental.granted, ...got])].join(' ');
      tokens.requested_scope = [...new Set([...p.incremental.requested, ...p.scopes])].join(' ');
    }
  } catch (err) {
    cb.respond({ ok: false, title: 'Sign-in failed', lines: [(err as Error).message, 'Return to the terminal for details.'] });
    throw err;
  }
  const creds = await ctx.credentials();
  const { saveAccount } = await import('./accounts.js');
  const { previous, storage } = await saveAccount(ctx, settings.profile, tokens, { insecure: p.insecure });
  // The sign-in of this account at this server that this one replaces: withdraw its grant so refresh
  // tokens do not pile up toward the server's cap (other accounts keep theirs).
  // (Not after an incremental grant the server did not merge with the earlier one: that grant stands.)
  if (
    previous?.refresh_token &&
    previous.refresh_token !== tokens.refresh_token &&
    !unionKeptLocally &&
    (previous.token_url ?? settings.tokenUrl) === settings.tokenUrl
  ) {
    const { revokeToken } = await import('./token-client.js');
    await revokeToken(ctx, settings, previous.refresh_token).catch((err: Error) => ctx.debug(`[auth] revoking the previous sign-in failed: ${err.message}`));
  }
  const granted = (tokens.scope ?? '').split(/\s+/).filter(Boolean);
  const missing = missingScopes(p.incremental ? [...new Set([...p.incremental.requested, ...p.scopes])] : p.scopes, granted);
  cb.respond({
    ok: true,
    title: 'Signed in to opsctl',
    lines: [`Signed in${tokens.account ? ` as ${tokens.account}` : ''}.`, ...(missing.length ? [`Not granted: ${missing.join(' ')}`] : [])],
  });
  return {
    account: tokens.account,
    profile: settings.profile,
    scopes: granted,
    missing,
    expiresAt: tokens.expires_at,
    refreshExpiresAt: tokens.refresh_expires_at,
    storedIn: storage === 'keyring' ? 'OS keyring' : creds.path,
    storage,
    authServer: settings.authUrl,
    unionKeptLocally,
  };
}

/** RFC 9207: an `iss` in the authorization response must be the issuer; one that promises it must send it. */
function issuerParamProblem(settings: OAuthSettings, iss: string | undefined): string | undefined {
  const expected = settings.issuer;
  if (!expected) return undefined;
  if (iss === undefined)
    return settings.metadata?.authorization_response_iss_parameter_supported
      ? `the sign-in response carries no "iss", which ${expected} promises (RFC 9207)`
      : undefined;
  return iss === expected ? undefined : `the sign-in response comes from issuer ${iss}, not ${expected} (a mix-up or forged response)`;
}

function waitFor<T>(ctx: LoginDeps, result: Promise<T>, timeoutMs: number): Promise<T> {
  ctx.handlesInterrupt = true;
  return new Promise<T>((resolve, reject) => {
    const signal = ctx.abort.signal;
    const onAbort = () => done(() => reject(new InterruptedError('sign-in interrupted; nothing was stored')));
    const timer = setTimeout(
      () =>
        done(() =>
          reject(
            new AuthError(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for the browser; nothing was stored`, {
              code: 'timeout',
              hint: 'run opsctl login again (give more time with --timeout 10m; on a remote machine use --no-browser and paste the redirected URL)',
            }),
          ),
        ),
      timeoutMs,
    );
    function done(fn: () => void) {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      fn();
    }
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    result.then(
      (v) => done(() => resolve(v)),
      (e: Error) => done(() => reject(e)),
    );
  });
}

/** Reads pasted redirect URLs from stdin (remote/SSH sign-in); returns a stop function. */
async function readPastedUrls(ctx: LoginDeps, accept: (line: string) => string | undefined, progress: LoginOptions['progress']): Promise<() => void> {
  // node:readline only on this path: a sign-in through a browser never reads stdin.
  const { createInterface } = await import('node:readline');
  const rl = createInterface({ input: ctx.io.stdin, terminal: false });
  rl.on('line', (line) => {
    if (!line.trim()) return;
    const problem = accept(line);
    if (problem) progress({ kind: 'paste-refused', problem });
  });
  rl.on('error', () => undefined);
  return () => rl.close();
}
