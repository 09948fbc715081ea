/**
 * The label service (Drive Labels API v2 and v2beta) described once: its methods, enums, updatable
 * properties, id patterns and default limits. The CLI verbs (flag choices, hence completions), the
 * apply file's checks, the client and the mock all read this table; a test compares it with both
 * discovery documents the mock serves (packages/mock/src/services/labels/drivelabels-{v2,v2beta}-discovery.json).
 * Plain data: it is loaded at start-up by `commands/labels/index.ts`.
 */

/**
 * The versions of the API, each described by its discovery document (shared/ref/drivelabels-*-discovery.json):
 * `v2` is Google's current one and opsctl's default; `v2beta` is kept as a profile setting (`labels_version`).
 * Both have the same methods, parameters and schema properties (their schema names differ by prefix).
 */
export { LABEL_API_VERSIONS, type LabelApiVersion } from './versions.js';
import type { LabelApiVersion } from './versions.js';
export const DEFAULT_LABEL_API_VERSION: LabelApiVersion = 'v2';

/** The API path prefix of a version (the discovery document's `servicePath` + version). */
export const apiPrefix = (version: LabelApiVersion = DEFAULT_LABEL_API_VERSION): string => `/${version}`;
/** The default version's prefix. */
export const API = apiPrefix();

export const LABEL_TYPES = ['SHARED', 'ADMIN'] as const;
export type LabelType = (typeof LABEL_TYPES)[number];
/** Label types the service reports but no client creates. */
export const OTHER_LABEL_TYPES = ['GOOGLE_APP'] as const;
export const ROLES = ['READER', 'APPLIER', 'ORGANIZER', 'EDITOR'] as const;
export type Role = (typeof ROLES)[number];
export const COPY_MODES = ['DO_NOT_COPY', 'ALWAYS_COPY', 'COPY_APPLIABLE'] as const;
export type CopyMode = (typeof COPY_MODES)[number];
export const APPS = ['DRIVE', 'GMAIL'] as const;
export type App = (typeof APPS)[number];
export const VIEWS = ['LABEL_VIEW_BASIC', 'LABEL_VIEW_FULL'] as const;
export type View = (typeof VIEWS)[number];
export const DATE_FORMATS = ['LONG_DATE', 'SHORT_DATE'] as const;
export type DateFormat = (typeof DATE_FORMATS)[number];
export const LIFECYCLE_STATES = ['UNPUBLISHED_DRAFT', 'PUBLISHED', 'DISABLED', 'DELETED'] as const;

/** Each enum of the table and where the discovery document defines it (`Schema.property`, prefix left off). */
export const ENUMS = {
  'Label.labelType': [...LABEL_TYPES, ...OTHER_LABEL_TYPES],
  'LabelPermission.role': ROLES,
  'LabelAppliedLabelPolicy.copyMode': COPY_MODES,
  'LabelEnabledAppSettingsEnabledApp.app': APPS,
  'DeltaUpdateLabelRequest.view': VIEWS,
  'FieldDateOptions.dateFormatType': DATE_FORMATS,
  'Lifecycle.state': LIFECYCLE_STATES,
} as const;

/** The field types of the CLI and the apply file, each with the Field property that carries its options. */
export const FIELD_TYPE_OPTIONS = {
  text: 'textOptions',
  integer: 'integerOptions',
  date: 'dateOptions',
  selection: 'selectionOptions',
  user: 'userOptions',
} as const;
export type FieldType = keyof typeof FIELD_TYPE_OPTIONS;
export const FIELD_TYPES = Object.keys(FIELD_TYPE_OPTIONS) as FieldType[];
export type TypeOptionsKey = (typeof FIELD_TYPE_OPTIONS)[FieldType];
export const TYPE_OPTION_KEYS = Object.values(FIELD_TYPE_OPTIONS) as TypeOptionsKey[];

/** The request kinds of one `:delta` (DeltaUpdateLabelRequest.Request), in the discovery document's order. */
export const DELTA_KINDS = [
  'createField',
  'createSelectionChoice',
  'deleteField',
  'deleteSelectionChoice',
  'disableField',
  'disableSelectionChoice',
  'enableField',
  'enableSelectionChoice',
  'updateField',
  'updateFieldType',
  'updateLabel',
  'updateSelectionChoiceProperties',
] as const;
export type DeltaKind = (typeof DELTA_KINDS)[number];

/** What an update request may change (the properties schemas; `updateMask` names these). */
export const PROPERTIES = {
  label: ['title', 'description'],
  field: ['displayName', 'required', 'insertBeforeField'],
  choice: ['displayName', 'description', 'badgeConfig', 'insertBeforeChoice'],
} as const;

/** Ids: a label's (output only), a field's (output only) and a choice's, as the discovery document gives them. */
export const ID_PATTERNS = {
  label: /^[A-Za-z0-9_-]+$/,
  field: /^[A-Za-z0-9]+$/,
  choice: /^[A-Za-z0-9_]+$/,
} as const;
/** A BCP-47 language tag, as `languageCode` takes it (en, en-GB, zh-Hant-TW). */
export const LANGUAGE_CODE = /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$/;

export interface MethodSpec {
  http: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Under the version prefix (/v2), as the discovery document's `flatPath` writes it. */
  path: string;
  /** Query (and path) parameters. */
  params: readonly string[];
  /** Body fields the request takes (the request schema's properties), when it has a body. */
  body?: readonly string[];
}

const PAGE = ['pageSize', 'pageToken'] as const;
/** Every method of the service, by its discovery id (`labels.permissions.list` …). */
export const METHODS = {
  'labels.create': { http: 'POST', path: 'labels', params: ['languageCode', 'useAdminAccess'] },
  'labels.list': { http: 'GET', path: 'labels', params: ['customer', 'languageCode', 'minimumRole', ...PAGE, 'publishedOnly', 'useAdminAccess', 'view'] },
  'labels.get': { http: 'GET', path: 'labels/{labelsId}', params: ['languageCode', 'name', 'useAdminAccess', 'view'] },
  'labels.delete': { http: 'DELETE', path: 'labels/{labelsId}', params: ['name', 'useAdminAccess', 'writeControl.requiredRevisionId'] },
  'labels.delta': {
    http: 'POST',
    path: 'labels/{labelsId}:delta',
    params: ['name'],
    body: ['languageCode', 'requests', 'useAdminAccess', 'view', 'writeControl'],
  },
  'labels.publish': { http: 'POST', path: 'labels/{labelsId}:publish', params: ['name'], body: ['languageCode', 'useAdminAccess', 'writeControl'] },
  'labels.disable': {
    http: 'POST',
    path: 'labels/{labelsId}:disable',
    params: ['name'],
    body: ['disabledPolicy', 'languageCode', 'updateMask', 'useAdminAccess', 'writeControl'],
  },
  'labels.enable': { http: 'POST', path: 'labels/{labelsId}:enable', params: ['name'], body: ['languageCode', 'useAdminAccess', 'writeControl'] },
  'labels.updateLabelCopyMode': {
    http: 'POST',
    path: 'labels/{labelsId}:updateLabelCopyMode',
    params: ['name'],
    body: ['copyMode', 'languageCode', 'useAdminAccess', 'view'],
  },
  'labels.updateLabelEnabledAppSettings': {
    http: 'POST',
    path: 'labels/{labelsId}:updateLabelEnabledAppSettings',
    params: ['name'],
    body: ['enabledAppSettings', 'languageCode', 'useAdminAccess', 'view'],
  },
  'labels.updatePermissions': { http: 'PATCH', path: 'labels/{labelsId}/permissions', params: ['parent', 'useAdminAccess'] },
  'labels.locks.list': { http: 'GET', path: 'labels/{labelsId}/locks', params: [...PAGE, 'parent'] },
  'labels.permissions.list': { http: 'GET', path: 'labels/{labelsId}/permissions', params: [...PAGE, 'parent', 'useAdminAccess'] },
  'labels.permissions.create': { http: 'POST', path: 'labels/{labelsId}/permissions', params: ['parent', 'useAdminAccess'] },
  'labels.permissions.delete': { http: 'DELETE', path: 'labels/{labelsId}/permissions/{permissionsId}', params: ['name', 'useAdminAccess'] },
  'labels.permissions.batchUpdate': {
    http: 'POST',
    path: 'labels/{labelsId}/permissions:batchUpdate',
    params: ['parent'],
    body: ['requests', 'useAdminAccess'],
  },
  'labels.permissions.batchDelete': {
    http: 'POST',
    path: 'labels/{labelsId}/permissions:batchDelete',
    params: ['parent'],
    body: ['requests', 'useAdminAccess'],
  },
  'labels.revisions.updatePermissions': { http: 'PATCH', path: 'labels/{labelsId}/revisions/{revisionsId}/permissions', params: ['parent', 'useAdminAccess'] },
  'labels.revisions.locks.list': { http: 'GET', path: 'labels/{labelsId}/revisions/{revisionsId}/locks', params: [...PAGE, 'parent'] },
  'labels.revisions.permissions.list': {
    http: 'GET',
    path: 'labels/{labelsId}/revisions/{revisionsId}/permissions',
    params: [...PAGE, 'parent', 'useAdminAccess'],
  },
  'labels.revisions.permissions.create': { http: 'POST', path: 'labels/{labelsId}/revisions/{revisionsId}/permissions', params: ['parent', 'useAdminAccess'] },
  'labels.revisions.permissions.delete': {
    http: 'DELETE',
    path: 'labels/{labelsId}/revisions/{revisionsId}/permissions/{permissionsId}',
    params: ['name', 'useAdminAccess'],
  },
  'labels.revisions.permissions.batchUpdate': {
    http: 'POST',
    path: 'labels/{labelsId}/revisions/{revisionsId}/permissions:batchUpdate',
    params: ['parent'],
    body: ['requests', 'useAdminAccess'],
  },
  'labels.revisions.permissions.batchDelete': {
    http: 'POST',
    path: 'labels/{labelsId}/revisions/{revisionsId}/permissions:batchDelete',
    params: ['parent'],
    body: ['requests', 'useAdminAccess'],
  },
  'limits.getLabel': { http: 'GET', path: 'limits/label', params: ['name'] },
  'users.getCapabilities': { http: 'GET', path: 'users/{usersId}/capabilities', params: ['customer', 'name'] },
} as const satisfies Record<string, MethodSpec>;
export type MethodId = keyof typeof METHODS;

/** The `:verb` methods on one label (`labels/ID:publish` …), from the table. */
export const LABEL_VERBS = Object.values(METHODS)
  .map((m) => /^labels\/\{labelsId\}:(\w+)$/.exec(m.path)?.[1])
  .filter((v): v is string => Boolean(v)) as Array<'delta' | 'publish' | 'disable' | 'enable' | 'updateLabelCopyMode' | 'updateLabelEnabledAppSettings'>;
export type LabelVerb = (typeof LABEL_VERBS)[number];

/** The structural limits (`limits/label`) the mock enforces and reports by default. */
export const DEFAULT_LIMITS = {
  name: 'limits/label',
  maxTitleLength: 200,
  maxDescriptionLength: 1000,
  maxFields: 10,
  maxDeletedFields: 50,
  maxDraftRevisions: 50,
  fieldLimits: {
    maxIdLength: 64,
    maxDisplayNameLength: 200,
    maxDescriptionLength: 1000,
    textLimits: { minLength: 0, maxLength: 100 },
    longTextLimits: { minLength: 0, maxLength: 200 },
    integerLimits: { minValue: '-9007199254740991', maxValue: '9007199254740991' },
    dateLimits: { minValue: { year: 1, month: 1, day: 1 }, maxValue: { year: 9999, month: 12, day: 31 } },
    selectionLimits: { listLimits: { maxEntries: 20 }, maxIdLength: 64, maxDisplayNameLength: 200, maxChoices: 200, maxDeletedChoices: 100 },
    userLimits: { listLimits: { maxEntries: 20 } },
  },
};
export type LabelLimitsShape = typeof DEFAULT_LIMITS;

/**
 * The output-only properties of a Label, a Field and a Choice, as the discovery document marks them.
 * `labels apply`, given `labels get --json` or `labels list --json` output, reads the label's id, copy
 * mode and lifecycle from them and ignores the rest (saying which, once, on stderr).
 */
export const SERVER_OWNED = {
  label: [
    'appliedCapabilities',
    'appliedLabelPolicy',
    'createTime',
    'creator',
    'customer',
    'disableTime',
    'disabler',
    'displayHints',
    'id',
    'lifecycle',
    'lockStatus',
    'name',
    'publishTime',
    'publisher',
    'revisionCreateTime',
    'revisionCreator',
    'revisionId',
    'schemaCapabilities',
  ],
  field: [
    'appliedCapabilities',
    'createTime',
    'creator',
    'disableTime',
    'disabler',
    'displayHints',
    'id',
    'lifecycle',
    'lockStatus',
    'publisher',
    'queryKey',
    'schemaCapabilities',
    'updateTime',
    'updater',
  ],
  choice: [
    'appliedCapabilities',
    'createTime',
    'creator',
    'disableTime',
    'disabler',
    'displayHints',
    'lifecycle',
    'lockStatus',
    'publishTime',
    'publisher',
    'schemaCapabilities',
    'updateTime',
    'updater',
  ],
} as const;
