import { DEFINITIONS } from '@opsctl/shared/tracker/contract.js';
import { operationFor } from '@opsctl/shared/tracker/lookup.js';
import { unknownProblems, validateDefinition } from '@opsctl/shared/tracker/validate.js';
import type { FieldProblem, FieldSpec } from './fields.js';

/**
 * The CLI's check of a request body before sending: against the generated tracker contract, through the
 * checks it shares with the mock (@opsctl/shared/tracker/validate). Loaded only by verbs that send a body,
 * so reads never pay for it.
 */

/**
 * Validates a request body against the generated contract (packages/shared/src/tracker/contract.ts): the
 * definition of the operation that `fields` come from for `mode` (their `source`), so types, limits,
 * formats, enums, nullability and required fields are the document's. A required field that the table
 * marks not required (apply's records, matched by their key) is not asked for. Returns the problems
 * found (empty when valid); a key that the definition does not name is a problem too.
 */
export function validateBody(fields: Record<string, FieldSpec>, mode: 'create' | 'update', body: unknown): FieldProblem[] {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return [{ field: 'body', message: 'must be a JSON object', kind: 'invalid' }];
  }
  const definition = bodyDefinition(fields, mode);
  if (!definition) return unknownProblems(Object.keys(body), mode);
  const own = (p: FieldProblem) => (Object.hasOwn(fields, p.field) ? fields[p.field] : undefined);
  // the table's choices: a required field it does not ask for (apply's records), null where either of create and update takes it (apply plans both)
  return validateDefinition(definition, body, mode).filter(
    (p) => !(p.kind === 'required' && own(p) && !own(p)?.required) && !(p.message === 'cannot be null' && own(p)?.nullable),
  );
}

/** The contract's definition of the body that `fields` belong to in `mode`, if any. */
function bodyDefinition(fields: Record<string, FieldSpec>, mode: 'create' | 'update'): string | undefined {
  const key = Object.values(fields)
    .map((f) => f.source?.[mode])
    .find(Boolean);
  if (!key) return undefined;
  const [method = '', path = ''] = key.split(' ');
  return operationFor(method, path)?.body;
}

/** Every field the body of `fields` accepts in `mode`, per the contract (for the fix of an unknown one). */
export function acceptedFields(fields: Record<string, FieldSpec>, mode: 'create' | 'update'): string[] {
  const definition = bodyDefinition(fields, mode);
  return definition ? Object.keys(DEFINITIONS[definition]?.fields ?? {}) : [];
}

// The contract's own checks (shared with the mock): validateDefinition, validateOperationBody.
export { validateDefinition, validateOperationBody } from '@opsctl/shared/tracker/validate.js';
