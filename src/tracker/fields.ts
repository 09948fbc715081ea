/**
 * The field vocabulary of the tracker's resource table. One description drives the CLI flags, the
 * client-side validation, the mock's validation and the shell completions.
 */
export type FieldType = 'string' | 'int' | 'bool' | 'color' | 'uuid' | 'datetime' | 'date' | 'enum' | 'int[]' | 'uuid[]' | 'string[]' | 'json';

export interface FieldSpec {
  type: FieldType;
  /** String(n): at most n characters. */
  max?: number;
  /** Numeric bounds, or the minimum string length. */
  min?: number;
  maxValue?: number;
  /** Enum values. */
  values?: readonly string[];
  /** Accepts `null`, which unsets the property (update bodies). */
  nullable?: boolean;
  /** Required in the create body. */
  required?: boolean;
  /** Which bodies accept the field (default both). */
  in?: ReadonlyArray<'create' | 'update'>;
  /** One line for --help. */
  help?: string;
  /** For `json` fields: a name in validate.ts's JSON_SCHEMAS, when the shape is known. */
  schema?: string;
}

// The patterns and the problem shape are the contract's, shared with the mock (packages/shared).
export { COLOR_PATTERN, UUID_PATTERN, type FieldProblem } from '@opsctl/shared/tracker/patterns.js';
export const COLOR_HINT = 'use "#" followed by 6 hex digits, e.g. #ff0000 (names such as "red" are not accepted)';
