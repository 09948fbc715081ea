/**
 * The shapes the oauth service keeps in the mock state beside its tokens (tokens.ts's OAuthSlice): pending
 * sign-ins, the developer console's clients and store listings, security-event receivers and deliveries, the
 * signing key. Types only, importing nothing of the service, so the slice can name them without a circle.
 */
import type { JsonWebKey } from 'node:crypto';
import type { EventKind } from './console-schema.js';
import type { OAuthClient } from './registry.js';

export interface PendingRequest {
  id: string;
  client_id: string;
  redirect_uri: string;
  scopes: string[];
  state?: string;
  code_challenge?: string;
  code_challenge_method?: 'S256' | 'plain';
  nonce?: string;
  login_hint?: string;
  /** include_granted_scopes=true: the grant is the union with this user's earlier grants to the client. */
  include_granted_scopes?: boolean;
  expires_at: number;
}

/** Store listings the mock knows, for ownership verification. */
export interface StoreApp {
  package_name: string;
  sha1_fingerprint: string;
  /** E-mail addresses with administrator rights on the app in the store console. */
  admins: string[];
  /** When that access was granted (epoch ms): verification sees it only after the ownership delay. */
  granted_at?: number;
}

export interface StoreItem {
  item_id: string;
  /** The publisher's e-mail address. */
  publisher: string;
  /** When the item was published under that account (epoch ms): verification sees it only after the ownership delay. */
  granted_at?: number;
}

export interface StoreListings {
  apps: StoreApp[];
  items: StoreItem[];
}

export interface ConsoleFields {
  sha1_fingerprint?: string;
  team_id?: string;
  ownership?: { state: 'unverified' | 'verified'; account?: string; verified_at?: number; problem?: string };
  integrity?: IntegrityState;
  created_at?: number;
  last_used_at?: number;
  deleted_by?: 'manual' | 'unused';
}

export type ConsoleClient = OAuthClient & ConsoleFields;

export interface Receiver {
  id: string;
  /** Where SETs are POSTed (RFC 8935 push). */
  url: string;
  /** The client (the `aud` of its SETs) whose users' events it receives. */
  client_id: string;
  /** Event kinds it wants. */
  events: EventKind[];
  created_at: number;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'rejected';

export interface Delivery {
  jti: string;
  event: EventKind;
  receiver_id: string;
  client_id: string;
  url: string;
  /** The signed SET, sent byte for byte the same on every attempt. */
  set: string;
  /** Who the event is about (for `events list`). */
  subject: string;
  status: DeliveryStatus;
  attempts: number;
  created_at: number;
  next_attempt_at: number;
  /** Another delivery run holds it until then. */
  lease_until?: number;
  last_status?: number;
  last_error?: string;
  delivered_at?: number;
}

export interface SecEventsSlice {
  receivers: Receiver[];
  deliveries: Delivery[];
}

/** The mock's ID-token signing key (RS256), kept in the state so every process signs with the same key. */
export interface SigningKey {
  kid: string;
  private_pem: string;
  public_jwk: JsonWebKey;
}

export type IntegrityMode = 'disabled' | 'monitoring' | 'enforced';

export interface IntegrityMetrics {
  verified: number;
  unverified_outdated_client: number;
  unverified_unknown_origin: number;
  unverified_invalid: number;
  /** Requests refused because enforcement was on (all of them unverified). */
  rejected: number;
}

export interface IntegrityState {
  /** Requested changes, oldest first; the last one whose effective_at has passed is in force. */
  changes: Array<{ to: IntegrityMode; requested_at: number; effective_at: number }>;
  /** Set once the check was ever enabled: the bundle identifier is frozen from then on. */
  used: boolean;
  metrics: IntegrityMetrics;
}
