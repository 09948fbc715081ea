import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';

export interface AuthTokenOptions {
  /** A signed-in account other than the active one. */
  account?: string;
}

/** `opsctl auth token [--account A]`: a valid access token on stdout for scripts (refreshed first when < 5 minutes remain). */
export async function run(opts: AuthTokenOptions, ctx: Context): Promise<CommandResult> {
  if (ctx.env.OPSCTL_ACCESS_TOKEN && opts.account === undefined) {
    return {
      data: { access_token: ctx.env.OPSCTL_ACCESS_TOKEN, source: 'environment', account: null, expires_at: null, scopes: null },
      text: ctx.env.OPSCTL_ACCESS_TOKEN,
    };
  }
  const { freshAccessToken } = await import('../../auth/session.js');
  const t = await freshAccessToken(ctx, { account: opts.account });
  return {
    data: {
      access_token: t.access_token,
      source: 'file',
      account: t.account ?? null,
      expires_at: t.expires_at ? new Date(t.expires_at).toISOString() : null,
      scopes: (t.scope ?? '').split(/\s+/).filter(Boolean),
    },
    text: t.access_token,
  };
}
