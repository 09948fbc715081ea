import type { MetadataDeps } from './deps.js';
import { AuthError, NetworkError, OpsError } from '../core/errors.js';
import type { OAuthSettings } from './settings.js';

/** Clock difference tolerated between this machine and the provider for `exp`/`iat`/`nbf`. */
export const CLOCK_SKEW_SECONDS = 120;

/** Signature algorithms accepted when the provider does not list its own (never `none`, never HMAC for a public client). */
const DEFAULT_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

function refused(
  reason: string,
  hint = 'run opsctl login again; if it keeps failing, check the issuer and client_id settings (opsctl config get issuer)',
): AuthError {
  return new AuthError(`the ID token from the token endpoint was refused: ${reason}; nothing was stored`, { code: 'invalid_id_token', hint });
}

/** Where the provider publishes its signing keys: set by hand, from the issuer's metadata, or from the auth server's discovery document. */
async function jwksUri(ctx: MetadataDeps, settings: OAuthSettings): Promise<string> {
  if (settings.jwksUri) return settings.jwksUri;
  const { providerMetadata } = await import('./discovery.js');
  // A profile with endpoints only: the auth server's discovery document (the local mocks' ports change: no cache).
  let md = settings.metadata;
  if (!md) {
    try {
      md = await providerMetadata(ctx, settings.authUrl, { cache: !settings.local });
    } catch (err) {
      const hint = `set the provider's key set URL by hand: opsctl config set jwks_uri https://… --profile ${settings.profile} (or give the profile an issuer)`;
      const message = `cannot check the ID token: ${(err as Error).message}`;
      throw err instanceof NetworkError
        ? new NetworkError(message, { code: 'no_jwks', field: 'jwks_uri', hint, cause: err })
        : new OpsError(message, 1, { code: 'no_jwks', field: 'jwks_uri', hint, cause: err });
    }
  }
  if (!md.jwks_uri) {
    throw new OpsError(`cannot check the ID token: the metadata of ${md.issuer} names no jwks_uri`, 1, {
      code: 'no_jwks',
      field: 'jwks_uri',
      hint: `set the provider's key set URL by hand: opsctl config set jwks_uri https://… --profile ${settings.profile}`,
    });
  }
  return md.jwks_uri;
}

async function fetchJwks(ctx: MetadataDeps, url: string): Promise<{ keys: Record<string, unknown>[] }> {
  const http = await ctx.http('auth');
  try {
    const res = await http.request<{ keys?: unknown }>({ method: 'GET', path: url, auth: false, followRedirects: true });
    if (!res.data || !Array.isArray(res.data.keys))
      throw new OpsError(`${url} is not a JSON Web Key Set (no "keys" array)`, 1, {
        code: 'bad_jwks',
        field: 'jwks_uri',
        hint: 'check the jwks_uri setting, or the issuer',
      });
    return res.data as { keys: Record<string, unknown>[] };
  } catch (err) {
    if (err instanceof OpsError && err.code === 'bad_jwks') throw err;
    const why = err instanceof NetworkError ? ((err.cause as Error | undefined)?.message ?? err.message) : (err as Error).message;
    throw new OpsError(`cannot fetch the provider's signing keys from ${url}: ${why}`, 1, {
      code: 'no_jwks',
      field: 'jwks_uri',
      hint: 'check the network and the issuer (or jwks_uri) setting, then run opsctl login again',
      cause: err,
    });
  }
}

/**
 * Checks an ID token the token endpoint returned (OpenID Connect Core §3.1.3.7): signed by a key of
 * the provider's JWKS with an asymmetric algorithm, `iss` the issuer, `aud` containing the client_id
 * (and `azp` the client_id when there are several audiences or an azp at all), `exp` in the future
 * (with a small clock skew), and, for a sign-in, the `nonce` opsctl sent. Throws an AuthError (exit 4).
 * One path for every provider, the embedded mock included: it publishes its metadata and key set like
 * any other, and its tokens are checked against them.
 */
export async function verifyIdToken(
  ctx: MetadataDeps,
  settings: OAuthSettings,
  idToken: string,
  expect: { nonce?: string; sub?: string },
): Promise<Record<string, unknown>> {
  const payload = await verifiedClaims(ctx, settings, idToken);
  const aud = payload.aud;
  if (Array.isArray(aud) && aud.length > 1 && payload.azp === undefined) throw refused(`it has several audiences (${aud.join(', ')}) and no "azp" claim`);
  if (payload.azp !== undefined && payload.azp !== settings.clientId)
    throw refused(`its "azp" claim is ${JSON.stringify(payload.azp)}, expected ${settings.clientId}`);
  if (expect.nonce !== undefined && payload.nonce !== expect.nonce) {
    throw refused(
      payload.nonce === undefined
        ? 'it carries no "nonce", but opsctl sent one'
        : 'its "nonce" is not the one opsctl sent with this sign-in (a replayed or injected token)',
    );
  }
  // OpenID Connect Core §12.2: an ID token from a refresh is about the same user.
  if (expect.sub !== undefined && payload.sub !== expect.sub)
    throw refused(`its "sub" is ${JSON.stringify(payload.sub)}, not the signed-in user ${JSON.stringify(expect.sub)}`);
  return payload;
}

async function verifiedClaims(ctx: MetadataDeps, settings: OAuthSettings, idToken: string): Promise<Record<string, unknown>> {
  const issuer = settings.issuer ?? settings.authUrl;
  const url = await jwksUri(ctx, settings);
  const jwks = await fetchJwks(ctx, url);
  // jose only where an ID token must be checked: the rest of opsctl never loads it.
  const { createLocalJWKSet, jwtVerify, errors } = await import('./jose.js');
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(idToken, createLocalJWKSet(jwks as never), {
      issuer,
      audience: settings.clientId,
      clockTolerance: CLOCK_SKEW_SECONDS,
      algorithms: settings.metadata?.id_token_signing_alg_values_supported?.filter((a) => DEFAULT_ALGS.includes(a)) ?? DEFAULT_ALGS,
      requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat'],
      currentDate: new Date(ctx.now()),
    }));
  } catch (err) {
    if (err instanceof errors.JWTClaimValidationFailed) {
      const got = JSON.stringify((err.payload as Record<string, unknown>)[err.claim]);
      const want = err.claim === 'iss' ? issuer : err.claim === 'aud' ? settings.clientId : undefined;
      throw refused(`its "${err.claim}" claim ${err.reason === 'missing' ? 'is missing' : `is ${got}${want ? `, expected ${want}` : ` (${err.message})`}`}`);
    }
    if (err instanceof errors.JWTExpired)
      throw refused(
        `it expired at ${new Date(Number((err.payload as Record<string, unknown>).exp) * 1000).toISOString()} (allowing ${CLOCK_SKEW_SECONDS} s of clock skew; check this machine's clock)`,
      );
    if (err instanceof errors.JWSSignatureVerificationFailed)
      throw refused(`its signature does not verify against the provider's keys at ${url} (tampered or forged)`);
    if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys)
      throw refused(`no key of ${url} matches its signature header`);
    if (err instanceof errors.JOSEAlgNotAllowed) throw refused(`it is signed with an algorithm opsctl does not accept (${err.message})`);
    if (err instanceof errors.JOSEError) throw refused(`${err.message} (${err.code})`);
    throw err;
  }
  return payload;
}
