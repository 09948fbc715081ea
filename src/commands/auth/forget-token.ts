import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './forget-token.spec.js';

export type Options = OptionsOf<typeof spec>;

/**
 * `opsctl auth forget-token --service tracker [--all]`: forgets the tracker API token stored by
 * `auth store-token --with-token` (the tracker has no revocation endpoint: revoke it in the tracker's own
 * settings too). OAuth accounts are signed out with `opsctl logout`.
 */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  const store = await ctx.credentials();
  const here = await ctx.profileName();
  if (!opts.all) await (await import('../../config/profile-check.js')).assertProfileExists(ctx, here);
  const profiles = opts.all ? Object.keys(await store.read()) : [here];
  const removed: string[] = [];
  for (const profile of profiles) {
    if (!(await store.get(profile)).tracker) continue;
    await store.update(profile, (c) => {
      if (c.tracker) removed.push(profile);
      const { tracker: _gone, ...rest } = c;
      return rest;
    });
  }
  if (ctx.env.OPSCTL_TRACKER_TOKEN) ctx.io.warn('OPSCTL_TRACKER_TOKEN is set in the environment: opsctl keeps using it until you unset it');
  const where = opts.all ? 'any profile' : `profile ${here}`;
  return {
    data: { service: opts.service, removed },
    text: '',
    message: removed.length
      ? `removed the stored ${opts.service} token of ${removed.map((p) => `profile ${p}`).join(', ')} (revoke it in the tracker's settings too, if it may have leaked)`
      : `no ${opts.service} token is stored for ${where}: nothing to do`,
  };
}
