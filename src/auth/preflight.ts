import type { Credentials, EndpointChecks } from './deps.js';
import { writableDir } from '../config/writable.js';

/**
 * What a sign-in checks before any network or browser step, so that nobody consents in a browser only
 * to learn that the tokens cannot be kept: the credential file is readable and of its shape (else exit
 * 4 naming it and the fix), and its directory can be written (else exit 1 naming it and OPSCTL_CONFIG_DIR),
 * and the wiring's own checks of the authorization server's endpoint (EndpointChecks.checkEndpoint) pass.
 */
export async function signInPreflight(ctx: Credentials & Pick<EndpointChecks, 'checkEndpoint'>): Promise<void> {
  const creds = await ctx.credentials();
  await creds.read();
  await writableDir(creds.dir);
  await ctx.checkEndpoint('auth');
}
