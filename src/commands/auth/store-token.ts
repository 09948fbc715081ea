import type { Context } from '../../context.js';
import { isOpsError, UsageError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './store-token.spec.js';

export type Options = OptionsOf<typeof spec>;

/** Stores a tracker API token (read from stdin, never from argv, so it stays out of shell history). */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  if (opts.service === 'oauth') return (await import('./store-token-oauth.js')).run(opts, ctx);
  if (!opts.withToken) {
    throw new UsageError('the tracker token is read from standard input', {
      hint: 'run: opsctl auth store-token --service tracker --with-token < token.txt   (OAuth sign-in is opsctl login)',
    });
  }
  const profile = await ctx.profileName();
  // a profile without a tracker endpoint yet may store its token first (config set tracker URL can follow)
  const endpoint = await ctx.endpoint('tracker').catch((err: unknown) => {
    if (isOpsError(err) && err.code === 'no_endpoint') return undefined;
    throw err;
  });
  if (endpoint?.embedded) {
    // The embedded tracker accepts only the token it provisioned: a stored one would answer 401 to every command.
    throw new UsageError(`profile ${profile} uses the embedded tracker, which provisions its own token: there is nothing to store`, {
      field: '--service',
      hint: 'to use a real tracker, point a profile at it first: opsctl config set tracker https://… --profile NAME, then store its token with --profile NAME',
    });
  }
  if (ctx.io.isStdinTTY) ctx.io.err('Paste the token, then press Enter and Ctrl-D:');
  const token = (await ctx.io.readStdin()).trim();
  if (!token)
    throw new UsageError('no token on standard input', {
      field: 'token',
      hint: 'pipe the token in: opsctl auth store-token --service tracker --with-token < token.txt',
    });
  if (/\s/.test(token)) throw new UsageError('the token contains white space; give exactly one token', { field: 'token' });
  await (await ctx.credentials()).update(profile, (c) => ({ ...c, tracker: { token } }));
  return {
    data: { service: opts.service, profile, stored: (await ctx.credentials()).path },
    message: `stored the ${opts.service} token for profile ${profile}`,
    text: '',
  };
}
