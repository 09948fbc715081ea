import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { checkConfigKey } from './lib/key.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './unset.spec.js';

export type Options = OptionsOf<typeof spec>;

export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  checkConfigKey(opts.key);
  const profile = await ctx.profileName();
  // nothing to remove from a profile that does not exist: a misspelled --profile is named, not "removed"
  if (opts.key !== 'profile') await (await import('../../config/profile-check.js')).assertProfileExists(ctx, profile);
  if (opts.key === 'client_secret') {
    const { removeClientSecret } = await import('../../auth/accounts.js');
    const had = (await ctx.config()).profile(profile).client_secret !== undefined;
    if (had) await (await ctx.config()).unset(profile, opts.key);
    if (!(await removeClientSecret(ctx, profile)) && !had) return { message: `client_secret is not set in profile ${profile}` };
    return { message: `removed client_secret from profile ${profile}` };
  }
  await (await ctx.config()).unset(profile, opts.key);
  return { message: `removed ${opts.key} from profile ${profile}` };
}
