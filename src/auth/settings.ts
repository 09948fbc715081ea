import type { SettingsDeps } from './deps.js';
import { configuredIssuer } from '../config/server-id.js';
import { UsageError } from '../core/errors.js';
import { isLoopbackHost } from '../core/redact.js';
import { parseUserUrl } from '../core/url.js';
import { DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET } from './defaults.js';
import type { ProviderMetadata } from './discovery.js';
import { DEFAULT_ISSUER_SCOPES, DEFAULT_SCOPES, parseScopes } from './scopes.js';

/** Where and as whom opsctl signs in: endpoints from the profile (or the wiring's default) or the provider's metadata (issuer). */
export interface OAuthSettings {
  profile: string;
  /** The authorization server: the issuer when one is configured, else the `auth` endpoint. */
  authUrl: string;
  authorizeUrl: string;
  tokenUrl: string;
  /** Undefined when the provider has no revocation endpoint (its metadata names none and none is set). */
  revokeUrl?: string;
  userinfoUrl?: string;
  /** The configured issuer (metadata discovery); undefined for a profile with endpoints only. */
  issuer?: string;
  /** The provider's metadata, when an issuer is configured. */
  metadata?: ProviderMetadata;
  /** Set by hand (jwks_uri); else the issuer's metadata names it. */
  jwksUri?: string;
  clientId: string;
  clientSecret?: string;
  defaultScopes: string[];
  /** True when the authorization server is opsctl's mock: inside this process, or an auth endpoint (not an OIDC issuer) at a loopback URL. */
  local: boolean;
  /** The endpoint's name for a server whose URL does not outlive this process (Endpoint.stableId): its URLs are not stored. */
  stableId?: string;
}

/** Endpoints set by hand (environment, then profile) win over the provider's metadata. */
function byHand(
  ctx: SettingsDeps,
  profile: Record<string, string | undefined>,
  key: 'authorize_url' | 'token_url' | 'revoke_url' | 'userinfo_url' | 'jwks_uri',
): string | undefined {
  const env = `OPSCTL_${key.toUpperCase()}`;
  const value = ctx.env[env] ?? profile[key];
  if (value !== undefined) parseUserUrl(value, ctx.env[env] !== undefined ? env : key);
  return value;
}

export async function oauthSettings(ctx: SettingsDeps): Promise<OAuthSettings> {
  const profileName = await ctx.profileName();
  const profile = await ctx.profile();
  const issuer = configuredIssuer(ctx.env, profile);
  let authUrl: string;
  let stableId: string | undefined;
  let metadata: ProviderMetadata | undefined;
  if (issuer) {
    const { issuerProblem, providerMetadata } = await import('./discovery.js');
    const problem = issuerProblem(issuer);
    if (problem) {
      throw new UsageError(`issuer "${issuer}" ${problem}`, {
        field: 'issuer',
        hint: `run: opsctl config set issuer https://… --profile ${profileName}   (the issuer your provider documents)`,
      });
    }
    authUrl = issuer;
    metadata = await providerMetadata(ctx, issuer);
  } else {
    const endpoint = await ctx.endpoint('auth');
    authUrl = endpoint.url;
    stableId = endpoint.stableId;
  }
  // An OIDC issuer is a real provider even on loopback (oidc-provider, Keycloak on localhost): only an
  // auth endpoint on this machine is opsctl's mock, whose consent form --consent-as can submit.
  const local = stableId !== undefined || (!issuer && isLoopbackHost(new URL(authUrl).hostname));
  const missing = (what: string, key: string) =>
    new UsageError(`the metadata of issuer ${issuer} names no ${what}`, {
      field: key,
      hint: `set it by hand: opsctl config set ${key} https://… --profile ${profileName}`,
    });
  const authorizeUrl = byHand(ctx, profile, 'authorize_url') ?? (metadata ? metadata.authorization_endpoint : `${authUrl}/o/oauth2/v2/auth`);
  const tokenUrl = byHand(ctx, profile, 'token_url') ?? (metadata ? metadata.token_endpoint : `${authUrl}/token`);
  if (!authorizeUrl) throw missing('authorization_endpoint', 'authorize_url');
  if (!tokenUrl) throw missing('token_endpoint', 'token_url');
  let clientId = ctx.env.OPSCTL_CLIENT_ID ?? profile.client_id;
  // Never from config.json: the keyring or the credential file (an old config.json's is moved there first).
  let clientSecret =
    ctx.env.OPSCTL_CLIENT_SECRET ??
    (profile.client_secret !== undefined || clientId ? await (await import('./client-secret.js')).clientSecret(ctx, profileName) : undefined);
  if (!clientId) {
    if (!local || issuer) {
      throw new UsageError(`profile "${profileName}" has no OAuth client_id for ${authUrl}`, {
        code: 'no_client',
        field: 'client_id',
        hint: `register a native/desktop (public) OAuth client at your provider, then: opsctl config set client_id ID --profile ${profileName}`,
      });
    }
    // The embedded (and `opsctl mock serve`) authorization server seeds this desktop client.
    clientId = DEFAULT_CLIENT_ID;
    clientSecret ??= DEFAULT_CLIENT_SECRET;
  }
  return {
    profile: profileName,
    authUrl,
    authorizeUrl,
    tokenUrl,
    revokeUrl: byHand(ctx, profile, 'revoke_url') ?? (metadata ? metadata.revocation_endpoint : `${authUrl}/revoke`),
    userinfoUrl: byHand(ctx, profile, 'userinfo_url') ?? metadata?.userinfo_endpoint,
    issuer,
    metadata,
    jwksUri: byHand(ctx, profile, 'jwks_uri') ?? metadata?.jwks_uri,
    clientId,
    clientSecret,
    defaultScopes: profile.scopes ? parseScopes(profile.scopes, { expand: !issuer }) : issuer ? DEFAULT_ISSUER_SCOPES : DEFAULT_SCOPES,
    local,
    stableId,
  };
}
