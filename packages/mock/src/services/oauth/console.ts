/**
 * The developer console's side of the mock authorization server (seed 000, "OAuth client", "States and
 * transitions", "Limits"): the console-only fields of a client, what the console shows of it, deletion
 * by hand and of unused clients, ownership verification against the mock's store listings. What the
 * sign-in path needs (sweep, the token endpoint's gate) lives in console-core.ts.
 */

import { randomBytes } from 'node:crypto';
import type { MockState } from '../../store.js';
import type { ConsoleClient } from './console-core.js';
import { integrityView } from './integrity.js';
import { DELETED_CLIENT_RESTORE_MS } from './registry.js';
import { oauth } from './tokens.js';
import type { StoreListings } from './slice-types.js';
export type { StoreApp, StoreItem, StoreListings } from './slice-types.js';

export {
  afterRestore,
  allClients,
  DAY_MS,
  DEFAULT_UNUSED_CLIENT_DAYS,
  findClient,
  sweepNeeded,
  sweepUnused,
  type ConsoleClient,
  type ConsoleFields,
} from './console-core.js';

const PUBLIC_TYPES = new Set(['mobile_a', 'mobile_b', 'extension']);

/** A new client ID shaped like the real ones: `<12 digits>-<32 characters>.apps.mock`. */
export function newClientId(): string {
  const digits = Array.from(randomBytes(12), (b) => String(b % 10)).join('');
  const tail = Array.from(randomBytes(32), (b) => 'abcdefghijklmnopqrstuvwxyz0123456789'[b % 36]).join('');
  return `${digits}-${tail}.apps.mock`;
}

export function newClientSecret(type: string): string | undefined {
  return PUBLIC_TYPES.has(type) ? undefined : `MOCKSPX-${randomBytes(21).toString('base64url')}`;
}

/** What the console shows of a client. Never the secret: only whether there is one. */
export function clientView(c: ConsoleClient, now: number): Record<string, unknown> {
  const out: Record<string, unknown> = {
    client_id: c.client_id,
    type: c.type,
    name: c.name,
    status: c.deleted_at === undefined ? 'active' : now - c.deleted_at < DELETED_CLIENT_RESTORE_MS ? 'deleted' : 'deleted_permanently',
    has_secret: Boolean(c.client_secret),
  };
  const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
  if (c.type === 'mobile_a') {
    Object.assign(out, {
      package_name: c.package_name ?? null,
      sha1_fingerprint: c.sha1_fingerprint ?? null,
      custom_scheme_enabled: Boolean(c.custom_scheme_enabled),
    });
  }
  if (c.type === 'mobile_b') {
    Object.assign(out, {
      bundle_id: c.bundle_id ?? null,
      store_id: c.store_id ?? null,
      team_id: c.team_id ?? null,
      integrity: integrityView(c.integrity, now),
    });
  }
  if (c.type === 'universal_desktop') out.store_id = c.store_id ?? null;
  if (c.type === 'extension') out.item_id = c.item_id ?? null;
  if (c.type === 'mobile_a' || c.type === 'extension') {
    out.ownership = {
      state: c.ownership?.state ?? 'unverified',
      account: c.ownership?.account ?? null,
      verified_at: iso(c.ownership?.verified_at),
      problem: c.ownership?.problem ?? null,
    };
  }
  Object.assign(out, {
    created_at: iso(c.created_at),
    last_used_at: iso(c.last_used_at),
    deleted_at: iso(c.deleted_at),
    deleted_by: c.deleted_at === undefined ? null : (c.deleted_by ?? 'manual'),
    restorable_until: c.deleted_at === undefined ? null : iso(c.deleted_at + DELETED_CLIENT_RESTORE_MS),
  });
  return out;
}

export function storeListings(state: MockState): StoreListings {
  return (oauth(state).store ??= { apps: [], items: [] });
}

/**
 * Ownership verification (seed, "Authentication" 6): mobile A needs an app in the store console with the
 * same package name and SHA-1 fingerprint on which `account` is an administrator; an extension needs a
 * store item with the same item ID published by `account`. Returns the problem, or undefined when verified.
 */
export function verifyOwnership(state: MockState, c: ConsoleClient, account: string, now: number, delayMs = 0): { problem?: string; retryAfterS?: number } {
  const who = account.toLowerCase();
  const store = storeListings(state);
  let problem: string | undefined;
  let grantedAt: number | undefined;
  if (c.type === 'mobile_a') {
    const app = store.apps.find((a) => a.package_name === c.package_name && a.sha1_fingerprint === c.sha1_fingerprint);
    if (!app) problem = `no app in the store console has package name ${c.package_name} and SHA-1 fingerprint ${c.sha1_fingerprint ?? '(none set)'}`;
    else if (!app.admins.some((a) => a.toLowerCase() === who)) problem = `${account} has no administrator rights on ${c.package_name} in the store console`;
    else grantedAt = app.granted_at;
  } else {
    const item = store.items.find((i) => i.item_id === c.item_id);
    if (!item) problem = `no store item has the ID ${c.item_id}`;
    else if (item.publisher.toLowerCase() !== who) problem = `${account} is not the publisher of store item ${c.item_id}`;
    else grantedAt = item.granted_at;
  }
  // the seed: "allow a few minutes after granting access" (mock serve --ownership-delay)
  const visibleAt = (grantedAt ?? 0) + delayMs;
  if (!problem && now < visibleAt) {
    const retryAfterS = Math.ceil((visibleAt - now) / 1000);
    problem = `the access granted on the store listing is not visible to verification yet (allow a few minutes after granting access): try again in ${retryAfterS} s`;
    c.ownership = { state: 'unverified', account, problem };
    return { problem, retryAfterS };
  }
  c.ownership = problem ? { state: 'unverified', account, problem } : { state: 'verified', account, verified_at: now };
  return problem ? { problem } : {};
}

/** Fields whose change voids an ownership verification. */
export const OWNERSHIP_FIELDS = new Set(['package_name', 'sha1_fingerprint', 'item_id']);
