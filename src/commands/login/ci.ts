import type { Context } from '../../context.js';
import { UsageError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';

/**
 * `opsctl login --with-oidc-token FILE|-` (or OPSCTL_OIDC_TOKEN_FILE): keyless CI sign-in. The CI's OIDC
 * token is read from the file (or stdin), exchanged at the provider (RFC 8693), never printed.
 */
export async function ciSignIn(ctx: Context, opts: { source: string; scopes?: string[]; insecureStorage?: boolean }): Promise<CommandResult> {
  const { source } = opts;
  let text: string;
  if (source === '-') text = await ctx.io.readStdin();
  else {
    const { readFileFlag } = await import('../lib/file-flag.js');
    text = await readFileFlag(source, ctx, 'the file your CI writes its OIDC token to', '--with-oidc-token');
  }
  if (!text.trim())
    throw new UsageError(`${source === '-' ? 'standard input' : source}: empty, no CI token in it`, {
      field: 'with-oidc-token',
      hint: 'check that the CI step that writes the token ran first',
    });
  const { ciLogin } = await import('../../auth/ci-login.js');
  const out = await ciLogin(ctx, {
    subjectToken: text,
    source: source === '-' ? 'standard input' : source,
    scopes: opts.scopes,
    insecure: Boolean(opts.insecureStorage),
  });
  return {
    data: {
      account: out.account,
      profile: out.profile,
      scopes: out.scopes,
      expires_at: out.expiresAt,
      stored_in: out.storedIn,
      storage: out.storage,
      via: 'token-exchange',
    },
    text: '',
    message: `signed in as ${out.account} with the CI's OIDC token (RFC 8693 token exchange; no refresh token: run it again in the next job)`,
  };
}
