import type { Context } from '../../context.js';
import { UsageError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { authServerId } from '../../config/server-id.js';

export interface AuthLoginOAuthOptions {
  withToken: boolean;
  insecureStorage?: boolean;
}

const FIELDS = ['refresh_token', 'client_id', 'issuer'];
const SHAPE = '{"refresh_token": "…", "client_id": "…", "issuer": "https://…"}';

/** The JSON on stdin: a refresh token and the client (and issuer) it was issued to, each checked. */
export function parseAccountJson(text: string): { refresh_token: string; client_id?: string; issuer?: string } {
  const bad = (problem: string) =>
    new UsageError(`standard input: ${problem}`, {
      field: 'token',
      hint: `pipe one JSON object in: echo '${SHAPE}' | opsctl auth store-token --service oauth --with-token`,
    });
  if (!text.trim()) throw bad('nothing was read');
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    // Never echo the input: it may be a bare token.
    throw bad('is not JSON');
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw bad('is not a JSON object');
  const f = doc as Record<string, unknown>;
  const unknown = Object.keys(f).filter((k) => !FIELDS.includes(k));
  if (unknown.length)
    throw bad(
      `has unknown field${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} (known: ${FIELDS.join(', ')}; a client secret goes in OPSCTL_CLIENT_SECRET or opsctl config set client_secret)`,
    );
  if (typeof f.refresh_token !== 'string' || !f.refresh_token.trim() || /\s/.test(f.refresh_token.trim()))
    throw bad('"refresh_token" must be one token (a string without white space)');
  for (const k of ['client_id', 'issuer'] as const)
    if (f[k] !== undefined && (typeof f[k] !== 'string' || !f[k].trim())) throw bad(`"${k}" must be a non-empty string`);
  return { refresh_token: f.refresh_token.trim(), client_id: f.client_id as string | undefined, issuer: (f.issuer as string | undefined)?.replace(/\/+$/, '') };
}

/**
 * `opsctl auth store-token --service oauth --with-token`: an OAuth account from a refresh token on stdin,
 * checked by one refresh, stored like a signed-in account (the OS keyring; the 0600 file only with
 * --insecure-storage), and refreshed like any other from then on.
 */
export async function run(opts: AuthLoginOAuthOptions, ctx: Context): Promise<CommandResult> {
  if (!opts.withToken) {
    throw new UsageError('the OAuth account is read from standard input', {
      hint: `run: echo '${SHAPE}' | opsctl auth store-token --service oauth --with-token   (a browser sign-in is opsctl login; without a browser, opsctl login --device)`,
    });
  }
  const profile = await ctx.profileName();
  const { openKeyring } = await import('../../config/secrets.js');
  // Where it would go, before anything is read or sent: the keyring, or the file only when asked.
  if (!opts.insecureStorage) {
    const probe = await openKeyring(ctx.env);
    if (!('keyring' in probe)) {
      throw new UsageError(`no OS keyring here (${probe.unavailable}): opsctl writes a refresh token to disk only when asked`, {
        field: 'insecure-storage',
        hint: 'add --insecure-storage to keep it in the 0600 credential file, or give the job OPSCTL_REFRESH_TOKEN, OPSCTL_CLIENT_ID and OPSCTL_ISSUER instead (refreshed in memory, never written)',
      });
    }
  }
  if (ctx.io.isStdinTTY) ctx.io.err(`Paste ${SHAPE}, then press Enter and Ctrl-D:`);
  const given = parseAccountJson(await ctx.io.readStdin());
  const here = authServerId(ctx.env, profile, await ctx.profile());
  if (given.issuer && given.issuer !== here) {
    throw new UsageError(`the refresh token is for issuer ${given.issuer}, but profile ${profile} signs in at ${here ?? 'no server yet'}`, {
      field: 'issuer',
      hint: `point the profile there first: opsctl config set issuer ${given.issuer} --profile ${profile}   (or set OPSCTL_ISSUER), then run this again`,
    });
  }
  const { oauthSettings } = await import('../../auth/settings.js');
  const settings = await oauthSettings(ctx);
  if (given.client_id) settings.clientId = given.client_id;
  const { redeemRefreshToken } = await import('../../auth/env-account.js');
  const tokens = await redeemRefreshToken(ctx, settings, given.refresh_token);
  tokens.requested_scope = tokens.scope;
  const { saveAccount } = await import('../../auth/accounts.js');
  const { storage } = await saveAccount(ctx, profile, tokens, { insecure: opts.insecureStorage });
  const where = storage === 'keyring' ? 'OS keyring' : (await ctx.credentials()).path;
  const scopes = (tokens.scope ?? '').split(/\s+/).filter(Boolean);
  return {
    data: {
      service: 'oauth',
      profile,
      account: tokens.account ?? 'default',
      client_id: settings.clientId,
      issuer: tokens.issuer ?? null,
      scopes,
      stored_in: where,
      storage,
    },
    text: [`account:   ${tokens.account ?? 'default'}`, `profile:   ${profile}`, `granted:   ${scopes.join(' ') || '(none)'}`, `stored in: ${where}`].join(
      '\n',
    ),
    message: `stored the OAuth account${tokens.account ? ` ${tokens.account}` : ''} for profile ${profile}; it refreshes itself`,
  };
}
