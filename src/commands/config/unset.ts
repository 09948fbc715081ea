import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';

export async function run(opts: { key: string }, ctx: Context): Promise<CommandResult> {
  const profile = await ctx.profileName();
  await (await ctx.config()).unset(profile, opts.key);
  return { message: `removed ${opts.key} from profile ${profile}` };
}
