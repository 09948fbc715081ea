import type { AccountDeps, Config, Credentials, Env } from './deps.js';

/**
 * The OAuth client secret never lives in config.json: `config set client_secret` puts it in the OS
 * keyring or the 0600 credential file, and one found in config.json (written by an older opsctl) is
 * moved there, with a notice, and config.json rewritten without it, by the verbs that write: `login`
 * (auth/browser-login.ts, auth/device.ts) and `config get|list|set`. Reading the settings never writes.
 */
export async function moveClientSecretsOutOfConfig(ctx: AccountDeps, only?: string): Promise<void> {
  const config = await ctx.config();
  const profiles = config.profiles();
  const names = Object.keys(profiles).filter((n) => (only === undefined || n === only) && profiles[n]?.client_secret !== undefined);
  if (!names.length) return;
  const { saveClientSecret } = await import('./accounts.js');
  for (const name of names) {
    const value = profiles[name]?.client_secret as string;
    const storage = await saveClientSecret(ctx, name, value);
    await config.unset(name, 'client_secret');
    ctx.io.warn(
      `moved the client_secret of profile ${name} out of ${config.path} into ${storage === 'keyring' ? 'the OS keyring' : (await ctx.credentials()).path} (secrets never stay in config.json)`,
    );
  }
}

/**
 * The client secret of the profile: OPSCTL_CLIENT_SECRET, else one an older opsctl left in config.json
 * (read as it is: the next `login` or `config get|list` moves it, and the moved one is the same value),
 * else the stored one.
 */
export async function clientSecret(ctx: Env & Credentials & Config, profile: string): Promise<string | undefined> {
  if (ctx.env.OPSCTL_CLIENT_SECRET) return ctx.env.OPSCTL_CLIENT_SECRET;
  const legacy = (await ctx.config()).profiles()[profile]?.client_secret;
  if (typeof legacy === 'string') return legacy;
  const { storedClientSecret } = await import('./accounts.js');
  return storedClientSecret(ctx, profile);
}

/** Where the profile's client secret is, for `config get|list` (never the value). */
export async function clientSecretStatus(ctx: Credentials, profile: string): Promise<string | undefined> {
  const stored = (await (await ctx.credentials()).get(profile)).client_secret;
  if (!stored) return undefined;
  return stored.storage === 'keyring' ? '[set: in the OS keyring]' : '[set: in the credential file]';
}
