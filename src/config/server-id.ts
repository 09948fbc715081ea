import type { Profile } from './profiles.js';
import { EMBEDDED_PROFILE } from './services.js';

/** The issuer to discover: OPSCTL_ISSUER, else the profile's (unless OPSCTL_AUTH_URL points the auth service elsewhere). */
export function configuredIssuer(env: NodeJS.ProcessEnv, profile: { issuer?: string }): string | undefined {
  return env.OPSCTL_ISSUER ?? (env.OPSCTL_AUTH_URL ? undefined : profile.issuer);
}

/**
 * The authorization server a profile signs in at, as stored accounts record it: its issuer, its auth URL,
 * or, for the embedded profile, the stable name of its endpoint (whose URL changes in every process).
 */
export function authServerId(env: NodeJS.ProcessEnv, profileName: string, profile: Profile): string | undefined {
  const issuer = configuredIssuer(env, profile);
  if (issuer) return issuer;
  const auth = env.OPSCTL_AUTH_URL ?? profile.auth;
  if (auth) return auth.replace(/\/+$/, '');
  return profileName === EMBEDDED_PROFILE ? EMBEDDED_PROFILE : undefined;
}
