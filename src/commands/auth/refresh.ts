import type { Context } from '../../context.js';
import { AuthError, UsageError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './refresh.spec.js';
import { showLoginProgress } from '../login/lib/progress.js';
import { configuredIssuer } from '../../config/server-id.js';
import { durationFlag } from '../../core/duration.js';

export type Options = OptionsOf<typeof spec>;

/**
 * `opsctl auth refresh --scopes S…` (gh's `auth refresh -s`): incremental consent. Asks only for the
 * scopes not granted yet, with include_granted_scopes=true, as the same account; the earlier grant is kept.
 */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  if (opts.removeScopes) {
    if (opts.scopes)
      throw new UsageError('give --scopes (add) or --remove-scopes, not both', { field: 'remove-scopes', hint: 'run opsctl auth refresh twice' });
    return (await import('./refresh-remove.js')).run({ removeScopes: opts.removeScopes, account: opts.account }, ctx);
  }
  const [{ login }, { parseScopes, shortScope }, { accountTokens, assertBoundHere }] = await Promise.all([
    import('../../auth/browser-login.js'),
    import('../../auth/scopes.js'),
    import('../../auth/accounts.js'),
  ]);
  const timeoutMs = durationFlag('--timeout', opts.timeout, { bare: 's', positive: true });
  const wanted = parseScopes(opts.scopes ?? [], { expand: !configuredIssuer(ctx.env, await ctx.profile()) });
  if (!wanted.length)
    throw new UsageError('auth refresh: give the scopes to add with --scopes (or to remove with --remove-scopes)', {
      field: 'scopes',
      hint: 'e.g. opsctl auth refresh --scopes media.upload',
    });
  const profile = await ctx.profileName();
  const current = await accountTokens(ctx, profile, opts.account);
  if (!current) await (await import('../../config/profile-check.js')).assertProfileExists(ctx, profile);
  if (!current)
    throw new AuthError(`not signed in (profile ${profile}): nothing to add scopes to`, {
      code: 'not_signed_in',
      hint: `run: opsctl login --scopes ${opts.scopes?.join(' ')}`,
    });
  await assertBoundHere(ctx, profile, current);
  const granted = (current.scope ?? '').split(/\s+/).filter(Boolean);
  const fresh = wanted.filter((s) => !granted.includes(s));
  if (!fresh.length) {
    return {
      data: { account: current.account, profile, scopes: granted, added: [] },
      text: '',
      message: `${current.account} already has ${wanted.map(shortScope).join(' ')}: nothing to ask for`,
    };
  }
  const requested = (current.requested_scope ?? current.scope ?? '').split(/\s+/).filter(Boolean);
  // A Google-shaped server honours include_granted_scopes: only the new scopes are asked. A generic
  // OpenID provider (an issuer profile) may ignore it, so its protocol scopes already granted (openid,
  // email, profile, offline_access) are asked again too: the answer then names the same user (checked)
  // and carries a refresh token for the new grant.
  const protocol = configuredIssuer(ctx.env, await ctx.profile()) ? granted.filter((s) => ['openid', 'email', 'profile', 'offline_access'].includes(s)) : [];
  const out = await login(ctx, {
    scopes: [...protocol, ...fresh],
    browser: opts.browser,
    timeoutMs,
    consentAs: opts.consentAs,
    insecureStorage: opts.insecureStorage || current.storage === 'file',
    incremental: { account: current.account, granted, requested, refreshToken: current.refresh_token, idToken: current.id_token },
    progress: showLoginProgress(ctx.io),
  });
  if (out.unionKeptLocally) {
    ctx.io.warn(
      `${out.authServer} ignored include_granted_scopes: its new grant names only ${fresh.map(shortScope).join(' ')}; opsctl keeps the earlier scopes on record (the earlier grant stands at the server)`,
    );
  }
  if (out.missing.length) ctx.io.warn(`not granted: ${out.missing.map(shortScope).join(', ')}`);
  const added = fresh.filter((s) => out.scopes.includes(s));
  return {
    data: {
      account: out.account ?? current.account,
      profile,
      scopes: out.scopes,
      added,
      missing_scopes: out.missing,
      include_granted_scopes_honoured: !out.unionKeptLocally,
    },
    text: [
      `account:   ${out.account ?? current.account}`,
      `added:     ${added.map(shortScope).join(' ') || '(none)'}`,
      `granted:   ${out.scopes.map(shortScope).join(' ')}`,
    ].join('\n'),
  };
}
