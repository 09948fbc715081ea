import type { Context } from '../../context.js';
import { OpsError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { checkConfigKey } from './lib/key.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './get.spec.js';

export type Options = OptionsOf<typeof spec>;

export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  checkConfigKey(opts.key);
  const config = await ctx.config();
  // `config get profile` reads the stored default, whatever profile is active
  if (opts.key !== 'profile') await (await import('../../config/profile-check.js')).assertProfileExists(ctx, await ctx.profileName());
  if (opts.key === 'client_secret') {
    // Shown as set or not, never as its value; one left in config.json by an older opsctl is moved first.
    const [{ moveClientSecretsOutOfConfig, clientSecretStatus }] = await Promise.all([import('../../auth/client-secret.js')]);
    await moveClientSecretsOutOfConfig(ctx, await ctx.profileName());
    const status = await clientSecretStatus(ctx, await ctx.profileName());
    if (status === undefined) throw new OpsError(`client_secret is not set in profile "${await ctx.profileName()}"`, 1, { code: 'not_set' });
    return { data: status };
  }
  const value = config.get(await ctx.profileName(), opts.key);
  if (value === undefined) throw new OpsError(`${opts.key} is not set in profile "${await ctx.profileName()}"`, 1, { code: 'not_set' });
  return { data: value };
}
