/**
 * The integrity check of mobile platform B clients (seed 000, "States and transitions"): disabled →
 * enable → monitoring only → enforce → enforced → unenforce → monitoring → disable → disabled. Every
 * change is requested at once but takes effect `delay` later (the seed's "up to 15 minutes"; the mock
 * takes the whole 15 minutes, on the mock's clock, so tests move the clock instead of waiting).
 *
 * What a valid integrity token is, in the mock: a JWT signed (RS256) with the mock's own key (the one
 * in /oauth2/v3/certs), typ `integrity+jwt`, with `aud` = the client ID, `sub` = `TEAMID.bundle.id`
 * (the app the attestation service vouches for, as it is registered now) and `exp` still ahead on the
 * mock's clock. `POST /oauth2/mock/clients/{id}/integrity-token` stands in for the attestation service
 * and issues one (valid one hour). The app sends it to the token endpoint in the header
 * `X-Integrity-Token` (or the form field `integrity_token`). A request without one counts as an
 * "outdated client" when it names the app (`X-Ios-Bundle-Identifier` equal to the bundle identifier,
 * as the platform's SDK sends it), otherwise as "unknown origin".
 */

import { createPrivateKey, createPublicKey, randomBytes, sign, verify } from 'node:crypto';
import type { MockState } from '../../store.js';
import { integrityProblem, type FieldProblem, type IntegrityAction } from './console-schema.js';
import { signingKey } from './jwt.js';
import { storedField } from './tokens.js';
import type { IntegrityMode, IntegrityMetrics, IntegrityState } from './slice-types.js';
export type { IntegrityMode, IntegrityMetrics, IntegrityState } from './slice-types.js';

export const METRIC_CATEGORIES = ['verified', 'unverified_outdated_client', 'unverified_unknown_origin', 'unverified_invalid'] as const;
export type MetricCategory = (typeof METRIC_CATEGORIES)[number];

export const DEFAULT_INTEGRITY_DELAY_SECONDS = 15 * 60;

export function emptyMetrics(): IntegrityMetrics {
  return { verified: 0, unverified_outdated_client: 0, unverified_unknown_origin: 0, unverified_invalid: 0, rejected: 0 };
}

export function newIntegrity(): IntegrityState {
  return { changes: [], used: false, metrics: emptyMetrics() };
}

/** The state the developer last asked for. */
export function configuredMode(st: IntegrityState | undefined): IntegrityMode {
  return st?.changes.at(-1)?.to ?? 'disabled';
}

/** The state in force at `now`. */
export function effectiveMode(st: IntegrityState | undefined, now: number): IntegrityMode {
  if (!st) return 'disabled';
  return [...st.changes].reverse().find((c) => c.effective_at <= now)?.to ?? 'disabled';
}

/** What the console shows: configured, in force, and the change on its way (if any). */
export function integrityView(st: IntegrityState | undefined, now: number): Record<string, unknown> {
  const configured = configuredMode(st);
  const effective = effectiveMode(st, now);
  const next = st?.changes.filter((c) => c.effective_at > now).at(-1);
  return {
    configured,
    effective,
    pending: next ? { to: next.to, effective_at: new Date(next.effective_at).toISOString() } : null,
    bundle_id_frozen: Boolean(st?.used),
  };
}

export type TransitionResult = { ok: true; to: IntegrityMode; effective_at: number } | ({ ok: false; status: 400 | 409 } & FieldProblem);

/** Applies enable / enforce / unenforce / disable to a mobile B client's check (mutates `client.integrity`). */
export function integrityTransition(
  client: { integrity?: IntegrityState; team_id?: string; bundle_id?: string },
  action: IntegrityAction,
  now: number,
  delayMs: number,
): TransitionResult {
  const st = (client.integrity ??= newIntegrity());
  const from = configuredMode(st);
  let to: IntegrityMode;
  const wrong = (message: string): TransitionResult => ({ ok: false, status: 409, field: 'integrity', message });
  switch (action) {
    case 'enable': {
      if (from !== 'disabled') return wrong(`is already enabled (${from}); to enforce it: enforce`);
      const problem = integrityProblem(client);
      if (problem) return { ok: false, status: 400, ...problem };
      to = 'monitoring';
      break;
    }
    case 'enforce':
      if (from === 'disabled') return wrong('is disabled: enable it first (monitoring only), look at the metrics, then enforce');
      if (from === 'enforced') return wrong('is already enforced');
      to = 'enforced';
      break;
    case 'unenforce':
      if (from !== 'enforced') return wrong(`is not enforced (${from}): nothing to unenforce`);
      to = 'monitoring';
      break;
    case 'disable':
      if (from === 'disabled') return wrong('is already disabled');
      to = 'disabled';
      break;
  }
  const effective_at = now + delayMs;
  // Keep the change in force now and every one still to come; older ones no longer matter.
  const lastInForce = st.changes.map((c) => c.effective_at <= now).lastIndexOf(true);
  st.changes = st.changes.slice(Math.max(0, lastInForce));
  st.changes.push({ to, requested_at: now, effective_at });
  if (to !== 'disabled') st.used = true;
  return { ok: true, to, effective_at };
}

interface IntegrityClient {
  client_id: string;
  team_id?: string;
  bundle_id?: string;
}

const appId = (c: IntegrityClient) => `${c.team_id}.${c.bundle_id}`;
const INTEGRITY_TTL_S = 3600;

/** The attestation service's stand-in: a token for the app as it is registered now. */
export function mintIntegrityToken(state: MockState, client: IntegrityClient, iss: string, now: number): { token: string; expires_in: number } {
  const key = signingKey(state);
  const iat = Math.floor(now / 1000);
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const input = `${enc({ alg: 'RS256', kid: key.kid, typ: 'integrity+jwt' })}.${enc({ iss, aud: client.client_id, sub: appId(client), iat, exp: iat + INTEGRITY_TTL_S, jti: randomBytes(12).toString('base64url') })}`;
  const sig = sign('sha256', Buffer.from(input), createPrivateKey(key.private_pem)).toString('base64url');
  return { token: `${input}.${sig}`, expires_in: INTEGRITY_TTL_S };
}

/** Is this a valid integrity token for this client, at `now`? */
export function verifyIntegrityToken(state: MockState, client: IntegrityClient, token: string, now: number): boolean {
  const [headerPart, claimsPart, signaturePart, ...more] = token.split('.');
  if (headerPart === undefined || claimsPart === undefined || signaturePart === undefined || more.length || token.length > 8192) return false;
  const key = storedField(state, 'signing');
  if (!key) return false;
  try {
    const header = JSON.parse(Buffer.from(headerPart, 'base64url').toString('utf8')) as Record<string, unknown>;
    if (header.alg !== 'RS256' || header.kid !== key.kid || header.typ !== 'integrity+jwt') return false;
    const ok = verify(
      'sha256',
      Buffer.from(`${headerPart}.${claimsPart}`),
      createPublicKey({ key: key.public_jwk, format: 'jwk' }),
      Buffer.from(signaturePart, 'base64url'),
    );
    if (!ok) return false;
    const claims = JSON.parse(Buffer.from(claimsPart, 'base64url').toString('utf8')) as Record<string, unknown>;
    return claims.aud === client.client_id && claims.sub === appId(client) && typeof claims.exp === 'number' && claims.exp * 1000 > now;
  } catch {
    return false;
  }
}

/** What a request to the token endpoint carries for the check. */
export interface IntegrityEvidence {
  token?: string;
  /** The `X-Ios-Bundle-Identifier` header (the app naming itself). */
  bundleHeader?: string;
}

/** Sorts one request into the seed's four metric categories. */
export function classify(state: MockState, client: IntegrityClient, ev: IntegrityEvidence, now: number): MetricCategory {
  if (ev.token) return verifyIntegrityToken(state, client, ev.token, now) ? 'verified' : 'unverified_invalid';
  return ev.bundleHeader && ev.bundleHeader === client.bundle_id ? 'unverified_outdated_client' : 'unverified_unknown_origin';
}

/**
 * Counts the request while the check is in force (monitoring or enforced) and says whether it is
 * refused (enforced and not verified). Disabled: neither counted nor refused.
 */
export function integrityGate(
  state: MockState,
  client: IntegrityClient & { integrity?: IntegrityState },
  ev: IntegrityEvidence,
  now: number,
): { refused: false } | { refused: true; category: MetricCategory } {
  const mode = effectiveMode(client.integrity, now);
  if (mode === 'disabled' || !client.integrity) return { refused: false };
  const category = classify(state, client, ev, now);
  client.integrity.metrics[category]++;
  if (mode === 'enforced' && category !== 'verified') {
    client.integrity.metrics.rejected++;
    return { refused: true, category };
  }
  return { refused: false };
}
