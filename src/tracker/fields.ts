/**
 * A field of the tracker's resource table as a flag (packages/shared/src/tracker/resource-spec.ts): its help is
 * resources.yaml's, its kind, choices, nullability and requiredness the generated contract's; validation reads
 * the full contract (contract.ts) through `source`.
 */
export type { FieldSpec, FieldType } from '@opsctl/shared/tracker/resource-spec.js';

// The patterns and the problem shape are the contract's, shared with the mock (packages/shared).
export { COLOR_PATTERN, UUID_PATTERN, type FieldProblem } from '@opsctl/shared/tracker/patterns.js';
export const COLOR_HINT = 'use "#" followed by 6 hex digits, e.g. #ff0000 (names such as "red" are not accepted)';
