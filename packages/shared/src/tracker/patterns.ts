// Light enough for start-up (no zod, no contract tables): the tracker resource table reads these.

export const COLOR_PATTERN = /^#[0-9a-fA-F]{6}$/;
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A problem with one field of a body. `too_long` maps to the seed's "other 4xx". */
export interface FieldProblem {
  field: string;
  message: string;
  kind: 'too_long' | 'invalid' | 'required' | 'unknown';
}
