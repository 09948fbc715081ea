/**
 * The shape of the generated tracker contract (contract.ts): plain data in JSON Schema's words, read by
 * the CLI's validation (src/tracker/validate.ts) and the mock's body checks alike. Hand-written: the
 * generator (scripts/gen-tracker-contract.mjs) emits data that satisfies these types.
 */
export interface ContractField {
  /** JSON type; absent when the field is a reference to a definition or one of several shapes. */
  type?: 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object' | 'file' | 'any';
  /** uuid, date-time, date (the seed's iteration dates), css-color. */
  format?: string;
  /** A definition of DEFINITIONS (an object with its own fields). */
  ref?: string;
  /** One of several shapes (the document's `x-oneOf`). */
  oneOf?: ContractField[];
  maxLength?: number;
  minLength?: number;
  minimum?: number;
  maximum?: number;
  pattern?: string;
  enum?: ReadonlyArray<string | number>;
  /** Accepts `null` (unsets the property). */
  nullable?: boolean;
  items?: ContractField;
  uniqueItems?: boolean;
  minItems?: number;
  maxItems?: number;
  /** Inline object fields (rare: most objects are `ref`s). */
  properties?: Record<string, ContractField>;
}

export interface ContractBody {
  fields: Record<string, ContractField>;
  required: string[];
  /** additionalProperties: false — a key the definition does not name is refused. */
  closed: boolean;
}

export interface ContractOperation {
  method: string;
  /** Path under /api/v3 with the document's placeholder names, after the seed's renames. */
  path: string;
  pathParams: Record<string, ContractField>;
  query: Record<string, ContractField>;
  requiredQuery: string[];
  /** The body's definition, when the operation takes a JSON body. */
  body?: string;
  bodyRequired?: boolean;
  formData?: Record<string, ContractField>;
  /** Status → its body's schema (null: no body). */
  responses: Record<string, ContractField | null>;
}

/**
 * A field as a flag (flags.ts, the table the resource table's flags are made from): the kind of value the
 * flag takes, its choices, whether `null` is a value, whether the body requires it, and its limits
 * (for the help and the query flags). Types, limits and formats are checked against contract.ts when a
 * body is sent.
 */
export interface FlagKind {
  type: 'string' | 'int' | 'bool' | 'color' | 'uuid' | 'datetime' | 'date' | 'enum' | 'int[]' | 'uuid[]' | 'string[]' | 'json';
  values?: ReadonlyArray<string | number>;
  nullable?: boolean;
  required?: boolean;
  max?: number;
  /** A string's shortest length or an integer's least value (checked on query flags before sending). */
  min?: number;
  maxValue?: number;
}
