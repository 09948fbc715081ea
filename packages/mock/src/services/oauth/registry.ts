/**
 * The mock authorization server's registry: OAuth clients of the seed's types, seeded users, the
 * known scopes, and the redirect-URI rules of each client type.
 */

import { DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET, SCOPE_BASE } from '@opsctl/shared/oauth.js';
import { itemAt } from '../../arrays.js';

export { SCOPE_BASE };

/** Identity scopes: they ask for an id_token and are granted with sign-in (not granular). */
export const IDENTITY_SCOPES = ['openid', 'email', 'profile'];

/** Every scope the mock knows, with the text the consent page shows. */
export const KNOWN_SCOPES: Record<string, string> = {
  openid: 'Associate you with your personal info',
  email: 'See your primary email address',
  profile: 'See your personal info, including any personal info you have made publicly available',
  [`${SCOPE_BASE}/media`]: 'Manage your media account',
  [`${SCOPE_BASE}/media.channel-memberships.creator`]: 'See a list of your current active channel members, their current level, and when they became a member',
  [`${SCOPE_BASE}/media.force-ssl`]: 'See, edit, and permanently delete your videos, ratings, comments and captions',
  [`${SCOPE_BASE}/media.readonly`]: 'View your media account',
  [`${SCOPE_BASE}/media.upload`]: 'Manage your videos',
  [`${SCOPE_BASE}/mediapartner`]: 'View and manage your assets and associated content',
  [`${SCOPE_BASE}/mediapartner-channel-audit`]: 'View private information of your channel relevant during the audit process with a partner',
  [`${SCOPE_BASE}/drive.labels`]: 'See, edit, create, and delete all of your labels',
  [`${SCOPE_BASE}/drive.labels.readonly`]: 'See all your labels',
  [`${SCOPE_BASE}/drive.admin.labels`]: "See, edit, create, and delete all of your organization's labels",
  [`${SCOPE_BASE}/drive.admin.labels.readonly`]: "See all of your organization's labels",
};

export type ClientType = 'desktop' | 'universal_desktop' | 'mobile_a' | 'mobile_b' | 'extension';
export const CLIENT_TYPES: readonly ClientType[] = ['desktop', 'universal_desktop', 'mobile_a', 'mobile_b', 'extension'];

export interface OAuthClient {
  client_id: string;
  /** Absent for the mobile and extension types, which cannot keep one. */
  client_secret?: string;
  name: string;
  type: ClientType;
  /** Mobile A: the package name; mobile B: the bundle identifier (their custom URI schemes). */
  package_name?: string;
  bundle_id?: string;
  /** Universal desktop: exactly 12 characters. */
  store_id?: string;
  /** Extensions: the store item id. */
  item_id?: string;
  /** Mobile A: the advanced setting "enable custom URI scheme" (off by default). */
  custom_scheme_enabled?: boolean;
  /** Extra custom URI schemes the developer registered (reverse-DNS names of their domains). */
  schemes?: string[];
  /** Trusted apps skip granular consent: all requested scopes or none. */
  trusted?: boolean;
  /** An enterprise app with domain-wide delegation: like a trusted one, it skips granular consent. */
  domain_wide_delegation?: boolean;
  /** The seed's prerequisite: the data API is enabled for the client's project (absent: enabled). */
  data_api_enabled?: boolean;
  /** The developer-console project the client belongs to (named in the data API's "not enabled" error). */
  project_number?: string;
  /** The project is internal to this organization's e-mail domain. */
  org_internal?: string;
  /** Epoch ms of deletion; restorable for 30 days. */
  deleted_at?: number;
}

export interface MockUser {
  sub: string;
  email: string;
  name: string;
  /** Scopes an administrator's policy forbids this account to authorize. */
  blocked_scopes?: string[];
  disabled?: boolean;
}

export const DELETED_CLIENT_RESTORE_MS = 30 * 24 * 3600 * 1000;

export { DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET };

export function seedClients(now: number): OAuthClient[] {
  const day = 24 * 3600 * 1000;
  return [
    { client_id: DEFAULT_CLIENT_ID, client_secret: DEFAULT_CLIENT_SECRET, name: 'opsctl', type: 'desktop' },
    { client_id: 'trusted-desktop.apps.mock', client_secret: 'trusted-secret', name: 'Trusted desktop app', type: 'desktop', trusted: true },
    {
      client_id: 'delegated-desktop.apps.mock',
      client_secret: 'delegated-secret',
      name: 'Domain-wide delegated app',
      type: 'desktop',
      domain_wide_delegation: true,
    },
    {
      client_id: 'no-data-api.apps.mock',
      client_secret: 'no-data-api-secret',
      name: 'Project without the data API',
      type: 'desktop',
      data_api_enabled: false,
      project_number: '400000000042',
    },
    { client_id: 'internal-desktop.apps.mock', client_secret: 'internal-secret', name: 'Internal tool', type: 'desktop', org_internal: 'example.com' },
    {
      client_id: 'universal.apps.mock',
      client_secret: 'universal-secret',
      name: 'Universal desktop app',
      type: 'universal_desktop',
      store_id: '9NBLGGH4NNS1',
      schemes: ['com.example.universal'],
    },
    { client_id: 'mobile-a.apps.mock', name: 'Mobile A app', type: 'mobile_a', package_name: 'com.example.mobilea' },
    {
      client_id: 'mobile-a-schemes.apps.mock',
      name: 'Mobile A app (custom scheme on)',
      type: 'mobile_a',
      package_name: 'com.example.mobilea2',
      custom_scheme_enabled: true,
    },
    { client_id: 'mobile-b.apps.mock', name: 'Mobile B app', type: 'mobile_b', bundle_id: 'com.example.mobileb' },
    { client_id: 'extension.apps.mock', name: 'Browser extension', type: 'extension', item_id: 'abcdefghijklmnopabcdefghijklmnop' },
    { client_id: 'deleted-recently.apps.mock', client_secret: 'x', name: 'Deleted 5 days ago', type: 'desktop', deleted_at: now - 5 * day },
    { client_id: 'deleted-long-ago.apps.mock', client_secret: 'x', name: 'Deleted 40 days ago', type: 'desktop', deleted_at: now - 40 * day },
  ];
}

export function seedUsers(): MockUser[] {
  return [
    { sub: '110000000000000000001', email: 'alice@example.com', name: 'Alice Example' },
    { sub: '110000000000000000002', email: 'bob@example.com', name: 'Bob Example' },
    { sub: '110000000000000000003', email: 'carol@partner.example', name: 'Carol Partner' },
    { sub: '110000000000000000004', email: 'dave@example.com', name: 'Dave Restricted', blocked_scopes: [`${SCOPE_BASE}/media.upload`] },
  ];
}

/** Validates a client read from a registry file; returns the problem or undefined. */
export function clientProblem(c: Partial<OAuthClient>): string | undefined {
  if (!c || typeof c !== 'object') return 'a client must be an object';
  if (typeof c.client_id !== 'string' || !c.client_id) return 'client_id is required';
  if (!CLIENT_TYPES.includes(c.type as ClientType)) return `${c.client_id}: type must be one of ${CLIENT_TYPES.join(', ')}`;
  if (['mobile_a', 'mobile_b', 'extension'].includes(c.type as string) && c.client_secret) return `${c.client_id}: ${c.type} clients have no client secret`;
  if (c.type === 'universal_desktop' && (typeof c.store_id !== 'string' || c.store_id.length !== 12))
    return `${c.client_id}: store_id must be exactly 12 characters`;
  if (c.type === 'mobile_a' && !c.package_name) return `${c.client_id}: package_name is required`;
  if (c.type === 'mobile_b' && !c.bundle_id) return `${c.client_id}: bundle_id is required`;
  for (const flag of ['trusted', 'domain_wide_delegation', 'data_api_enabled', 'custom_scheme_enabled'] as const) {
    if (c[flag] !== undefined && typeof c[flag] !== 'boolean') return `${c.client_id}: ${flag} must be true or false`;
  }
  if (c.project_number !== undefined && (typeof c.project_number !== 'string' || !/^\d{1,20}$/.test(c.project_number)))
    return `${c.client_id}: project_number must be a string of digits`;
  return undefined;
}

export type RedirectCheck = { ok: true } | { ok: false; error: 'redirect_uri_mismatch' | 'invalid_request'; description: string };

const OOB = /^urn:ietf:wg:oauth:2\.0:oob(:auto)?$|^oob$/;
const LOOPBACK = /^http:\/\/(127\.0\.0\.1|\[::1\]):(\d{1,5})(\/[^?#]*)?$/;
const CUSTOM = /^([a-z][a-z0-9+.-]*):(\/[^/].*|\/)?$/i;

/** The seed's redirect rules per client type. */
export function checkRedirectUri(client: OAuthClient, uri: string): RedirectCheck {
  if (OOB.test(uri)) {
    return {
      ok: false,
      error: 'redirect_uri_mismatch',
      description: 'The out-of-band (OOB) flow has been retired; use a loopback redirect http://127.0.0.1:PORT instead.',
    };
  }
  const loop = LOOPBACK.exec(uri);
  if (loop) {
    const port = Number(loop[2]);
    if (port < 1 || port > 65535) return { ok: false, error: 'redirect_uri_mismatch', description: `the port in ${uri} is not valid` };
    if (client.type === 'extension')
      return { ok: false, error: 'redirect_uri_mismatch', description: 'browser extension clients cannot use a loopback redirect' };
    // The seed: "on mobile platforms this form is deprecated" — refused, as invalid for the client type.
    if (client.type === 'mobile_a' || client.type === 'mobile_b') {
      return {
        ok: false,
        error: 'redirect_uri_mismatch',
        description: `Loopback IP redirects (${uri}) are deprecated for ${client.type === 'mobile_a' ? 'mobile platform A' : 'mobile platform B'} clients and not allowed for ${client.client_id}: use the platform's sign-in library${client.type === 'mobile_a' ? ', or enable the custom URI scheme in the advanced settings of the client' : ` or the custom URI scheme ${client.bundle_id}:/`}.`,
      };
    }
    return { ok: true };
  }
  if (/^https?:/i.test(uri)) {
    return {
      ok: false,
      error: 'redirect_uri_mismatch',
      description: `${uri} is not an authorized redirect URI of ${client.client_id}: installed apps use http://127.0.0.1:PORT or http://[::1]:PORT (any port)`,
    };
  }
  const custom = CUSTOM.exec(uri);
  if (!custom) return { ok: false, error: 'redirect_uri_mismatch', description: `${uri} is not a valid redirect URI` };
  const scheme = itemAt(custom, 1).toLowerCase();
  if (!scheme.includes('.'))
    return { ok: false, error: 'redirect_uri_mismatch', description: `the custom URI scheme "${scheme}" must contain a period (a reverse-DNS name)` };
  if (client.type === 'desktop' || client.type === 'extension') {
    return { ok: false, error: 'redirect_uri_mismatch', description: `custom URI schemes are not valid for ${client.type} clients; use a loopback redirect` };
  }
  if (client.type === 'universal_desktop' && scheme.length > 39) {
    return { ok: false, error: 'redirect_uri_mismatch', description: `the custom URI scheme "${scheme}" is longer than 39 characters` };
  }
  if (client.type === 'mobile_a' && !client.custom_scheme_enabled) {
    return {
      ok: false,
      error: 'invalid_request',
      description: 'Custom URI scheme is not enabled for your Android client. Enable it in the advanced settings of the client.',
    };
  }
  const allowed = new Set(
    [...(client.schemes ?? []), client.package_name, client.bundle_id, reverseDns(client.client_id)].filter(Boolean).map((s) => String(s).toLowerCase()),
  );
  if (!allowed.has(scheme)) {
    return { ok: false, error: 'redirect_uri_mismatch', description: `the custom URI scheme "${scheme}" is not registered for ${client.client_id}` };
  }
  return { ok: true };
}

/** `123-abc.apps.example.com` → `com.example.apps.123-abc`. */
export function reverseDns(name: string): string {
  return name.split('.').reverse().join('.');
}

export type ClientState = { ok: true } | { ok: false; error: 'deleted_client'; description: string };

export function clientUsable(client: OAuthClient, now: number): ClientState {
  if (client.deleted_at === undefined) return { ok: true };
  if (now - client.deleted_at < DELETED_CLIENT_RESTORE_MS) {
    const until = new Date(client.deleted_at + DELETED_CLIENT_RESTORE_MS).toISOString();
    return { ok: false, error: 'deleted_client', description: `The OAuth client was deleted. Its owner can restore it until ${until}.` };
  }
  return { ok: false, error: 'deleted_client', description: 'The OAuth client was deleted more than 30 days ago and can no longer be restored.' };
}

/** Restores a deleted client within 30 days of deletion. Returns the problem, or undefined when restored. */
export function restoreClient(client: OAuthClient, now: number): string | undefined {
  if (client.deleted_at === undefined) return `${client.client_id} is not deleted`;
  if (now - client.deleted_at >= DELETED_CLIENT_RESTORE_MS) return `${client.client_id} was deleted more than 30 days ago`;
  delete client.deleted_at;
  return undefined;
}

/** An embedded web view's user agent (Android WebView `; wv)`, iOS WKWebView without Safari, in-app browsers). */
export function isEmbeddedUserAgent(ua: string | undefined): boolean {
  if (!ua) return false;
  if (/; wv\)|\bWebView\b|FBAN|FBAV|Instagram|Line\//.test(ua)) return true;
  return /\b(iPhone|iPad|iPod)\b/.test(ua) && /AppleWebKit/.test(ua) && !/Safari\//.test(ua);
}

/** Clients that skip the granular consent screen (the seed: domain-wide delegation, or marked trusted): all requested scopes or none. */
export function skipsGranularConsent(client: OAuthClient): boolean {
  return client.trusted === true || client.domain_wide_delegation === true;
}
