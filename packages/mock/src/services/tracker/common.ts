import { randomUUID } from 'node:crypto';
import type { FieldProblem } from '@opsctl/shared/tracker/validate.js';
import type { ItemResource } from '@opsctl/shared/tracker/resource-spec.js';
import { UPLOAD_REQUEST_LIMIT_BYTES } from '@opsctl/shared/tracker/limits.js';
import { MockError, type MockReply, type MockRequest } from '../../http.js';
import { byId } from '../../indexes.js';
import type { MockServiceOptions } from '../../service.js';
import type { MockState } from '../../store.js';
import type { LabelParam, MoveParams } from './bodies.js';
import type { Label, TrackerState } from './records.js';
import { labelByName } from './story-index.js';

/** What the generic routes (crud.ts) and the 404s read of a row of the shared resource table. */
export type ResourceRoutes = Pick<ItemResource, 'singular' | 'path' | 'idType' | 'verbs'>;

export type { TrackerState } from './records.js';

export const API = '/api/v3';
export const APP_URL = 'https://app.tracker.example/workspace';

/** The largest multipart upload `POST /files` accepts: `options.tracker.maxUploadBytes`, else 50 MiB (what the client batches under). */
export function maxUploadBytes(options: MockServiceOptions): number {
  return options.tracker?.maxUploadBytes ?? UPLOAD_REQUEST_LIMIT_BYTES;
}

export function tracker(state: MockState): TrackerState {
  return state.tracker as TrackerState;
}

export function nextId(t: TrackerState): number {
  t.seq += 1;
  return t.seq;
}

export function nowIso(now: number): string {
  return new Date(now).toISOString();
}

const tag = (v: unknown): string => (typeof v === 'string' && v ? v : 'unknown');

/**
 * The tracker's error shape: `{message, error, errors?}` with the seed's statuses, except the document's
 * typed errors, each answered with exactly its schema (no other key: the schemas refuse additional ones).
 */
export function errorReply(err: MockError): MockReply {
  switch (err.code) {
    case 'DisabledFeatureError':
      return { status: err.status, json: { message: err.message, feature_tag: tag(err.extra.feature_tag) } };
    case 'UnusableEntitlementError':
      return {
        status: err.status,
        json: { reason_tag: 'entitlement-violation', entitlement_tag: tag(err.extra.entitlement_tag), message: err.message.slice(0, 256) },
      };
    case 'DataConflictError':
      return { status: err.status, json: { error: 'data-conflict-error', message: err.message } };
    case 'MaxSearchResultsExceededError':
      return { status: err.status, json: { error: 'maximum-results-exceeded', message: err.message, 'maximum-results': 1000 } };
    default:
      return { status: err.status, json: { message: err.message, error: err.code, ...err.extra } };
  }
}

/**
 * Validates a request's body against its operation in the generated contract (@opsctl/shared/tracker, from
 * the OpenAPI document): schema mismatch → 400; a string over its limit → 413 (the seed's "other 4xx"),
 * each naming the field. `B` is the body type (bodies.ts): every field has been checked against the
 * document, no other key is present, and the required ones are there.
 */
export async function validate<B extends object>(req: Pick<MockRequest, 'method' | 'path'>, body: unknown = (req as MockRequest).body): Promise<B> {
  const [{ operationAt }, { validateOperationBody }] = await Promise.all([
    import('@opsctl/shared/tracker/lookup.js'),
    import('@opsctl/shared/tracker/validate.js'),
  ]);
  const op = operationAt(req.method, req.path);
  if (!op) throw new Error(`the tracker contract has no operation ${req.method} ${req.path}`);
  throwProblems(validateOperationBody(op, body ?? (op.body ? {} : undefined)));
  return (body ?? {}) as B;
}

/** Validates `body` against one definition of the contract (a story of a bulk create: CreateStoryParams). */
export async function validateAs<B extends object>(definition: string, mode: 'create' | 'update', body: unknown): Promise<B> {
  const { validateDefinition } = await import('@opsctl/shared/tracker/validate.js');
  throwProblems(validateDefinition(definition, body, mode));
  return body as B;
}

function throwProblems(problems: FieldProblem[]): void {
  if (problems.length === 0) return;
  const errors = Object.fromEntries(problems.map((p) => [p.field, p.message]));
  const tooLong = problems.every((p) => p.kind === 'too_long');
  const summary = problems.map((p) => `${p.field} ${p.message}`).join('; ');
  throw tooLong
    ? new MockError(413, 'string_too_long', `a string exceeded its length limit: ${summary}`, { errors })
    : new MockError(400, 'schema_mismatch', `schema mismatch: ${summary}`, { errors });
}

export function intParam(req: MockRequest, name: string): number {
  const raw = req.params[name];
  if (!/^\d{1,15}$/.test(raw ?? '')) throw new MockError(400, 'schema_mismatch', `schema mismatch: ${name} must be an integer`);
  return Number(raw);
}

export function uuidParam(req: MockRequest, name: string): string {
  const raw = req.params[name] ?? '';
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(raw)) {
    throw new MockError(400, 'schema_mismatch', `schema mismatch: ${name} must be a uuid`);
  }
  return raw.toLowerCase();
}

export function boolQuery(req: MockRequest, name: string): boolean | undefined {
  const v = req.query.get(name);
  if (v === null) return undefined;
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw new MockError(400, 'schema_mismatch', `schema mismatch: query parameter ${name} must be true or false`);
}

export function notFound(spec: Pick<ResourceRoutes, 'singular'>, id: number | string): MockError {
  return new MockError(404, 'not_found', `${spec.singular} ${id} does not exist`);
}

/** The record with this id (an index: O(1) in the collection's size), else 404. */
export function find<T extends { id: number | string }>(list: T[], id: number | string, spec: Pick<ResourceRoutes, 'singular'>): T {
  const item = byId(list, id);
  if (!item) throw notFound(spec, id);
  return item;
}

export function newGlobalId(): string {
  return randomUUID();
}

/** A reference to a record that does not exist, inside a body: 422 naming the field. */
export function unprocessable(message: string, field?: string): MockError {
  return new MockError(422, 'unprocessable', message, field ? { errors: { [field]: message } } : {});
}

/** Copies the keys present in `body` (null included: it unsets) onto `item`. */
export function assign<T, K extends keyof T>(item: T, body: Partial<Pick<T, K>>, keys: readonly K[]): void {
  for (const key of keys) if (body[key] !== undefined) item[key] = body[key];
}

/** Moves `item` before or after another record of `list` by renumbering `position`. */
export function move<T extends { id: number | string; position: number }>(list: T[], item: T, body: MoveParams, what: string): void {
  const target = body.before_id ?? body.after_id;
  if (target === undefined) return;
  const sorted = [...list].sort((a, b) => a.position - b.position).filter((x) => x !== item);
  const at = sorted.findIndex((x) => x.id === target);
  if (at < 0)
    throw unprocessable(
      `${body.before_id !== undefined ? 'before_id' : 'after_id'}: ${what} ${target} does not exist`,
      body.before_id !== undefined ? 'before_id' : 'after_id',
    );
  sorted.splice(body.before_id !== undefined ? at : at + 1, 0, item);
  sorted.forEach((x, i) => (x.position = i + 1));
}

/** Query parameter as an integer within bounds (400 otherwise). */
export function intQuery(req: MockRequest, name: string, dflt: number, min: number, max: number): number {
  const raw = req.query.get(name);
  if (raw === null || raw === '') return dflt;
  if (!/^-?\d+$/.test(raw)) throw new MockError(400, 'schema_mismatch', `schema mismatch: query parameter ${name} must be an integer`);
  const n = Number(raw);
  if (n < min || n > max) throw new MockError(400, 'schema_mismatch', `schema mismatch: query parameter ${name} must be between ${min} and ${max} (got ${n})`);
  return n;
}

/** A new label record with the next id (not yet stored): what both label creation paths make. */
export function newLabel(
  t: TrackerState,
  p: { name: string; description?: string | null; color?: string | null; external_id?: string | null },
  at: string,
): Label {
  const id = nextId(t);
  return {
    id,
    name: p.name,
    description: p.description ?? null,
    color: p.color ?? null,
    external_id: p.external_id ?? null,
    archived: false,
    app_url: `${APP_URL}/label/${id}`,
    entity_type: 'label',
    global_id: newGlobalId(),
    created_at: at,
    updated_at: at,
  };
}

/** Label ids for `labels: [{name, color, …}]` params: existing labels by name, new ones created. */
export function ensureLabels(t: TrackerState, params: readonly LabelParam[], at: string): number[] {
  const ids: number[] = [];
  for (const p of params) {
    let label = labelByName(t, String(p.name));
    if (!label) {
      label = newLabel(t, p, at);
      t.labels.push(label);
    }
    if (!ids.includes(label.id)) ids.push(label.id);
  }
  return ids;
}

/** While a feature switch is off, making or changing its records answers the service's 403 DisabledFeatureError. */
export function assertFeature(t: TrackerState, name: 'iterations' | 'story_templates'): void {
  if (t.features[name]) return;
  const what = name === 'iterations' ? 'iterations are' : 'story templates are';
  const verb = name === 'iterations' ? 'iterations' : 'entity-templates';
  throw new MockError(403, 'DisabledFeatureError', `${what} turned off for this workspace (opsctl tracker ${verb} enable)`, {
    feature_tag: name === 'iterations' ? 'iterations' : 'story-templates',
  });
}
