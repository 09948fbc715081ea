import type { SessionDeps } from './deps.js';
import { UsageError } from '../core/errors.js';
import { oauthSettings } from './settings.js';
import { toStored } from './session.js';
import { exchangeSubjectToken, idTokenClaims } from './token-client.js';

export interface CiLoginOutcome {
  account: string;
  profile: string;
  scopes: string[];
  expiresAt?: number;
  storedIn: string;
  storage: 'file' | 'keyring';
}

/**
 * Keyless CI sign-in (`login --with-oidc-token FILE|-`, OPSCTL_OIDC_TOKEN_FILE): the CI provider's OIDC
 * token exchanged at the provider's token endpoint (RFC 8693) for an access token, stored as the account
 * named by the CI token (its email, else its subject). No browser, no refresh token: each job exchanges
 * its own token again.
 */
export async function ciLogin(ctx: SessionDeps, opts: { subjectToken: string; source: string; scopes?: string[]; insecure: boolean }): Promise<CiLoginOutcome> {
  const token = opts.subjectToken.trim();
  const claims = token.split('.').length === 3 ? idTokenClaims(token) : undefined;
  if (!claims) {
    throw new UsageError(`${opts.source}: not a JWT (a CI OIDC token has three dot-separated parts)`, {
      field: 'with-oidc-token',
      hint: "give the file the CI writes its OIDC token to (GitHub Actions: request it with ACTIONS_ID_TOKEN_REQUEST_URL; GitLab: an id_tokens: entry's variable), or - for stdin",
    });
  }
  const settings = await oauthSettings(ctx);
  const scopes = opts.scopes ?? [];
  const res = await exchangeSubjectToken(ctx, settings, token, scopes);
  const tokens = toStored(res, ctx.now(), {}, settings, scopes.length ? scopes : undefined);
  tokens.account ??= typeof claims.email === 'string' ? claims.email : typeof claims.sub === 'string' ? claims.sub : 'ci';
  const { saveAccount } = await import('./accounts.js');
  const { storage } = await saveAccount(ctx, settings.profile, tokens, { insecure: opts.insecure });
  return {
    account: tokens.account,
    profile: settings.profile,
    scopes: (tokens.scope ?? '').split(/\s+/).filter(Boolean),
    expiresAt: tokens.expires_at,
    storedIn: (await ctx.credentials()).path,
    storage,
  };
}
