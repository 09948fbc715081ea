import type { Credentials, EmbeddedSignIn, Endpoints } from './deps.js';
import { writableDir } from '../config/writable.js';

/**
 * What a sign-in checks before any network or browser step, so that nobody consents in a browser only
 * to learn that the tokens cannot be kept: the credential file is readable and of its shape (else exit
 * 4 naming it and the fix), and its directory can be written (else exit 1 naming it and OPSCTL_CONFIG_DIR),
 * and so can the embedded mock's, when it is the authorization server.
 */
export async function signInPreflight(ctx: Credentials & Endpoints & Pick<EmbeddedSignIn, 'checkEmbeddedSignIn'>): Promise<void> {
  const creds = await ctx.credentials();
  await creds.read();
  await writableDir(creds.dir);
  if ((await ctx.endpoint('auth')).embedded) await ctx.checkEmbeddedSignIn();
}
