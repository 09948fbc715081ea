import type { Context } from '../context.js';
import { EMBEDDED_PROFILE, endpointEnvVar, type Endpoint, type Service } from '../config/services.js';
import { UsageError } from '../core/errors.js';
import { parseUserUrl, URL_EXAMPLE } from '../core/url.js';
import { loadEmbedded } from './embedded-loader.js';

/** A service's endpoint: OPSCTL_<SERVICE>_URL, then the profile, then (embedded profile only) the embedded mock. */
export async function resolveEndpoint(ctx: Context, service: Service): Promise<Endpoint> {
  const fromEnv = ctx.env[endpointEnvVar(service)];
  if (fromEnv) {
    parseUserUrl(fromEnv, endpointEnvVar(service), { hint: `set ${endpointEnvVar(service)} to the service's base URL, e.g. ${URL_EXAMPLE}` });
    return { url: trimSlash(fromEnv), embedded: false, source: 'env' };
  }
  const name = await ctx.profileName();
  const profile = await ctx.profile();
  const configured = profile[service];
  if (configured) {
    parseUserUrl(configured, `${service} (profile ${name})`, { hint: `run: opsctl config set ${service} https://… --profile ${name}` });
    return { url: trimSlash(configured), embedded: false, source: 'profile' };
  }
  // A profile that names an issuer signs in there (its endpoints come from the provider's metadata).
  if (service === 'auth') {
    const issuer = ctx.env.OPSCTL_ISSUER ?? profile.issuer;
    // an issuer is checked where it is used (auth/discovery.ts issuerProblem: https, no query or fragment)
    if (issuer) return { url: trimSlash(issuer), embedded: false, source: ctx.env.OPSCTL_ISSUER ? 'env' : 'profile' };
  }
  if (name === EMBEDDED_PROFILE) {
    const url = await (await loadEmbedded()).embeddedUrl(ctx);
    return { url, embedded: true, source: 'embedded', stableId: EMBEDDED_PROFILE };
  }
  // a misspelled --profile is told that no such profile exists, not that it lacks this endpoint
  await (await import('../config/profile-check.js')).assertProfileExists(ctx, name);
  throw new UsageError(`profile "${name}" has no ${service} endpoint`, {
    code: 'no_endpoint',
    hint: `run: opsctl config set ${service} https://… --profile ${name}   (or set ${endpointEnvVar(service)})`,
  });
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}
