import { FIELD_TYPE_OPTIONS, FIELD_TYPES, type FieldType } from './schema.js';

/** The parts of the v2 (and v2beta) resources opsctl reads (the discovery document has the rest). */
export interface Lifecycle {
  state?: 'UNPUBLISHED_DRAFT' | 'PUBLISHED' | 'DISABLED' | 'DELETED' | 'STATE_UNSPECIFIED';
  hasUnpublishedChanges?: boolean;
  disabledPolicy?: { hideInSearch?: boolean; showInApply?: boolean };
}

export interface Choice {
  id: string;
  properties?: { displayName?: string; description?: string; badgeConfig?: unknown };
  lifecycle?: Lifecycle;
}

export interface Field {
  id: string;
  properties?: { displayName?: string; required?: boolean };
  lifecycle?: Lifecycle;
  textOptions?: Record<string, unknown>;
  integerOptions?: Record<string, unknown>;
  dateOptions?: { dateFormatType?: string };
  userOptions?: { listOptions?: { maxEntries?: number } };
  selectionOptions?: { listOptions?: { maxEntries?: number }; choices?: Choice[] };
}

export interface Label {
  name: string;
  id: string;
  revisionId: string;
  labelType?: string;
  properties?: { title?: string; description?: string };
  lifecycle?: Lifecycle;
  appliedLabelPolicy?: { copyMode?: string };
  enabledAppSettings?: { enabledApps?: Array<{ app?: string }> };
  fields?: Field[];
  [key: string]: unknown;
}

export interface LabelPermission {
  name?: string;
  role?: string;
  email?: string;
  audience?: string;
  group?: string;
  person?: string;
}

export type DeltaRequest = Record<string, Record<string, unknown>>;

export interface DeltaResponse {
  responses?: Array<Record<string, unknown>>;
  updatedLabel?: Label;
}

export interface LabelLimits {
  maxTitleLength?: number;
  maxDescriptionLength?: number;
  maxFields?: number;
  fieldLimits?: {
    maxIdLength?: number;
    maxDisplayNameLength?: number;
    maxDescriptionLength?: number;
    selectionLimits?: { maxChoices?: number; maxDisplayNameLength?: number; maxIdLength?: number; listLimits?: { maxEntries?: number } };
    userLimits?: { listLimits?: { maxEntries?: number } };
  };
  [key: string]: unknown;
}

export { FIELD_TYPES, type FieldType };

export function fieldType(f: Field): FieldType | undefined {
  return FIELD_TYPES.find((t) => f[FIELD_TYPE_OPTIONS[t]] !== undefined);
}
