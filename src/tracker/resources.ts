/**
 * The tracker's resource table, as the CLI reads it: the rows are generated (packages/shared/src/tracker/resources.ts,
 * from the contract and resources.yaml: `npm run gen:contract`), shared with the mock; what is the CLI's alone
 * (which fields name records: refs.ts) is re-exported here, beside the look-up by name over the whole table.
 */
import type { ResourceSpec } from '@opsctl/shared/tracker/resource-spec.js';
import { RESOURCES } from '@opsctl/shared/tracker/resources.js';

export type { ArgSpec, ExtraVerb, Paging, ResourceSpec, Verb } from '@opsctl/shared/tracker/resource-spec.js';
export * from '@opsctl/shared/tracker/resources.js';
export { argRef, extraByName, fieldRef, operationKey } from './refs.js';

export function resourceByName(name: string): ResourceSpec | undefined {
  return RESOURCES.find((r) => r.name === name);
}
