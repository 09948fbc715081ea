import type { FieldSpec } from './fields.js';
import { stories } from '@opsctl/shared/tracker/resources/stories.js';

/** One story of an import file, with where it came from (for error messages). */
export interface ImportItem {
  where: string;
  /** Create body (`state` already taken out). */
  body: Record<string, unknown>;
  /** A workflow state name to resolve to `workflow_state_id`. */
  state?: string;
}

export interface ImportPlan {
  create: ImportItem[];
  /** external_id → the id of the story that already has it. */
  existing: Array<{ item: ImportItem; id: number }>;
}

/** The most stories one bulk create carries. */
export const IMPORT_CHUNK = 100;

const LIST_SEP = /\s*;\s*/;

/** CSV cell → the field's type: ints, booleans, `;`-separated lists; labels by name; empty cells are absent. */
function fromCell(field: string, spec: FieldSpec | undefined, raw: string): unknown {
  const v = raw.trim();
  if (field === 'labels')
    return v
      .split(LIST_SEP)
      .filter(Boolean)
      .map((name) => ({ name }));
  if (field === 'tasks')
    return v
      .split(LIST_SEP)
      .filter(Boolean)
      .map((description) => ({ description }));
  if (!spec) return v;
  if (v === 'null' && spec.nullable) return null;
  switch (spec.type) {
    case 'int':
      return /^-?\d+$/.test(v) ? Number(v) : v;
    case 'bool':
      return v === 'true' ? true : v === 'false' ? false : v;
    case 'int[]':
      return v
        .split(LIST_SEP)
        .filter(Boolean)
        .map((x) => (/^-?\d+$/.test(x) ? Number(x) : x));
    case 'uuid[]':
    case 'string[]':
      return v.split(LIST_SEP).filter(Boolean);
    default:
      return v;
  }
}

/** Rows of a CSV file (header row = field names) as story objects. */
export function csvRecords(rows: Array<Record<string, string>>): Array<Record<string, unknown>> {
  return rows.map((row) => {
    const out: Record<string, unknown> = {};
    for (const [k, raw] of Object.entries(row)) {
      const field = k.trim();
      if (raw === undefined || raw.trim() === '') continue;
      out[field] = fromCell(field, stories.fields[field], raw);
    }
    return out;
  });
}

/**
 * The stories of a parsed file: a list, or `{stories: [...]}`. Each needs an `external_id` (what makes a
 * second run create nothing), unique within the file; `state` (a workflow state name) may stand in for
 * `workflow_state_id`. Returns a problem naming the item instead of throwing.
 */
export function importItems(data: unknown, rowLabel: (i: number) => string): { items: ImportItem[] } | { problem: string } {
  const list = Array.isArray(data)
    ? data
    : data && typeof data === 'object' && Array.isArray((data as { stories?: unknown }).stories)
      ? (data as { stories: unknown[] }).stories
      : undefined;
  if (!list) return { problem: 'expected a list of stories, or {stories: [...]}' };
  if (list.length === 0) return { problem: 'the file lists no stories' };
  const seen = new Map<string, string>();
  const items: ImportItem[] = [];
  for (const [i, raw] of list.entries()) {
    const where = rowLabel(i);
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return { problem: `${where}: is not an object of story fields` };
    const { state, ...body } = raw as Record<string, unknown>;
    const ext = body.external_id;
    if (typeof ext !== 'string' || ext.trim() === '') return { problem: `${where}: external_id is required (it is how a second run knows the story exists)` };
    const before = seen.get(ext);
    if (before) return { problem: `${where}: external_id "${ext}" is also used by ${before}` };
    seen.set(ext, where);
    if (state !== undefined && (typeof state !== 'string' || !state.trim())) return { problem: `${where}: state must be a workflow state name` };
    if (state !== undefined && body.workflow_state_id !== undefined) return { problem: `${where}: give state or workflow_state_id, not both` };
    items.push({ where, body, state: state });
  }
  return { items };
}

/** Which stories to create: those whose external_id no story has yet. */
export function planImport(items: readonly ImportItem[], current: ReadonlyArray<{ id: number; external_id?: string | null }>): ImportPlan {
  const byExt = new Map<string, number>();
  for (const s of current) if (typeof s.external_id === 'string') byExt.set(s.external_id, s.id);
  const plan: ImportPlan = { create: [], existing: [] };
  for (const item of items) {
    const id = byExt.get(item.body.external_id as string);
    if (id === undefined) plan.create.push(item);
    else plan.existing.push({ item, id });
  }
  return plan;
}

export function chunks<T>(list: readonly T[], size = IMPORT_CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}
