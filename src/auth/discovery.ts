import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MetadataDeps } from './deps.js';
import { ApiError, NetworkError, OpsError } from '../core/errors.js';

/** What opsctl takes from a provider's metadata (OpenID Connect Discovery 1.0 §3, RFC 8414 §2). */
export interface ProviderMetadata {
  issuer: string;
  authorization_endpoint?: string;
  token_endpoint?: string;
  revocation_endpoint?: string;
  userinfo_endpoint?: string;
  jwks_uri?: string;
  code_challenge_methods_supported?: string[];
  authorization_response_iss_parameter_supported?: boolean;
  id_token_signing_alg_values_supported?: string[];
  /** RFC 8628 §4: where a device asks for a user code (login --device). */
  device_authorization_endpoint?: string;
}

/** How long cached metadata is trusted before it is fetched again (providers change it rarely). */
export const METADATA_TTL_MS = 24 * 60 * 60 * 1000;

interface CacheFile {
  fetched_at: number;
  source: string;
  metadata: ProviderMetadata;
}

/** Where a normal issuer's document lives: the issuer with `/.well-known/openid-configuration` appended (OIDC Discovery §4). */
export function oidcDiscoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
}

/** RFC 8414 §3.1: `/.well-known/oauth-authorization-server` goes between the host and the issuer's path. */
export function rfc8414Url(issuer: string): string {
  const u = new URL(issuer);
  const path = u.pathname.replace(/\/+$/, '');
  return `${u.origin}/.well-known/oauth-authorization-server${path}`;
}

/** An issuer must be an https URL (loopback http for local servers) without query or fragment (RFC 8414 §2). */
export function issuerProblem(issuer: string): string | undefined {
  let u: URL;
  try {
    u = new URL(issuer);
  } catch {
    return 'is not a URL';
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return 'must be an https:// URL';
  if (u.search || u.hash || issuer.includes('?') || issuer.includes('#')) return 'must not have a query or fragment';
  return undefined;
}

/** The cache file of one issuer's metadata, in the data directory (opsctl's own, not the user's). */
export function metadataCachePath(dataDir: string, issuer: string): string {
  return join(dataDir, 'oidc-metadata', `${createHash('sha256').update(issuer).digest('hex').slice(0, 24)}.json`);
}

function checkMetadata(doc: unknown, issuer: string, source: string): ProviderMetadata {
  const fix = 'check the issuer setting (opsctl config get issuer): it must be exactly the issuer your provider documents';
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) {
    throw new OpsError(`${source} did not answer with a JSON metadata document`, 1, { code: 'bad_metadata', field: 'issuer', hint: fix });
  }
  const md = doc as Record<string, unknown>;
  // RFC 8414 §3.3 and OIDC Discovery §4.3: the issuer in the document is the one asked about, exactly.
  if (md.issuer !== issuer) {
    throw new OpsError(`the metadata at ${source} is for issuer ${JSON.stringify(md.issuer)}, not the configured ${issuer}`, 1, {
      code: 'issuer_mismatch',
      field: 'issuer',
      hint: typeof md.issuer === 'string' ? `if you trust it, run: opsctl config set issuer ${md.issuer}` : fix,
    });
  }
  for (const key of [
    'authorization_endpoint',
    'token_endpoint',
    'revocation_endpoint',
    'userinfo_endpoint',
    'jwks_uri',
    'device_authorization_endpoint',
  ] as const) {
    const v = md[key];
    if (v === undefined) continue;
    if (typeof v !== 'string' || !/^https?:\/\//.test(v)) {
      throw new OpsError(`the metadata at ${source} has an invalid ${key}: ${JSON.stringify(v)}`, 1, { code: 'bad_metadata', field: 'issuer', hint: fix });
    }
  }
  const methods = md.code_challenge_methods_supported;
  return {
    issuer,
    authorization_endpoint: md.authorization_endpoint as string | undefined,
    token_endpoint: md.token_endpoint as string | undefined,
    revocation_endpoint: md.revocation_endpoint as string | undefined,
    userinfo_endpoint: md.userinfo_endpoint as string | undefined,
    jwks_uri: md.jwks_uri as string | undefined,
    code_challenge_methods_supported: Array.isArray(methods) ? methods.filter((m): m is string => typeof m === 'string') : undefined,
    authorization_response_iss_parameter_supported: md.authorization_response_iss_parameter_supported === true,
    id_token_signing_alg_values_supported: Array.isArray(md.id_token_signing_alg_values_supported)
      ? md.id_token_signing_alg_values_supported.filter((m): m is string => typeof m === 'string')
      : undefined,
    ...(typeof md.device_authorization_endpoint === 'string' ? { device_authorization_endpoint: md.device_authorization_endpoint } : {}),
  };
}

async function readCache(ctx: MetadataDeps, path: string, issuer: string): Promise<ProviderMetadata | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      ctx.io.warn(`ignoring the provider metadata cache ${path} (${(err as Error).message}); fetching it again`);
    return undefined;
  }
  try {
    const c = JSON.parse(text) as CacheFile;
    if (typeof c.fetched_at !== 'number' || c.metadata?.issuer !== issuer) throw new Error('not a metadata cache of this issuer');
    if (ctx.now() - c.fetched_at > METADATA_TTL_MS || c.fetched_at > ctx.now() + 60_000) return undefined;
    return c.metadata;
  } catch (err) {
    ctx.io.warn(`ignoring the corrupt provider metadata cache ${path} (${(err as Error).message}); fetching it again`);
    return undefined;
  }
}

async function writeCache(ctx: MetadataDeps, path: string, file: CacheFile): Promise<void> {
  try {
    await mkdir(join(path, '..'), { recursive: true, mode: 0o700 });
    const { default: writeFileAtomic } = await import('write-file-atomic');
    await writeFileAtomic(path, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  } catch (err) {
    // A cache that cannot be written only costs a fetch next time.
    ctx.debug(`[auth] could not cache the provider metadata in ${path}: ${(err as Error).message}`);
  }
}

/** GETs one candidate document; undefined when the provider does not serve it there (404/405/410). */
async function fetchDoc(ctx: MetadataDeps, url: string): Promise<unknown> {
  const http = await ctx.http('auth');
  try {
    const res = await http.request<unknown>({ method: 'GET', path: url, auth: false, okStatuses: [404, 405, 410], followRedirects: true });
    return res.status === 200 ? res.data : undefined;
  } catch (err) {
    if (err instanceof NetworkError) {
      // Still a NetworkError: a refresh with a token that is still valid carries on with it.
      throw new NetworkError(`cannot reach the provider's metadata at ${url}: ${(err.cause as Error | undefined)?.message ?? err.message}`, {
        code: 'discovery_failed',
        field: 'issuer',
        hint: 'check the issuer setting (opsctl config get issuer) and your network; or set the endpoints by hand (authorize_url, token_url, revoke_url)',
        cause: err,
      });
    }
    if (err instanceof ApiError) {
      throw new OpsError(`the provider's metadata at ${url} answered HTTP ${err.status}`, 1, {
        code: 'discovery_failed',
        field: 'issuer',
        hint: 'check the issuer setting (opsctl config get issuer), or set the endpoints by hand (authorize_url, token_url, revoke_url)',
        cause: err,
      });
    }
    throw err;
  }
}

/**
 * The provider's metadata for `issuer`: from the cache in the data directory when younger than a day,
 * else fetched from OpenID Connect Discovery (`<issuer>/.well-known/openid-configuration`), falling back
 * to RFC 8414 (`<origin>/.well-known/oauth-authorization-server<path>`), checked, and cached.
 */
export async function providerMetadata(ctx: MetadataDeps, issuer: string, opts: { cache?: boolean } = {}): Promise<ProviderMetadata> {
  const cachePath = metadataCachePath(ctx.paths.data, issuer);
  if (opts.cache !== false) {
    const cached = await readCache(ctx, cachePath, issuer);
    if (cached) {
      ctx.debug(`[auth] provider metadata of ${issuer} from ${cachePath}`);
      return cached;
    }
  }
  const candidates = [...new Set([oidcDiscoveryUrl(issuer), rfc8414Url(issuer)])];
  const notes: string[] = [];
  for (const url of candidates) {
    const doc = await fetchDoc(ctx, url);
    if (doc === undefined) {
      notes.push(`${url}: not found`);
      continue;
    }
    // A page that is not a JSON object (a web app answering every path): try the other well-known place.
    if (!doc || typeof doc !== 'object' || Array.isArray(doc)) {
      notes.push(`${url}: not a JSON metadata document`);
      continue;
    }
    const metadata = checkMetadata(doc, issuer, url);
    if (opts.cache !== false) await writeCache(ctx, cachePath, { fetched_at: ctx.now(), source: url, metadata });
    return metadata;
  }
  throw new OpsError(`no provider metadata for issuer ${issuer} (${notes.join('; ')})`, 1, {
    code: 'discovery_failed',
    field: 'issuer',
    hint: 'check the issuer setting (opsctl config get issuer); a provider without metadata needs auth, authorize_url, token_url (and revoke_url) set by hand instead',
  });
}
