import { DEFINITIONS, OPERATIONS, type OperationId } from './contract.js';
import type { ContractBody, ContractOperation } from './shape.js';

export type { OperationId } from './contract.js';

export interface FoundOperation extends ContractOperation {
  id: OperationId;
}

let compiled: Array<{ op: FoundOperation; re: RegExp; params: number }> | undefined;

function table(): NonNullable<typeof compiled> {
  if (!compiled) {
    compiled = Object.entries(OPERATIONS).map(([id, op]) => ({
      op: { id: id as OperationId, ...(op as ContractOperation) },
      re: new RegExp(`^${op.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}|\{[^}]+\}/g, '[^/]+')}$`),
      params: (op.path.match(/\{/g) ?? []).length,
    }));
    // a literal segment beats a placeholder: /stories/bulk before /stories/{story-public-id}
    compiled.sort((a, b) => a.params - b.params);
  }
  return compiled;
}

/** The operation a concrete request (`PUT /api/v3/stories/12`, the /api/v3 prefix optional) is, or undefined. */
export function operationAt(method: string, path: string): FoundOperation | undefined {
  const bare = (path.split('?')[0] ?? '').replace(/^\/api\/v3(?=\/)/, '');
  return table().find((t) => t.op.method === method.toUpperCase() && t.re.test(bare))?.op;
}

/** The operation of a path template with any placeholder names (`/epics/{id}/comments`, `/epics/:id`). */
export function operationFor(method: string, template: string): FoundOperation | undefined {
  const norm = (p: string) => p.replace(/\{[^}]+\}|:[\w-]+/g, '{}').replace(/^\/api\/v3(?=\/)/, '');
  const want = norm(template);
  return table().find((t) => t.op.method === method.toUpperCase() && norm(t.op.path) === want)?.op;
}

export function operation(id: OperationId): FoundOperation {
  return { id, ...(OPERATIONS[id] as ContractOperation) };
}

export function definition(name: string): ContractBody {
  const def = DEFINITIONS[name];
  if (!def) throw new Error(`the tracker contract has no definition ${name}`);
  return def;
}
