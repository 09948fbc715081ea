import type { Context } from '../context.js';
import { UsageError } from '../core/errors.js';
import { isLoopbackHost } from '../core/redact.js';
import { DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET } from './defaults.js';
import { DEFAULT_SCOPES, parseScopes } from './scopes.js';

/** Where and as whom opsctl signs in: endpoints from the profile (or the embedded mock) and the OAuth client. */
export interface OAuthSettings {
  profile: string;
  authUrl: string;
  authorizeUrl: string;
  tokenUrl: string;
  revokeUrl: string;
  clientId: string;
  clientSecret?: string;
  defaultScopes: string[];
  /** True when the authorization server is the embedded or a loopback mock. */
  local: boolean;
  embedded: boolean;
}

export async function oauthSettings(ctx: Context): Promise<OAuthSettings> {
  const profileName = await ctx.profileName();
  const profile = await ctx.profile();
  const endpoint = await ctx.endpoint('auth');
  const authUrl = endpoint.url;
  const local = endpoint.embedded || isLoopbackHost(new URL(authUrl).hostname);
  const tokenUrl = ctx.env.OPSCTL_TOKEN_URL ?? profile.token_url ?? `${authUrl}/token`;
  const revokeUrl = ctx.env.OPSCTL_REVOKE_URL ?? profile.revoke_url ?? `${authUrl}/revoke`;
  let clientId = ctx.env.OPSCTL_CLIENT_ID ?? profile.client_id;
  let clientSecret = ctx.env.OPSCTL_CLIENT_SECRET ?? profile.client_secret;
  if (!clientId) {
    if (!local) {
      throw new UsageError(`profile "${profileName}" has no OAuth client_id for ${authUrl}`, {
        code: 'no_client',
        field: 'client_id',
        hint: `create a Desktop OAuth client at your provider, then: opsctl config set client_id ID --profile ${profileName} && opsctl config set client_secret SECRET --profile ${profileName}`,
      });
    }
    // The embedded (and `opsctl mock serve`) authorization server seeds this desktop client.
    clientId = DEFAULT_CLIENT_ID;
    clientSecret ??= DEFAULT_CLIENT_SECRET;
  }
  return {
    profile: profileName,
    authUrl,
    authorizeUrl: `${authUrl}/o/oauth2/v2/auth`,
    tokenUrl,
    revokeUrl,
    clientId,
    clientSecret,
    defaultScopes: profile.scopes ? parseScopes(profile.scopes) : DEFAULT_SCOPES,
    local,
    embedded: endpoint.embedded,
  };
}
