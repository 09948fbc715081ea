import type { Context } from '../../context.js';
import { EMBEDDED_PROFILE } from '../../config/services.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './list.spec.js';

export type Options = OptionsOf<typeof spec>;

export async function run(_opts: Options, ctx: Context): Promise<CommandResult> {
  const config = await ctx.config();
  const active = await ctx.profileName();
  await (await import('../../config/profile-check.js')).assertProfileExists(ctx, active);
  const [{ moveClientSecretsOutOfConfig, clientSecretStatus }] = await Promise.all([import('../../auth/client-secret.js')]);
  await moveClientSecretsOutOfConfig(ctx);
  const profiles = config.profiles();
  const all = await (await ctx.credentials()).read().catch(() => ({}));
  const names = [...new Set([EMBEDDED_PROFILE, ...Object.keys(profiles), ...Object.keys(all).sort()])];
  const secrets = new Map<string, string>();
  for (const name of names) {
    if (!Object.prototype.hasOwnProperty.call(all, name)) continue;
    const status = await clientSecretStatus(ctx, name);
    if (status) secrets.set(name, status);
  }
  const rows = names.flatMap((profile) => {
    const entries: Array<[string, string]> = Object.entries<string>(profiles[profile] ?? {}).filter(([k]) => k !== 'client_secret');
    const secret = secrets.get(profile);
    if (secret) entries.push(['client_secret', secret]);
    if (entries.length === 0 && profile !== EMBEDDED_PROFILE && !Object.prototype.hasOwnProperty.call(profiles, profile)) return [];
    if (entries.length === 0) return [{ profile, active: profile === active, key: '', value: profile === EMBEDDED_PROFILE ? '(embedded mock services)' : '' }];
    return entries.map(([key, value]) => ({ profile, active: profile === active, key, value }));
  });
  return { data: rows, columns: [{ key: 'profile' }, { key: 'active' }, { key: 'key' }, { key: 'value' }] };
}
