import type { OAuthTokens } from '../../config/credentials.js';
import type { Context } from '../../context.js';
import { AuthError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { accountColumns } from './columns.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './status.spec.js';
import { configuredIssuer } from '../../config/server-id.js';

export type Options = OptionsOf<typeof spec>;

export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  if (opts.all) return everyProfile(ctx);
  const { missingScopes, shortScope } = await import('../../auth/scopes.js');
  const profile = await ctx.profileName();
  const creds = await ctx.credentials();
  const now = ctx.now();
  const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
  const inSeconds = (ms: number | undefined) => (ms === undefined ? null : Math.round((ms - now) / 1000));

  if (ctx.env.OPSCTL_ACCESS_TOKEN) {
    const { info, rejected } = await tokenInfo(ctx, ctx.env.OPSCTL_ACCESS_TOKEN);
    if (rejected) {
      throw new AuthError(`the server does not accept OPSCTL_ACCESS_TOKEN (${rejected})`, {
        code: 'invalid_token',
        hint: 'get a new access token for OPSCTL_ACCESS_TOKEN, or unset it to use the sign-in of opsctl login',
      });
    }
    const scopes = typeof info?.scope === 'string' ? info.scope.split(' ') : null;
    const expiresAt = info?.exp ? Number(info.exp) * 1000 : undefined;
    const data = {
      signed_in: true,
      profile,
      source: 'environment',
      source_detail: 'OPSCTL_ACCESS_TOKEN',
      stored_in: null,
      account: (info?.email as string | undefined) ?? (info?.sub as string | undefined) ?? null,
      scopes,
      missing_scopes: [],
      access_token_expires_at: iso(expiresAt),
      access_token_expires_in: inSeconds(expiresAt),
      refresh_token: false,
      refresh_token_expires_at: null,
    };
    const lines = [
      `source:    environment (OPSCTL_ACCESS_TOKEN; it beats stored tokens and is never refreshed)`,
      `account:   ${data.account ?? 'unknown (the server has no tokeninfo for it)'}`,
      `granted:   ${scopes ? scopes.map(shortScope).join(' ') : 'unknown'}`,
      `expires:   ${data.access_token_expires_at ?? 'unknown'}`,
    ];
    return { data, text: lines.join('\n') };
  }

  if (ctx.env.OPSCTL_REFRESH_TOKEN) {
    // The CI account: one refresh proves it still works (invalid_grant is exit 4); nothing is stored.
    const t = await (await import('../../auth/env-account.js')).envTokens(ctx);
    const scopes = (t.scope ?? '').split(/\s+/).filter(Boolean);
    const data = {
      signed_in: true,
      profile,
      source: 'environment',
      source_detail: 'OPSCTL_REFRESH_TOKEN',
      stored_in: null,
      account: t.account ?? null,
      scopes,
      missing_scopes: [],
      access_token_expires_at: iso(t.expires_at),
      access_token_expires_in: inSeconds(t.expires_at),
      refresh_token: true,
      refresh_token_expires_at: iso(t.refresh_expires_at),
    };
    const lines = [
      `source:    environment (OPSCTL_REFRESH_TOKEN; refreshed in memory as needed, never stored)`,
      `account:   ${data.account ?? 'unknown (no openid/email scope)'}`,
      `granted:   ${scopes.map(shortScope).join(' ') || '(none)'}`,
      `expires:   ${data.access_token_expires_at ?? 'unknown'} (refreshed automatically)`,
    ];
    return { data, text: lines.join('\n') };
  }

  const { listAccounts, assertBoundHere, withSecrets, accountHere, serverHere } = await import('../../auth/accounts.js');
  const { accounts, active } = await listAccounts(ctx, profile);
  const record = accountHere(accounts, undefined, active, await serverHere(ctx, profile));
  if (!record) {
    await (await import('../../config/profile-check.js')).assertProfileExists(ctx, profile);
    throw new AuthError(`not signed in (profile ${profile})`, { code: 'not_signed_in', hint: 'run: opsctl login   (or set OPSCTL_ACCESS_TOKEN)' });
  }
  // Signed in at another server than the profile's: say so (exit 4), and send that server nothing.
  await assertBoundHere(ctx, profile, record);
  if (record.refresh_expires_at !== undefined && record.refresh_expires_at <= now) {
    throw new AuthError(`the sign-in of ${record.account} has ended: its time-based access expired at ${iso(record.refresh_expires_at)}`, {
      code: 'invalid_grant',
      hint: 'run: opsctl login',
    });
  }
  let stored: Omit<OAuthTokens, 'access_token'> & { account: string; access_token?: string } = record;
  // A grant revoked elsewhere (security page, admin) looks fine locally: ask the server about the access
  // token, and when it refuses it, a refresh tells whether the sign-in survives (invalid_grant → exit 4).
  // (Not against the embedded mock, which only opsctl itself changes: status stays cheap there, and
  // never reads the keyring.)
  const issuer = configuredIssuer(ctx.env, await ctx.profile());
  const remote = Boolean(ctx.env.OPSCTL_AUTH_URL ?? (await ctx.profile()).auth ?? issuer);
  if (remote && (stored.expires_at === undefined || stored.expires_at > now)) {
    const full = await withSecrets(ctx, profile, record);
    // Any provider (an issuer): its userinfo endpoint says whether it still takes the token; else Google's tokeninfo.
    const { rejected } = issuer ? await userinfoCheck(ctx, full.access_token, full.scope) : await tokenInfo(ctx, full.access_token, full.token_url);
    if (rejected) {
      ctx.debug(`[auth] the server refused the stored access token (${rejected}); trying a refresh`);
      const { freshAccessToken } = await import('../../auth/session.js');
      stored = { ...(await freshAccessToken(ctx, { force: true })), account: record.account };
    }
  }
  const granted = (stored.scope ?? '').split(/\s+/).filter(Boolean);
  const requested = (stored.requested_scope ?? '').split(/\s+/).filter(Boolean);
  const missing = missingScopes(requested, granted);
  const storedIn = record.storage === 'keyring' ? 'OS keyring' : creds.path;
  const data = {
    signed_in: true,
    profile,
    source: 'file',
    source_detail: creds.path,
    stored_in: storedIn,
    account: stored.account,
    accounts: accounts.map((a) => a.account),
    issuer: record.issuer ?? null,
    scopes: granted,
    missing_scopes: missing,
    access_token_expires_at: iso(stored.expires_at),
    access_token_expires_in: inSeconds(stored.expires_at),
    refresh_token: record.storage === 'keyring' ? true : Boolean(stored.refresh_token),
    refresh_token_expires_at: iso(stored.refresh_expires_at),
    client_id: stored.client_id ?? null,
  };
  const expiry =
    stored.expires_at === undefined
      ? 'unknown'
      : stored.expires_at <= now
        ? `expired at ${iso(stored.expires_at)} (refreshed on next use)`
        : `${iso(stored.expires_at)} (in ${inSeconds(stored.expires_at)} s; refreshed automatically)`;
  const lines = [
    `account:   ${stored.account}${accounts.length > 1 ? `  (active; ${accounts.length - 1} more: opsctl auth list)` : ''}`,
    `profile:   ${profile}`,
    `issuer:    ${record.issuer === 'embedded' ? 'the embedded mock' : (record.issuer ?? 'unknown (signed in by an older opsctl)')}`,
    `granted:   ${granted.map(shortScope).join(' ') || '(none)'}`,
    `missing:   ${missing.length ? missing.map(shortScope).join(' ') : '(none)'}`,
    `access:    ${expiry}`,
    `refresh:   ${data.refresh_token ? (stored.refresh_expires_at ? `time-based, until ${iso(stored.refresh_expires_at)}` : 'until revoked') : 'none (sign in again when the access token expires)'}`,
    `source:    file`,
    `stored in: ${storedIn}`,
  ];
  return { data, text: lines.join('\n') };
}

/** `auth status --all`: every account of every profile, and exit 4 when an active one cannot be used. */
async function everyProfile(ctx: Context): Promise<CommandResult> {
  const [{ accountRows }, { shortScope }] = await Promise.all([import('../../auth/accounts.js'), import('../../auth/scopes.js')]);
  const rows = await accountRows(ctx);
  if (rows.length === 0)
    throw new AuthError('not signed in on any profile', { code: 'not_signed_in', hint: 'run: opsctl login   (--profile NAME for another profile)' });
  const bad = rows.filter((r) => r.active && r.state !== 'ok');
  for (const r of bad) {
    ctx.io.warn(
      `profile ${r.profile}: ${r.state === 'other_issuer' ? `the sign-in of ${r.account} belongs to the other issuer ${r.issuer}, not the profile's` : `the sign-in of ${r.account} has ended`}; run: opsctl login --profile ${r.profile}`,
    );
  }
  return { data: rows, columns: accountColumns(shortScope), ...(bad.length ? { exitCode: 4 } : {}) };
}

/** The issuer's userinfo endpoint on an access token with the openid scope: `rejected` when the provider refuses it. */
async function userinfoCheck(ctx: Context, token: string, scope: string | undefined): Promise<{ rejected?: string }> {
  if (!(scope ?? '').split(/\s+/).includes('openid')) return {};
  try {
    const [{ oauthSettings }, { userinfo }] = await Promise.all([import('../../auth/settings.js'), import('../../auth/userinfo.js')]);
    const settings = await oauthSettings(ctx);
    if (!settings.userinfoUrl) return {};
    const answer = await userinfo(ctx, settings.userinfoUrl, token);
    return 'rejected' in answer ? { rejected: answer.rejected } : {};
  } catch (err) {
    ctx.debug(`userinfo check failed: ${(err as Error).message}`);
    return {};
  }
}

/**
 * Asks the tokeninfo endpoint about an environment token: on the token endpoint's host (Google serves it
 * at oauth2.googleapis.com/tokeninfo), else the authorization server's. `rejected` when the server
 * says the token is invalid; `info` undefined when it cannot tell (no such endpoint, unreachable).
 */
async function tokenInfo(ctx: Context, token: string, issuedBy?: string): Promise<{ info?: Record<string, unknown>; rejected?: string }> {
  try {
    const tokenUrl = issuedBy ?? ctx.env.OPSCTL_TOKEN_URL ?? (await ctx.profile()).token_url;
    const path = tokenUrl ? new URL('/tokeninfo', tokenUrl).toString() : '/tokeninfo';
    const http = await ctx.http('auth');
    // The token rides in the query: never over plain HTTP to anything but loopback (then: cannot tell).
    const { assertSafeTransport } = await import('../../core/http.js');
    assertSafeTransport(http.url(path), 'auth');
    const res = await http.request<Record<string, unknown>>({ path, query: { access_token: token }, auth: false, okStatuses: [400, 401, 404] });
    if (res.status === 200) return { info: res.data };
    const error = typeof res.data?.error === 'string' ? res.data.error : undefined;
    if ((res.status === 400 || res.status === 401) && error)
      return { rejected: `${error}${typeof res.data?.error_description === 'string' ? `: ${res.data.error_description}` : ''}` };
    return {};
  } catch (err) {
    ctx.debug(`tokeninfo failed: ${(err as Error).message}`);
    return {};
  }
}
