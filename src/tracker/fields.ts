/**
 * A field of the tracker's resource table as a flag: resources.ts gives its help, the generated contract
 * (packages/shared/src/tracker/flags.ts) its kind, choices, nullability and requiredness; validation reads the
 * full contract (contract.ts) through `source`.
 */
export type FieldType = 'string' | 'int' | 'bool' | 'color' | 'uuid' | 'datetime' | 'date' | 'enum' | 'int[]' | 'uuid[]' | 'string[]' | 'json';

export interface FieldSpec {
  type: FieldType;
  /** String(n): at most n characters (for the help and the fix of a too-long value). */
  max?: number;
  /** A string's shortest length or an integer's least value; an integer's greatest. */
  min?: number;
  maxValue?: number;
  /** Enum values (the flag's choices). */
  values?: readonly string[];
  /** Accepts `null`, which unsets the property (update bodies). */
  nullable?: boolean;
  /** Required in the create body. */
  required?: boolean;
  /** Which bodies accept the field (default both). */
  in?: ReadonlyArray<'create' | 'update'>;
  /** One line for --help. */
  help?: string;
  /** The operation (`METHOD /path`, the generated contract's key) whose body or query holds the field, per mode: validation checks it there. */
  source?: Partial<Record<'create' | 'update', string>>;
}

// The patterns and the problem shape are the contract's, shared with the mock (packages/shared).
export { COLOR_PATTERN, UUID_PATTERN, type FieldProblem } from '@opsctl/shared/tracker/patterns.js';
export const COLOR_HINT = 'use "#" followed by 6 hex digits, e.g. #ff0000 (names such as "red" are not accepted)';
