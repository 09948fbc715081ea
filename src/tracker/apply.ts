import { itemPath } from '../core/problems.js';
/**
 * The `apply` planner: the records on the server and the records a file asks for → the writes that
 * make the server match. Pure: no IO, so every rule is unit-tested on plain data.
 */

export type ApplyAction = 'create' | 'update' | 'archive' | 'delete' | 'unchanged';

export interface PlanStep {
  action: ApplyAction;
  /** The record's key (its name). */
  key: string;
  /** The server's id (update, archive, delete, unchanged). */
  id?: number | string;
  /** The request body (create, update, archive). */
  body?: Record<string, unknown>;
  /** Which fields change, for the plan table. */
  changes: string[];
}

export interface Plan {
  steps: PlanStep[];
  counts: Record<ApplyAction, number>;
  /** Records on the server that the file does not list, left alone (no --prune). */
  unlisted: string[];
}

export interface PlanOptions {
  /** Matched on, case-insensitively (names are unique that way on the server). */
  key: string;
  /** The fields apply compares and writes on update. */
  fields: readonly string[];
  /** Fields sent only when creating (e.g. external_id). */
  createOnly?: readonly string[];
  /** Delete what the file does not list. */
  prune: boolean;
}

const norm = (field: string, v: unknown): unknown => (field === 'color' && typeof v === 'string' ? v.toLowerCase() : (v ?? null));

export function planApply(current: ReadonlyArray<Record<string, any>>, desired: ReadonlyArray<Record<string, any>>, opts: PlanOptions): Plan {
  const keyOf = (r: Record<string, any>) => String(r[opts.key]).toLowerCase();
  const byKey = new Map(current.map((r) => [keyOf(r), r]));
  const steps: PlanStep[] = [];
  const wanted = new Set<string>();
  for (const want of desired) {
    const k = keyOf(want);
    wanted.add(k);
    const have = byKey.get(k);
    if (!have) {
      const body: Record<string, unknown> = {};
      for (const f of [...opts.fields, ...(opts.createOnly ?? [])]) if (want[f] !== undefined && f !== 'archived') body[f] = want[f];
      steps.push({ action: 'create', key: want[opts.key], body, changes: Object.keys(body).filter((f) => f !== opts.key) });
      // a record born archived: create it, then archive it
      if (want.archived === true) steps.push({ action: 'archive', key: want[opts.key], body: { archived: true }, changes: ['archived'] });
      continue;
    }
    const body: Record<string, unknown> = {};
    for (const f of opts.fields) {
      if (want[f] === undefined) continue;
      if (norm(f, want[f]) !== norm(f, have[f])) body[f] = want[f];
    }
    const changes = Object.keys(body);
    const action: ApplyAction = changes.length === 0 ? 'unchanged' : body.archived === true ? 'archive' : 'update';
    steps.push({ action, key: want[opts.key], id: have.id, body: changes.length ? body : undefined, changes });
  }
  const unlisted: string[] = [];
  for (const have of current) {
    if (wanted.has(keyOf(have))) continue;
    if (opts.prune) steps.push({ action: 'delete', key: have[opts.key], id: have.id, changes: [] });
    else unlisted.push(have[opts.key]);
  }
  const counts: Record<ApplyAction, number> = { create: 0, update: 0, archive: 0, delete: 0, unchanged: 0 };
  for (const s of steps) counts[s.action]++;
  return { steps, counts, unlisted };
}

/** The writes of a plan, in the order they run: creates, updates, archives, deletes. */
export function writes(plan: Plan): PlanStep[] {
  const order: ApplyAction[] = ['create', 'update', 'archive', 'delete'];
  return order.flatMap((a) => plan.steps.filter((s) => s.action === a));
}

/**
 * The records of an apply file: a list, or `{<resource>: [...]}`. Returns the items, or every problem
 * at once, each naming its item the way the file counts it (0-based, `labels[3].name`).
 */
export function desiredItems(data: unknown, resource: string, key: string, allowed: readonly string[]): { items: Record<string, any>[]; problems: string[] } {
  const list = Array.isArray(data) ? data : data && typeof data === 'object' ? (data as Record<string, unknown>)[resource] : undefined;
  if (!Array.isArray(list)) return { items: [], problems: [`(top level): expected a list of ${resource}, or a mapping with a "${resource}:" list`] };
  const problems: string[] = [];
  const seen = new Map<string, number>();
  for (const [i, item] of list.entries()) {
    const where = itemPath(resource, i);
    if (!item || typeof item !== 'object' || Array.isArray(item)) {
      problems.push(`${where}: must be a mapping such as {${key}: …}`);
      continue;
    }
    const rec = item as Record<string, unknown>;
    if (typeof rec[key] !== 'string' || rec[key] === '') problems.push(`${itemPath(resource, i, key)}: required`);
    for (const field of Object.keys(rec)) if (!allowed.includes(field)) problems.push(`${itemPath(resource, i, field)}: unknown field; allowed: ${allowed.join(', ')}`);
    if (typeof rec[key] !== 'string') continue;
    const k = String(rec[key]).toLowerCase();
    if (seen.has(k)) problems.push(`${itemPath(resource, i, key)}: "${String(rec[key])}" is listed twice (also ${itemPath(resource, seen.get(k)!)})`);
    else seen.set(k, i);
  }
  return { items: list as Record<string, any>[], problems };
}
