import { closest } from '../core/closest.js';
import { UsageError } from '../core/errors.js';
import type { CredentialStore } from './credentials.js';
import type { ConfigStore } from './profiles.js';
import { EMBEDDED_PROFILE } from './services.js';

/** Where profiles live: config.json (their settings) and the credential file (their sign-ins and tokens). */
export interface ProfileSources {
  config(): Promise<ConfigStore>;
  credentials(): Promise<CredentialStore>;
  env?: NodeJS.ProcessEnv;
  globals?: { profile?: string };
}

/** Every profile that exists: the embedded one, those of config.json, and those holding credentials (as `config list` shows them). */
export async function knownProfiles(ctx: ProfileSources): Promise<string[]> {
  const configured = Object.keys((await ctx.config()).profiles());
  // a credential file that cannot be read is named by the command that reads it; here it only adds names
  const stored = Object.keys(await (await ctx.credentials()).read().catch(() => ({})));
  return [...new Set([EMBEDDED_PROFILE, ...configured.sort(), ...stored.sort()])];
}

/**
 * The error for a profile name that names no profile (a typo of `--profile`, OPSCTL_PROFILE or the stored
 * default): which it is, where the name came from, the profiles there are and the nearest one; undefined
 * when the profile exists. Called where a profile's setting or sign-in is missing, so a misspelled name is
 * not told that it "has no tracker endpoint" or is "not signed in" (a name given with every endpoint in
 * the environment, a CI job's, still works).
 */
export async function unknownProfile(ctx: ProfileSources, name: string, namedBy?: string): Promise<UsageError | undefined> {
  const known = await knownProfiles(ctx);
  if (known.includes(name)) return undefined;
  const from =
    namedBy ??
    (ctx.globals?.profile !== undefined ? '--profile' : ctx.env?.OPSCTL_PROFILE !== undefined ? 'OPSCTL_PROFILE' : 'the default profile of config.json');
  const guess = closest(name, known);
  return new UsageError(`no profile "${name}" (named by ${from}): the profiles are ${known.join(', ')}${guess ? `; did you mean ${guess}?` : ''}`, {
    code: 'unknown_profile',
    field: 'profile',
    hint: `use one of them (--profile ${guess ?? known[0] ?? EMBEDDED_PROFILE}), or create "${name}" by giving it an endpoint: opsctl config set tracker https://… --profile ${name}`,
  });
}

/** Throws unknownProfile's error when `name` names no profile. */
export async function assertProfileExists(ctx: ProfileSources, name: string, namedBy?: string): Promise<void> {
  const err = await unknownProfile(ctx, name, namedBy);
  if (err) throw err;
}
