import type { Context } from '../../context.js';
import { OpsError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';

export async function run(opts: { key: string }, ctx: Context): Promise<CommandResult> {
  const config = await ctx.config();
  const value = config.get(await ctx.profileName(), opts.key);
  if (value === undefined) throw new OpsError(`${opts.key} is not set in profile "${await ctx.profileName()}"`, 1, { code: 'not_set' });
  return { data: opts.key === 'client_secret' ? '[hidden]' : value };
}
