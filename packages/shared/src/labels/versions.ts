/**
 * The label service's API versions a profile may name (`labels_version`), apart from the rest of the label
 * schema (schema.ts re-exports them): src/config/services.ts, which every command loads, needs only these.
 */
export const LABEL_API_VERSIONS = ['v2', 'v2beta'] as const;
export type LabelApiVersion = (typeof LABEL_API_VERSIONS)[number];
