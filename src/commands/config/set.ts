import type { Context } from '../../context.js';
import { ValidationError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { checkConfigKey, checkProfileName } from './lib/key.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './set.spec.js';

export type Options = OptionsOf<typeof spec>;

export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  checkConfigKey(opts.key);
  const config = await ctx.config();
  const profile = await ctx.profileName();
  checkProfileName(profile);
  if (opts.key === 'client_secret') {
    // A secret: the OS keyring, else the 0600 credential file; never config.json.
    if (!opts.value.trim()) throw new ValidationError('client_secret', 'must not be empty');
    const [{ saveClientSecret }, { moveClientSecretsOutOfConfig }] = await Promise.all([
      import('../../auth/accounts.js'),
      import('../../auth/client-secret.js'),
    ]);
    await moveClientSecretsOutOfConfig(ctx, profile);
    const storage = await saveClientSecret(ctx, profile, opts.value);
    return {
      message: `stored client_secret of profile ${profile} in ${storage === 'keyring' ? 'the OS keyring' : `the credential file ${(await ctx.credentials()).path} (mode 0600)`}`,
    };
  }
  // the default profile must be one that exists (the same words as a misspelled --profile)
  if (opts.key === 'profile') await (await import('../../config/profile-check.js')).assertProfileExists(ctx, opts.value, 'config set profile');
  await config.set(profile, opts.key, opts.value);
  return { message: opts.key === 'profile' ? `default profile is now ${opts.value}` : `set ${opts.key} in profile ${profile}` };
}
