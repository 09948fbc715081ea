import { randomBytes } from 'node:crypto';
import { MockError, type MockReply, type MockRequest } from '../../http.js';
import type { MockServiceOptions } from '../../service.js';
import type { MockSlices } from '../../store.js';
import type { AccessTokenRecord } from '../oauth/tokens.js';
import { asObject } from '@opsctl/shared/json.js';

import {
  APPS,
  COPY_MODES,
  DEFAULT_LIMITS,
  LANGUAGE_CODE,
  ROLES,
  VIEWS,
  type App,
  type CopyMode,
  type DateFormat,
  type LIFECYCLE_STATES,
  type LabelLimitsShape,
  type LabelType,
  type Role,
  type View,
} from '@opsctl/shared/labels/schema.js';
import { clone } from '../../tx.js';

export { API, apiPrefix, LABEL_API_VERSIONS, type LabelApiVersion } from '@opsctl/shared/labels/schema.js';
export { APPS, COPY_MODES, DEFAULT_LIMITS, ROLES, VIEWS, type Role, type View };

/** The OAuth scopes of the label API (discovery document `auth.oauth2.scopes`). */
export const SCOPES = {
  labels: 'https://www.googleapis.com/auth/drive.labels',
  labelsReadonly: 'https://www.googleapis.com/auth/drive.labels.readonly',
  admin: 'https://www.googleapis.com/auth/drive.admin.labels',
  adminReadonly: 'https://www.googleapis.com/auth/drive.admin.labels.readonly',
} as const;
export const READ_SCOPES: readonly string[] = Object.values(SCOPES);
export const WRITE_SCOPES: readonly string[] = [SCOPES.labels, SCOPES.admin];

/** The table's lifecycle states but DELETED (a deleted label or field is gone from the mock's state). */
export type LifecycleState = Exclude<(typeof LIFECYCLE_STATES)[number], 'DELETED'>;

export interface DisabledPolicy {
  hideInSearch?: boolean;
  showInApply?: boolean;
}

/** Lifecycle bookkeeping of a label, field or choice. */
export interface Life {
  state: LifecycleState;
  /** Published at least once (decides what enable restores and whether delete needs a disable first). */
  everPublished: boolean;
  hasUnpublishedChanges: boolean;
  disabledPolicy?: DisabledPolicy;
  createTime: string;
  creator: string;
  updateTime: string;
  updater: string;
  publishTime?: string;
  publisher?: string;
  disableTime?: string;
  disabler?: string;
}

export interface StoredChoice {
  id: string;
  properties: { displayName: string; description?: string; badgeConfig?: { color?: Record<string, number>; priorityOverride?: string } };
  life: Life;
}

export interface StoredField {
  id: string;
  properties: { displayName: string; required?: boolean };
  life: Life;
  /** The type options hold the limits they were made with (output-only values, from the table's limits). */
  textOptions?: FieldLimits['textLimits'];
  integerOptions?: FieldLimits['integerLimits'];
  dateOptions?: FieldLimits['dateLimits'] & { dateFormatType: DateFormat; dateFormat: string };
  userOptions?: { listOptions?: { maxEntries?: number } };
  selectionOptions?: { listOptions?: { maxEntries?: number }; choices: StoredChoice[] };
}

/** The revisioned content of a label. */
export interface Content {
  properties: { title: string; description?: string };
  learnMoreUri?: string;
  life: Life;
  fields: StoredField[];
}

export interface Revision {
  revisionId: string;
  createTime: string;
  creator: string;
  /** A published revision (published revisions are kept; drafts older than the newest publish are deleted). */
  published: boolean;
  content: Content;
}

export interface StoredPermission {
  id: string;
  role: Role;
  email?: string;
  audience?: string;
}

export interface StoredLock {
  id: string;
  fieldId?: string;
  choiceId?: string;
  state: 'ACTIVE' | 'DELETING';
  createTime: string;
  creator?: string;
}

export interface StoredLabel {
  id: string;
  labelType: LabelType;
  createTime: string;
  creator: string;
  creatorEmail: string;
  /** Label-level lifecycle (the latest revision's content carries field lifecycles). */
  state: LifecycleState;
  disabledPolicy?: DisabledPolicy;
  publishTime?: string;
  publisher?: string;
  disableTime?: string;
  disabler?: string;
  revSeq: number;
  revisions: Revision[];
  copyMode: CopyMode;
  enabledApps?: Array<{ app: App }>;
  permSeq: number;
  permissions: StoredPermission[];
  locks: StoredLock[];
}

export interface LabelsSlice {
  labels: StoredLabel[];
}

export function slice(state: MockSlices): LabelsSlice {
  state.labels ??= { labels: [] };
  return state.labels as LabelsSlice;
}

/** The caller, from the bearer token (set by `authenticate`). */
export interface Caller {
  token: AccessTokenRecord;
  person: string;
  email: string;
  admin: boolean;
  adminWrite: boolean;
  canWrite: boolean;
}

export function caller(req: MockRequest): Caller {
  return req.auth as Caller;
}

export function newId(bytes = 10): string {
  return randomBytes(bytes).toString('hex');
}

export function iso(now: number): string {
  return new Date(now).toISOString();
}

// ---------- errors in Google's shape ----------

export const STATUS_BY_CODE: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  405: 'UNIMPLEMENTED',
  409: 'ALREADY_EXISTS',
  413: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

const GOOGLE_STATUSES = new Set([
  'INVALID_ARGUMENT',
  'FAILED_PRECONDITION',
  'UNAUTHENTICATED',
  'PERMISSION_DENIED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'ABORTED',
  'RESOURCE_EXHAUSTED',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
]);

/** `{error: {code, message, status}}`; the challenge of a 401 or 403 comes with the error (authenticate, RFC 6750 §3). */
export function errorReply(err: MockError): MockReply {
  const status = GOOGLE_STATUSES.has(err.code) ? err.code : (STATUS_BY_CODE[err.status] ?? (err.status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT'));
  const details = Array.isArray(err.extra.details) ? { details: err.extra.details } : {};
  return { status: err.status, json: { error: { code: err.status, message: err.message, status, ...details } } };
}

export const invalid = (message: string) => new MockError(400, 'INVALID_ARGUMENT', message);
export const precondition = (message: string) => new MockError(400, 'FAILED_PRECONDITION', message);
export const notFound = (message: string) => new MockError(404, 'NOT_FOUND', message);
export const denied = (message: string) => new MockError(403, 'PERMISSION_DENIED', message);

// ---------- limits ----------

/** `limits/label`: the table's default limits (src/labels/schema.ts), overridable per server. */
export type LabelLimits = LabelLimitsShape;
type FieldLimits = LabelLimits['fieldLimits'];

/**
 * The limits the mock enforces and reports. `createMockServer({options: {labels: {maxFields, maxChoices,
 * maxTitleLength, limits}}})` overrides them (`limits` is a partial LabelLimits, merged deeply).
 */
export function limitsFrom(options: MockServiceOptions): LabelLimits {
  const o = options.labels ?? {};
  const merged = deepMerge(clone(DEFAULT_LIMITS), o.limits) as LabelLimits;
  if (typeof o.maxFields === 'number') merged.maxFields = o.maxFields;
  if (typeof o.maxTitleLength === 'number') merged.maxTitleLength = o.maxTitleLength;
  if (typeof o.maxChoices === 'number') merged.fieldLimits.selectionLimits.maxChoices = o.maxChoices;
  return merged;
}

/** `over`'s values into `base` (changed in place), object into object. */
function deepMerge(base: Record<string, unknown>, over: unknown): Record<string, unknown> {
  for (const [k, v] of Object.entries(asObject(over))) {
    const b = base[k];
    base[k] = v && typeof v === 'object' && !Array.isArray(v) && b && typeof b === 'object' ? deepMerge(b as Record<string, unknown>, v) : v;
  }
  return base;
}

// ---------- request parsing helpers ----------

export function body(req: MockRequest): Record<string, unknown> {
  if (req.body === undefined) return {};
  if (!req.body || typeof req.body !== 'object' || Array.isArray(req.body)) throw invalid('the request body must be a JSON object');
  return req.body as Record<string, unknown>;
}

export function boolParam(value: unknown, name: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw invalid(`${name} must be true or false (got ${JSON.stringify(value)})`);
}

/** `languageCode` (query or body): a BCP-47 tag; the mock has one language, so it is checked and not used. */
export function languageParam(value: unknown, name = 'languageCode'): void {
  if (value === undefined || value === null || value === '') return;
  if (typeof value !== 'string') throw invalid(`${name} must be a string (a BCP-47 language code such as en or en-GB)`);
  if (!LANGUAGE_CODE.test(value)) throw invalid(`${name} "${value}" is not a BCP-47 language code (such as en or en-GB)`);
}

export function enumParam<T extends string>(value: unknown, name: string, allowed: readonly T[]): T | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw invalid(`${name} must be one of ${allowed.join(', ')} (got ${JSON.stringify(value)})`);
  }
  return value as T;
}

export function pageSizeParam(value: string | null, def: number): number {
  if (value === null || value === '') return def;
  if (!/^-?\d+$/.test(value)) throw invalid(`pageSize must be an integer (got "${value}")`);
  const n = Number(value);
  if (n < 0) throw invalid(`pageSize must not be negative (got ${n})`);
  if (n > 200) throw invalid(`pageSize must be at most 200 (got ${n})`);
  return n === 0 ? def : n;
}

/** Page tokens are opaque: base64url of {o: offset, k: a key of the query they belong to}. */
export function pageToken(offset: number, key: string): string {
  return Buffer.from(JSON.stringify({ o: offset, k: key })).toString('base64url');
}

export function readPageToken(value: string | null, key: string): number {
  if (!value) return 0;
  try {
    const t = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as { o: unknown; k: unknown };
    if (typeof t.o === 'number' && Number.isInteger(t.o) && t.o >= 0 && t.k === key) return t.o;
  } catch {
    // fall through
  }
  throw invalid(`pageToken "${value}" is not valid for this request (use the nextPageToken of the previous page with the same parameters)`);
}

export function paginate<T>(items: T[], req: MockRequest, key: string, def = 50): { page: T[]; next?: string } {
  const size = pageSizeParam(req.query.get('pageSize'), def);
  const offset = readPageToken(req.query.get('pageToken'), key);
  const page = items.slice(offset, offset + size);
  const next = offset + size < items.length ? pageToken(offset + size, key) : undefined;
  return { page, next };
}

/** A field mask as a set of camelCase paths; `undefined` when none was given, `'*'` for all. */
export function parseMask(mask: unknown, allowed: readonly string[], where: string): Set<string> | '*' | undefined {
  if (mask === undefined || mask === null || mask === '') return undefined;
  if (typeof mask !== 'string') throw invalid(`${where}.updateMask must be a comma-separated string`);
  const paths = mask
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  if (paths.includes('*')) return '*';
  const out = new Set<string>();
  for (const p of paths) {
    const camel = p.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase()).replace(/^properties\./, '');
    if (!allowed.includes(camel)) throw invalid(`${where}.updateMask: unknown field "${p}" (allowed: ${allowed.join(', ')})`);
    out.add(camel);
  }
  return out;
}
