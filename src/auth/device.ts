import type { SignInDeps } from './deps.js';
import { AuthError, InterruptedError, OpsError } from '../core/errors.js';
import type { LoginOutcome } from './browser-login.js';
import { missingScopes } from './scopes.js';
import { toStored } from './session.js';
import { oauthSettings, type OAuthSettings } from './settings.js';
import type { TokenResponse } from './token-client.js';

/** What the device authorization endpoint answered (RFC 8628 §3.2), checked. */
export interface DeviceCode {
  deviceCode: string;
  userCode: string;
  verificationUri: string;
  verificationUriComplete?: string;
  expiresIn: number;
  interval: number;
}

/** RFC 8628 §3.5: 5 s when the server names no interval; each slow_down adds 5 s. */
export const DEFAULT_INTERVAL_S = 5;
export const SLOW_DOWN_S = 5;

export interface DeviceLoginOptions {
  scopes?: string[];
  insecureStorage?: boolean;
  /** Shows the code as a QR code (a terminal that can show one; never on a pipe or with --json). */
  show: (code: DeviceCode) => void;
}

/** Where the provider takes device sign-ins: its metadata's device_authorization_endpoint, or a refusal naming what is missing. */
export async function deviceEndpoint(ctx: SignInDeps, settings: OAuthSettings): Promise<string> {
  const { providerMetadata } = await import('./discovery.js');
  let md = settings.metadata;
  // A metadata cache from before this field was read, or a provider that added the grant since: look again.
  if (md && !md.device_authorization_endpoint && settings.issuer) md = await providerMetadata(ctx, settings.issuer, { cache: false });
  let why = '';
  if (!md) {
    // A profile with endpoints only (the embedded mock, OPSCTL_AUTH_URL): the auth server's own discovery document.
    md = await providerMetadata(ctx, settings.authUrl, { cache: !settings.local }).catch((err: Error) => {
      why = ` (${err.message})`;
      return undefined;
    });
  }
  if (md?.device_authorization_endpoint) return md.device_authorization_endpoint;
  throw new OpsError(
    `the provider ${settings.authUrl} does not offer the device authorization grant: its metadata names no device_authorization_endpoint${why}`,
    1,
    {
      code: 'device_unsupported',
      field: 'device',
      hint: 'sign in with a browser instead: opsctl login --no-browser (open the URL on any machine and paste the redirected address back), or enable the device flow (RFC 8628) at the provider',
    },
  );
}

function checkDeviceCode(f: Record<string, unknown>, url: string): DeviceCode {
  // Google's endpoint says verification_url; RFC 8628 says verification_uri.
  const uri = f.verification_uri ?? f.verification_url;
  const bad = (what: string) =>
    new OpsError(`the device authorization endpoint ${url} answered without ${what}`, 1, {
      code: 'bad_device_response',
      hint: 'sign in with a browser instead: opsctl login --no-browser',
    });
  if (typeof f.device_code !== 'string' || !f.device_code) throw bad('a device_code');
  if (typeof f.user_code !== 'string' || !f.user_code) throw bad('a user_code');
  if (typeof uri !== 'string' || !/^https?:\/\//.test(uri)) throw bad('a verification_uri');
  const complete =
    typeof f.verification_uri_complete === 'string' && /^https?:\/\//.test(f.verification_uri_complete) ? f.verification_uri_complete : undefined;
  const expiresIn = Number(f.expires_in);
  const interval = Number(f.interval ?? DEFAULT_INTERVAL_S);
  return {
    deviceCode: f.device_code,
    userCode: f.user_code,
    verificationUri: uri,
    verificationUriComplete: complete,
    expiresIn: Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : 600,
    interval: Number.isFinite(interval) && interval > 0 ? interval : DEFAULT_INTERVAL_S,
  };
}

/** Waits `ms`, or rejects with exit 130 on Ctrl-C. */
function pause(ctx: SignInDeps, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const signal = ctx.abort.signal;
    const onAbort = () => {
      clearTimeout(timer);
      reject(new InterruptedError('device sign-in interrupted; nothing was stored'));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Polls the token endpoint at the server's interval until the person approves (the tokens), denies
 * (exit 4, access_denied) or the code expires (exit 4, expired_token); slow_down adds 5 s for good.
 */
export async function pollForTokens(ctx: SignInDeps, settings: OAuthSettings, code: DeviceCode): Promise<TokenResponse> {
  const { pollDeviceToken } = await import('./token-client.js');
  let interval = code.interval;
  const deadline = ctx.now() + code.expiresIn * 1000;
  const again = 'run opsctl login --device again';
  for (;;) {
    await pause(ctx, interval * 1000);
    if (ctx.abort.signal.aborted) throw new InterruptedError('device sign-in interrupted; nothing was stored');
    const answer = await pollDeviceToken(ctx, settings, code.deviceCode);
    if ('tokens' in answer) return answer.tokens;
    switch (answer.error) {
      case 'authorization_pending':
        ctx.debug('[auth] device sign-in: authorization_pending');
        break;
      case 'slow_down':
        interval += SLOW_DOWN_S;
        ctx.debug(`[auth] device sign-in: slow_down, polling every ${interval} s now`);
        break;
      case 'expired_token':
        throw new AuthError(`the code ${code.userCode} expired before anyone approved it (expired_token); nothing was stored`, {
          code: 'expired_token',
          hint: `${again} and enter the new code within ${Math.round(code.expiresIn / 60)} minutes`,
        });
      case 'access_denied':
        throw new AuthError(`the sign-in was denied on the verification page (access_denied); nothing was stored`, {
          code: 'access_denied',
          hint: `${again} and choose Allow`,
        });
      default:
        throw new AuthError(`the device sign-in failed at the token endpoint: ${answer.error}${answer.description ? ` (${answer.description})` : ''}`, {
          code: answer.error,
          hint:
            answer.error === 'unauthorized_client' || answer.error === 'invalid_client'
              ? `enable the device authorization grant for client ${settings.clientId} at the provider`
              : again,
        });
    }
    // A server that never says expired_token: stop at the expiry it announced.
    if (ctx.now() >= deadline + interval * 1000) {
      throw new AuthError(`the code ${code.userCode} expired before anyone approved it; nothing was stored`, {
        code: 'expired_token',
        hint: again,
      });
    }
  }
}

/**
 * `opsctl login --device` (RFC 8628): asks for a user code, shows it with the verification URL, polls
 * the token endpoint, then checks and stores the tokens as a browser sign-in does. Nothing is stored
 * unless the whole flow succeeds.
 */
export async function deviceLogin(ctx: SignInDeps, opts: DeviceLoginOptions): Promise<LoginOutcome> {
  await (await import('./preflight.js')).signInPreflight(ctx);
  // a sign-in writes the credential file anyway: a client secret an older opsctl left in config.json moves there now
  await (await import('./client-secret.js')).moveClientSecretsOutOfConfig(ctx, await ctx.profileName());
  const settings = await oauthSettings(ctx);
  const scopes = opts.scopes?.length ? opts.scopes : settings.defaultScopes;
  const endpoint = await deviceEndpoint(ctx, settings);
  const { requestDeviceCode } = await import('./token-client.js');
  const code = checkDeviceCode(await requestDeviceCode(ctx, settings, endpoint, scopes), endpoint);
  ctx.handlesInterrupt = true;
  opts.show(code);
  const res = await pollForTokens(ctx, settings, code);

  let claims: Record<string, unknown> | undefined;
  if (res.id_token) {
    const { verifyIdToken } = await import('./id-token.js');
    // No nonce in the device grant (RFC 8628 has no authorization request to carry one).
    claims = await verifyIdToken(ctx, settings, res.id_token, {});
  }
  const tokens = toStored(res, ctx.now(), {}, settings, scopes);
  const granted = (tokens.scope ?? '').split(/\s+/).filter(Boolean);
  if (claims && typeof claims.email !== 'string' && settings.userinfoUrl && granted.includes('email')) {
    const { userinfo } = await import('./userinfo.js');
    const info = await userinfo(ctx, settings.userinfoUrl, res.access_token);
    if ('claims' in info && info.claims.sub === claims.sub && typeof info.claims.email === 'string') tokens.account = info.claims.email;
  }
  const creds = await ctx.credentials();
  const { saveAccount } = await import('./accounts.js');
  const { previous, storage } = await saveAccount(ctx, settings.profile, tokens, { insecure: Boolean(opts.insecureStorage) });
  if (previous?.refresh_token && previous.refresh_token !== tokens.refresh_token && (previous.token_url ?? settings.tokenUrl) === settings.tokenUrl) {
    const { revokeToken } = await import('./token-client.js');
    await revokeToken(ctx, settings, previous.refresh_token).catch((err: Error) => ctx.debug(`[auth] revoking the previous sign-in failed: ${err.message}`));
  }
  return {
    account: tokens.account,
    profile: settings.profile,
    scopes: granted,
    missing: missingScopes(scopes, granted),
    expiresAt: tokens.expires_at,
    refreshExpiresAt: tokens.refresh_expires_at,
    storedIn: storage === 'keyring' ? 'OS keyring' : creds.path,
    storage,
    authServer: settings.authUrl,
  };
}
