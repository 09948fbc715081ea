import { isNameLike, keyName } from '../core/syntax-error.js';
import { itemPath } from '../core/problems.js';
/**
 * The `apply` planner: the records on the server and the records a file asks for → the writes that
 * make the server match. Pure: no IO, so every rule is unit-tested on plain data.
 */

export type ApplyAction = 'create' | 'update' | 'archive' | 'delete' | 'unchanged';

/** A record of an apply file or of the server, field by field. */
export type ApplyRecord = Record<string, unknown>;

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
  /** An update that renames the record (`renamed_from` in the file): its old name. */
  renamedFrom?: string;
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

/** The old names an entry's `renamed_from` gives (one or a list). */
export function oldNames(want: ApplyRecord): string[] {
  const from = want.renamed_from;
  return (Array.isArray(from) ? from : from === undefined || from === null ? [] : [from]).map(String);
}

export function planApply(current: ReadonlyArray<ApplyRecord>, desired: ReadonlyArray<ApplyRecord>, opts: PlanOptions): Plan {
  const keyOf = (r: ApplyRecord) => String(r[opts.key]).toLowerCase();
  const keyText = (r: ApplyRecord) => String(r[opts.key]);
  const idOf = (r: ApplyRecord) => (typeof r.id === 'number' || typeof r.id === 'string' ? r.id : undefined);
  const byKey = new Map(current.map((r) => [keyOf(r), r]));
  const steps: PlanStep[] = [];
  const wanted = new Set<string>();
  const sendable = new Set([...opts.fields, ...(opts.createOnly ?? [])].filter((f) => f !== 'archived'));
  // the lists of changed fields repeat (most records change the same fields): one array per distinct list
  const lists = new Map<string, string[]>();
  const shared = (names: string[]) => {
    const sig = names.join(',');
    let list = lists.get(sig);
    if (!list) lists.set(sig, (list = names));
    return list;
  };
  for (const want of desired) {
    const k = keyOf(want);
    wanted.add(k);
    // a rename keeps the record (its id, and so its stories): the old names are covered, never pruned
    const olds = oldNames(want).map((n) => n.toLowerCase());
    for (const old of olds) wanted.add(old);
    let have = byKey.get(k);
    let renamedFrom: string | undefined;
    if (!have) {
      const old = olds.map((o) => byKey.get(o)).find(Boolean);
      if (old) {
        have = old;
        renamedFrom = String(old[opts.key]);
      }
    }
    if (!have) {
      // the file's own record is the body when it holds nothing else (no copy per record: issue 27's memory bound)
      const own = Object.keys(want).every((f) => sendable.has(f) && want[f] !== undefined);
      const body: Record<string, unknown> = own ? want : {};
      if (!own) for (const f of sendable) if (want[f] !== undefined) body[f] = want[f];
      steps.push({ action: 'create', key: keyText(want), body, changes: shared([...sendable].filter((f) => f !== opts.key && body[f] !== undefined)) });
      // a record born archived: create it, then archive it
      if (want.archived === true) steps.push({ action: 'archive', key: keyText(want), body: { archived: true }, changes: ['archived'] });
      continue;
    }
    const body: Record<string, unknown> = {};
    for (const f of opts.fields) {
      if (want[f] === undefined) continue;
      // a rename sends the new name even when only its case differs
      if (norm(f, want[f]) !== norm(f, have[f]) || (renamedFrom !== undefined && f === opts.key)) body[f] = want[f];
    }
    const changes = shared(Object.keys(body));
    const action: ApplyAction = changes.length === 0 ? 'unchanged' : body.archived === true && !renamedFrom ? 'archive' : 'update';
    steps.push({
      action,
      key: keyText(want),
      id: idOf(have),
      body: changes.length ? body : undefined,
      changes,
      ...(renamedFrom !== undefined ? { renamedFrom } : {}),
    });
  }
  const unlisted: string[] = [];
  for (const have of current) {
    if (wanted.has(keyOf(have))) continue;
    if (opts.prune) steps.push({ action: 'delete', key: keyText(have), id: idOf(have), changes: [] });
    else unlisted.push(keyText(have));
  }
  const counts: Record<ApplyAction, number> = { create: 0, update: 0, archive: 0, delete: 0, unchanged: 0 };
  for (const s of steps) counts[s.action]++;
  return { steps, counts, unlisted };
}

/**
 * The apply-file entries of server records (what `export` prints): the managed fields in the table's
 * order, a field the server holds no value for (null) left out, sorted by key (any case) so that two
 * workspaces with the same records export the same text.
 */
export function exportItems(records: ReadonlyArray<Record<string, unknown>>, key: string, fields: readonly string[]): Record<string, unknown>[] {
  const order = [key, ...fields.filter((f) => f !== key)];
  return records
    .map((r) => Object.fromEntries(order.filter((f) => r[f] !== null && r[f] !== undefined).map((f) => [f, r[f]])))
    .sort((a, b) => String(a[key]).toLowerCase().localeCompare(String(b[key]).toLowerCase()) || String(a[key]).localeCompare(String(b[key])));
}

/** The writes of a plan, in the order they run: creates, updates, archives, deletes. */
export function writes(plan: Plan): PlanStep[] {
  const order: ApplyAction[] = ['create', 'update', 'archive', 'delete'];
  return order.flatMap((a) => plan.steps.filter((s) => s.action === a));
}

/**
 * The records of an apply file: a list, `{<resource>: [...]}`, or one record (what `get --json`
 * prints). Fields the server owns (`serverOwned`: id, stats, timestamps… as `list --json` and
 * `get --json` print them) are dropped and returned in `ignored`, so a command's own output applies
 * as it is; any other unknown field is a problem. Returns the items, or every problem at once, each
 * naming its item the way the file counts it (0-based, `labels[3].name`): the first PROBLEMS_SHOWN, the
 * rest counted in `more`.
 */
export function desiredItems(
  data: unknown,
  resource: string,
  key: string,
  allowed: readonly string[],
  serverOwned: readonly string[] = [],
): { items: ApplyRecord[]; problems: string[]; more?: number; ignored: string[] } {
  const single = data && typeof data === 'object' && !Array.isArray(data) && !Object.hasOwn(data, resource) && Object.hasOwn(data, key);
  const list = Array.isArray(data) ? data : single ? [data] : data && typeof data === 'object' ? (data as Record<string, unknown>)[resource] : undefined;
  if (!Array.isArray(list))
    return { items: [], problems: [`(top level): expected a list of ${resource}, a mapping with a "${resource}:" list, or one ${key}d record`], ignored: [] };
  const problems: string[] = [];
  let more = 0;
  const problem = (p: string) => (problems.length < PROBLEMS_SHOWN ? problems.push(p) : more++);
  const ignored = new Set<string>();
  const seen = new Map<string, number>();
  const items: ApplyRecord[] = [];
  for (const [i, item] of list.entries()) {
    const where = itemPath(resource, i);
    if (!item || typeof item !== 'object' || Array.isArray(item)) {
      problem(`${where}: must be a mapping such as {${key}: …}`);
      items.push(NOTHING); // keeps the file's numbering; a file with a problem plans nothing
      continue;
    }
    // the file's own record when every field is one apply manages (no copy per record: issue 27's memory bound)
    const fields = Object.keys(item as object);
    const own = fields.every((f) => allowed.includes(f));
    const rec: Record<string, unknown> = own ? (item as Record<string, unknown>) : {};
    if (!own)
      for (const field of fields) {
        const value = (item as Record<string, unknown>)[field];
        if (allowed.includes(field)) rec[field] = value;
        else if (serverOwned.includes(field)) ignored.add(field);
        else
          problem(
            `${isNameLike(field) ? `${itemPath(resource, i, field)}: unknown field` : `${itemPath(resource, i)}: unknown field ${keyName(field)}`}; allowed: ${allowed.join(', ')}`,
          );
      }
    items.push(rec);
    // one message per field: a missing key is "required"; a key of the wrong type is left to the type check
    if (rec[key] === undefined || rec[key] === null || rec[key] === '') problem(`${itemPath(resource, i, key)}: required`);
    if (typeof rec[key] !== 'string') continue;
    const k = String(rec[key]).toLowerCase();
    if (seen.has(k)) problem(`${itemPath(resource, i, key)}: "${String(rec[key])}" is listed twice (also ${itemPath(resource, seen.get(k)!)})`);
    else seen.set(k, i);
  }
  if (allowed.includes('renamed_from')) for (const p of renameProblems(items, resource, key, seen)) problem(p);
  return { items, problems, ...(more ? { more } : {}), ignored: [...ignored] };
}

/** The place of a non-mapping entry: one shared empty record, not one per entry (a file of a million `{}`s). */
const NOTHING: ApplyRecord = Object.freeze({});

/** How many problems of an apply file are kept and shown; the rest are counted (`more`): a file of a million bad entries costs one short message. */
export const PROBLEMS_SHOWN = 100;

/** `renamed_from`: a name or a list of names, none of them listed as an entry of its own or claimed twice. */
function renameProblems(items: ReadonlyArray<ApplyRecord>, resource: string, key: string, names: ReadonlyMap<string, number>): string[] {
  const problems: string[] = [];
  const claimed = new Map<string, number>();
  for (const [i, rec] of items.entries()) {
    if (!rec || typeof rec !== 'object' || rec.renamed_from === undefined) continue;
    const from = rec.renamed_from;
    const list = Array.isArray(from) ? from : [from];
    if (list.length === 0 || !list.every((n) => typeof n === 'string' && n.trim() !== '')) {
      problems.push(`${itemPath(resource, i, 'renamed_from')}: must be a ${key} or a list of them`);
      continue;
    }
    for (const old of list as string[]) {
      const k = old.toLowerCase();
      const own = names.get(k);
      if (own !== undefined && own !== i)
        problems.push(
          `${itemPath(resource, i, 'renamed_from')}: "${old}" is also listed as ${itemPath(resource, own)}; a renamed ${key} is listed once, under its new ${key}`,
        );
      else if (claimed.has(k) && claimed.get(k) !== i)
        problems.push(`${itemPath(resource, i, 'renamed_from')}: "${old}" is also renamed by ${itemPath(resource, claimed.get(k)!)}`);
      else claimed.set(k, i);
    }
  }
  return problems;
}
