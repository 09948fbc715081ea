/**
 * Security events (seed 000, "Events"; cross-account protection): Security Event Tokens (RFC 8417)
 * signed with the mock's key (the one in /oauth2/v3/certs), queued in the mock's state per receiver and
 * pushed to it (RFC 8935) by `delivery.ts`. The event type URIs are the seed's, with {secevent_base}
 * the OpenID RISC prefix.
 */

import { createHash, createPrivateKey, randomBytes, sign } from 'node:crypto';
import type { MockState } from '../../store.js';
import type { EventKind } from './console-schema.js';
import { signingKey } from './jwt.js';
import { own } from '@opsctl/shared/lookup.js';
import { oauth } from './tokens.js';
import type { Delivery, SecEventsSlice } from './slice-types.js';
export type { Receiver, DeliveryStatus, Delivery, SecEventsSlice } from './slice-types.js';

/** {secevent_base} in the seed. */
export const SECEVENT_BASE = 'https://schemas.openid.net/secevent';

export const EVENT_URIS: ReadonlyMap<EventKind, string> = new Map<EventKind, string>([
  ['sessions-revoked', `${SECEVENT_BASE}/risc/event-type/sessions-revoked`],
  ['token-revoked', `${SECEVENT_BASE}/oauth/event-type/token-revoked`],
  ['account-disabled', `${SECEVENT_BASE}/risc/event-type/account-disabled`],
  ['account-enabled', `${SECEVENT_BASE}/risc/event-type/account-enabled`],
]);

/** Delivered and rejected records kept for `events list`; pending ones are never dropped. */
const KEEP_FINISHED = 1000;

export function secEvents(state: MockState): SecEventsSlice {
  return (oauth(state).secevents ??= { receivers: [], deliveries: [] });
}

function signSet(state: MockState, claims: Record<string, unknown>): string {
  const key = signingKey(state);
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const input = `${enc({ alg: 'RS256', kid: key.kid, typ: 'secevent+jwt' })}.${enc(claims)}`;
  return `${input}.${sign('sha256', Buffer.from(input), createPrivateKey(key.private_pem)).toString('base64url')}`;
}

/** The subject of an event: the user (iss-sub), or for token-revoked the token's hash (RISC's OAuth profile). */
export interface EventSubject {
  sub: string;
  email: string;
  /** token-revoked: the revoked refresh token. */
  token?: string;
  /** account-disabled: hijacking | bulk-account. */
  reason?: string;
}

function eventPayload(kind: EventKind, iss: string, subject: EventSubject): Record<string, unknown> {
  if (kind === 'token-revoked') {
    return {
      subject: {
        subject_type: 'oauth_token',
        token_type: 'refresh_token',
        token_identifier_alg: 'hash_base64_sha512',
        token: createHash('sha512')
          .update(subject.token ?? '')
          .digest('base64'),
      },
    };
  }
  const payload: Record<string, unknown> = { subject: { subject_type: 'iss-sub', iss, sub: subject.sub } };
  if (kind === 'account-disabled') payload.reason = subject.reason ?? 'hijacking';
  return payload;
}

/** Clients the user has granted (any refresh token, live or not): the apps that hear about the account. */
function grantedClients(state: MockState, sub: string): Set<string> {
  const out = new Set<string>();
  for (const rt of Object.values(oauth(state).refreshTokens)) if (rt.sub === sub) out.add(rt.client_id);
  return out;
}

/**
 * Queues one SET per interested receiver: for token-revoked, the receivers of the token's client; for
 * account events, the receivers of every client the user has granted. Returns the new deliveries.
 */
export function enqueueEvent(state: MockState, kind: EventKind, subject: EventSubject, iss: string, now: number, onlyClient?: string): Delivery[] {
  const slice = secEvents(state);
  const clientsOf = onlyClient ? new Set([onlyClient]) : grantedClients(state, subject.sub);
  const uri = EVENT_URIS.get(kind) as string;
  const out: Delivery[] = [];
  for (const r of slice.receivers) {
    if (!clientsOf.has(r.client_id) || !r.events.includes(kind)) continue;
    const jti = randomBytes(16).toString('hex');
    const claims = { iss, aud: r.client_id, iat: Math.floor(now / 1000), jti, events: { [uri]: eventPayload(kind, iss, subject) } };
    const d: Delivery = {
      jti,
      event: kind,
      receiver_id: r.id,
      client_id: r.client_id,
      url: r.url,
      set: signSet(state, claims),
      subject: kind === 'token-revoked' ? `${subject.email} (refresh token)` : subject.email,
      status: 'pending',
      attempts: 0,
      created_at: now,
      next_attempt_at: now,
    };
    slice.deliveries.push(d);
    out.push(d);
  }
  pruneFinished(slice);
  return out;
}

function pruneFinished(slice: SecEventsSlice): void {
  const finished = slice.deliveries.filter((d) => d.status !== 'pending').length;
  if (finished <= KEEP_FINISHED) return;
  let drop = finished - KEEP_FINISHED;
  slice.deliveries = slice.deliveries.filter((d) => d.status === 'pending' || drop-- <= 0);
}

/** What `events list` shows of a delivery (the SET itself only on request). */
export function deliveryView(d: Delivery, withSet = false): Record<string, unknown> {
  const iso = (ms?: number) => (ms === undefined ? null : new Date(ms).toISOString());
  return {
    jti: d.jti,
    event: d.event,
    event_type: EVENT_URIS.get(d.event),
    subject: d.subject,
    client_id: d.client_id,
    receiver_id: d.receiver_id,
    url: d.url,
    status: d.status,
    attempts: d.attempts,
    last_status: d.last_status ?? null,
    last_error: d.last_error ?? null,
    created_at: iso(d.created_at),
    next_attempt_at: d.status === 'pending' ? iso(d.next_attempt_at) : null,
    delivered_at: iso(d.delivered_at),
    ...(withSet ? { set: d.set } : {}),
  };
}

/** The /revoke endpoint's hook: a refresh token revoked there is a token-revoked event for its client's receivers. */
export function refreshRevoked(s: MockState, token: string, iss: string, now: number): Delivery[] {
  const rt = own(oauth(s).refreshTokens, token);
  if (!rt) return [];
  return enqueueEvent(s, 'token-revoked', { sub: rt.sub, email: rt.email, token }, iss, now, rt.client_id);
}
