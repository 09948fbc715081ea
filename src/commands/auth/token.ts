import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';

/** `opsctl auth token`: a valid access token on stdout for scripts (refreshed first when < 5 minutes remain). */
export async function run(_opts: Record<string, never>, ctx: Context): Promise<CommandResult> {
  if (ctx.env.OPSCTL_ACCESS_TOKEN) return { data: { access_token: ctx.env.OPSCTL_ACCESS_TOKEN, source: 'environment', expires_at: null }, text: ctx.env.OPSCTL_ACCESS_TOKEN };
  const { freshAccessToken } = await import('../../auth/session.js');
  const t = await freshAccessToken(ctx);
  return {
    data: { access_token: t.access_token, source: 'file', expires_at: t.expires_at ? new Date(t.expires_at).toISOString() : null },
    text: t.access_token,
  };
}
