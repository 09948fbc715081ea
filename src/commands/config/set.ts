import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';

export async function run(opts: { key: string; value: string }, ctx: Context): Promise<CommandResult> {
  const config = await ctx.config();
  const profile = await ctx.profileName();
  await config.set(profile, opts.key, opts.value);
  return { message: opts.key === 'profile' ? `default profile is now ${opts.value}` : `set ${opts.key} in profile ${profile}` };
}
