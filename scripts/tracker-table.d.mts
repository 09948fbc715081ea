// Types of scripts/tracker-table.mjs, for the tests that call the generator's table builder in-process.
import type { ResourceSpec } from '../packages/shared/src/tracker/resource-spec.js';
import type { ContractOperation, FlagKind } from '../packages/shared/src/tracker/shape.js';

export interface TableContract {
  operations: Record<string, ContractOperation>;
  flagOps: Record<string, { body?: string; query?: Record<string, FlagKind> }>;
  flagDefs: Record<string, Record<string, FlagKind>>;
  pathKinds: Record<string, ReadonlyArray<'int' | 'uuid' | 'string'>>;
}

export function opKey(method: string, path: string): string;
export function trackerTable(yamlText: string, contract: TableContract): ResourceSpec[];
export function tableModules(table: ResourceSpec[], header: string): Record<string, string>;
