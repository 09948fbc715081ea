import type { Context } from '../../context.js';
import { EMBEDDED_PROFILE } from '../../config/services.js';
import type { CommandResult } from '../../core/output.js';

export async function run(_opts: unknown, ctx: Context): Promise<CommandResult> {
  const config = await ctx.config();
  const active = await ctx.profileName();
  const profiles = config.profiles();
  const names = [...new Set([EMBEDDED_PROFILE, ...Object.keys(profiles)])];
  const rows = names.flatMap((profile) => {
    const entries = Object.entries(profiles[profile] ?? {});
    if (entries.length === 0) return [{ profile, active: profile === active, key: '', value: profile === EMBEDDED_PROFILE ? '(embedded mock services)' : '' }];
    return entries.map(([key, value]) => ({ profile, active: profile === active, key, value: key === 'client_secret' ? '[hidden]' : value }));
  });
  return { data: rows, columns: [{ key: 'profile' }, { key: 'active' }, { key: 'key' }, { key: 'value' }] };
}
