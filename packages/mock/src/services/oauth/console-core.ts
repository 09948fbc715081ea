/**
 * The part of the developer console that every sign-in touches, kept small so the sign-in path loads
 * none of the console's API, integrity check or security-event code: the console's options, the
 * automatic deletion of unused clients, the mock's signing key, and the token endpoint's gate (last use;
 * the integrity check of mobile B clients, whose module is imported only for a client that has one).
 */

import { generateKeyPair, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { own } from '@opsctl/shared/lookup.js';
import type { ServiceContext } from '../../service.js';
import type { MockState } from '../../store.js';
import type { DeliveryOptions } from './delivery.js';
import type { IntegrityEvidence } from './integrity.js';
import type { SigningKey } from './jwt.js';
import { DEFAULT_CLIENT_ID } from './registry.js';
import { oauth, storedField } from './tokens.js';
import type { ConsoleClient } from './slice-types.js';
export type { ConsoleFields, ConsoleClient } from './slice-types.js';

/** The console's knobs (`options.oauth`). */
export interface ConsoleOptions {
  /** Delay before an integrity-check change takes effect (default 900 s: the seed's "up to 15 minutes"). */
  integrityDelaySeconds?: number;
  /** Seconds after access is granted on a store listing before ownership verification sees it (default 0; the seed: "allow a few minutes"). */
  ownershipDelaySeconds?: number;
  /** Days without use after which a client is deleted automatically (default 180). */
  unusedClientDays?: number;
  /** Retry and timeout of security-event delivery. */
  events?: DeliveryOptions;
}

export const DAY_MS = 24 * 3600 * 1000;
/** The mock's reading of "unused": no authorization or token request for this many days (the seed gives no figure). */
export const DEFAULT_UNUSED_CLIENT_DAYS = 180;

export function consoleOptions(ctx: ServiceContext): ConsoleOptions {
  return ctx.options.oauth ?? {};
}

export function unusedDays(ctx: ServiceContext): number {
  return consoleOptions(ctx).unusedClientDays ?? DEFAULT_UNUSED_CLIENT_DAYS;
}

/** The client registry as a lookup that never reaches Object.prototype. */
export function findClient(state: MockState, id: string): ConsoleClient | undefined {
  return own(oauth(state).clients, id);
}

export function allClients(state: MockState): ConsoleClient[] {
  return Object.values(oauth(state).clients ?? {});
}

/** Unused clients that are due for automatic deletion (the mock's own client never is). */
function dueForSweep(c: ConsoleClient, now: number, unusedMs: number): boolean {
  if (c.deleted_at !== undefined || c.client_id === DEFAULT_CLIENT_ID) return false;
  if (c.created_at === undefined) return true; // first sight: stamp it
  return now - (c.last_used_at ?? c.created_at) >= unusedMs;
}

export function sweepNeeded(state: MockState, now: number, unusedDays: number): boolean {
  return allClients(state).some((c) => dueForSweep(c, now, unusedDays * DAY_MS));
}

/**
 * The console's automatic deletion of unused clients: a client with no use for `unusedDays` is deleted
 * as of the day it crossed the line (so its 30 restore days count from then). Clients first seen here
 * (seeded, or from a registry file) get `created_at` now. Returns the IDs it deleted.
 */
export function sweepUnused(state: MockState, now: number, unusedDays: number): string[] {
  const unusedMs = unusedDays * DAY_MS;
  const deleted: string[] = [];
  for (const c of allClients(state)) {
    if (!dueForSweep(c, now, unusedMs)) continue;
    if (c.created_at === undefined) {
      c.created_at = now;
      continue;
    }
    c.deleted_at = (c.last_used_at ?? c.created_at) + unusedMs;
    c.deleted_by = 'unused';
    deleted.push(c.client_id);
  }
  return deleted;
}

/** Deletes unused clients when one is due (a read first, so a quiet registry costs no write). */
export async function sweepIfDue(ctx: ServiceContext): Promise<void> {
  const now = ctx.now();
  const days = unusedDays(ctx);
  if (await ctx.store.read((s) => sweepNeeded(s, now, days))) await ctx.store.write((s) => sweepUnused(s, now, days));
}

/** After a restore: the client counts as used now, or the next sweep would delete it again at once. */
export function afterRestore(c: ConsoleClient, now: number): void {
  delete c.deleted_by;
  c.last_used_at = now;
}

/** Whether the state has no signing key yet (`ifReceivers`: and some receiver could get a SET). */
export function signingKeyMissing(s: MockState, ifReceivers = false): boolean {
  return !storedField(s, 'signing') && (!ifReceivers || hasReceivers(s));
}

/** Whether any security-event receiver is registered. */
export function hasReceivers(s: MockState): boolean {
  return (storedField(s, 'secevents')?.receivers?.length ?? 0) > 0;
}

/** Whether security events wait for delivery (what the delivery loop resumes on start). */
export function hasPendingEvents(s: MockState): boolean {
  const deliveries = storedField(s, 'secevents')?.deliveries;
  return Array.isArray(deliveries) && deliveries.some((d) => d.status === 'pending');
}

/** Generates the mock's signing key and stores it (unless another writer got there first). */
export async function makeSigningKey(ctx: ServiceContext): Promise<void> {
  const { privateKey, publicKey } = await promisify(generateKeyPair)('rsa', { modulusLength: 2048 });
  const key: SigningKey = {
    kid: randomBytes(8).toString('hex'),
    private_pem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    public_jwk: publicKey.export({ format: 'jwk' }),
  };
  await ctx.store.write((s) => {
    oauth(s).signing ??= key;
  });
}

/**
 * Makes the mock's signing key before a write needs it: an RSA key takes a while to generate, and doing
 * it inside a state-file write would hold the file's lock (and block the loop that keeps it) meanwhile.
 * `ifReceivers`: only when some receiver could get a SET.
 */
export async function ensureSigningKey(ctx: ServiceContext, ifReceivers = false): Promise<void> {
  if (await ctx.store.read((s) => signingKeyMissing(s, ifReceivers))) await makeSigningKey(ctx);
}

type IntegrityGate = typeof import('./integrity.js').integrityGate;
let integrityGate: IntegrityGate | undefined;

/**
 * Whether the token endpoint's gate needs the integrity module for this client: a mobile B client on
 * which the check was ever switched on (a client without changes is disabled: neither counted nor refused).
 */
export function integrityInPlay(client: ConsoleClient | undefined): boolean {
  return client?.type === 'mobile_b' && (client.integrity?.changes?.length ?? 0) > 0;
}

/** True when the gate can run for this client now; false when `loadIntegrityGate()` must come first. */
export function gateReady(client: ConsoleClient | undefined): boolean {
  return integrityGate !== undefined || !integrityInPlay(client);
}

export async function loadIntegrityGate(): Promise<void> {
  integrityGate ??= (await import('./integrity.js')).integrityGate;
}

/**
 * Called by the token endpoint for every request of a known, usable client (after `gateReady`): records
 * the use and runs the integrity check of mobile B clients. Returns an OAuth error when enforcement
 * refuses the request.
 */
export function consoleGate(
  state: MockState,
  client: ConsoleClient,
  ev: IntegrityEvidence,
  now: number,
): { status: number; error: string; description: string } | undefined {
  client.last_used_at = now;
  if (!integrityInPlay(client)) return undefined;
  if (!integrityGate) throw new Error('consoleGate: the integrity module is not loaded (call gateReady/loadIntegrityGate first)');
  const gate = integrityGate(state, client, ev, now);
  if (!gate.refused) return undefined;
  const why = gate.category === 'unverified_invalid' ? 'its integrity token is not valid' : 'it carries no integrity token';
  return {
    status: 401,
    error: 'invalid_client',
    description: `The integrity check of this client is enforced and this request was refused: ${why} (send a valid token in X-Integrity-Token).`,
  };
}

/** The integrity evidence of a token-endpoint request. */
export function integrityEvidence(headers: Record<string, string | string[] | undefined>, form: URLSearchParams): IntegrityEvidence {
  const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  return { token: one(headers['x-integrity-token']) ?? form.get('integrity_token') ?? undefined, bundleHeader: one(headers['x-ios-bundle-identifier']) };
}
