import { randomUUID } from 'node:crypto';
import { DEFINITIONS, OPERATIONS, type OperationId } from '@opsctl/shared/tracker/contract.js';
import type { ContractField, ContractOperation } from '@opsctl/shared/tracker/shape.js';

/**
 * Spec-valid requests generated from the tracker's contract (packages/shared/src/tracker, the OpenAPI document
 * with the seed's renames): for an operation, the request with its required fields only, then one more
 * per optional field — each enum value, strings at their longest, integers at their bounds, `null`
 * where the document allows it. Ids come from `ids` (records made beforehand), by the field's name, so
 * a request refers to records that exist. The validating proxy checks each request is spec-valid.
 */
export interface SweepRequest {
  op: OperationId;
  method: string;
  /** Path under /api/v3 with its placeholders filled. */
  path: string;
  pathValues: Array<string | number>;
  query?: Record<string, unknown>;
  body?: unknown;
  /** What this variant sets: `base`, or `field=value kind`. */
  what: string;
}

export type Ids = Record<string, string | number | undefined>;

/** Which record an id field (or path placeholder) names, by its name. */
const ID_OF: Record<string, string> = {
  story_id: 'story',
  story_ids: 'story',
  subject_id: 'story',
  object_id: 'story2',
  parent_story_id: 'story2',
  converted_from_story_id: 'story2',
  epic_id: 'epic',
  epic_ids: 'epic',
  project_id: 'project',
  project_ids: 'project',
  iteration_id: 'iteration',
  iteration_ids: 'iteration',
  label_ids: 'label',
  group_id: 'group',
  group_ids: 'group',
  group_mention_ids: 'group',
  owner_id: 'member',
  owner_ids: 'member',
  follower_ids: 'member',
  member_ids: 'member',
  member_mention_ids: 'member',
  mention_ids: 'member',
  requested_by_id: 'member',
  author_id: 'member',
  uploader_id: 'member',
  workflow_state_id: 'workflowState',
  epic_state_id: 'epicState',
  objective_ids: 'objective',
  milestone_id: 'milestone',
  file_ids: 'file',
  linked_file_ids: 'linkedFile',
  story_template_id: 'template',
  default_workflow_id: 'workflow',
  workflow_ids: 'workflow',
  team_id: 'team',
  field_id: 'customField',
  value_id: 'customFieldValue',
  parent_id: 'storyComment',
  source_task_id: 'task',
  'category-public-id': 'category',
  'custom-field-public-id': 'customField',
  'doc-public-id': 'doc',
  'epic-public-id': 'epic',
  'entity-template-public-id': 'template',
  'file-public-id': 'file',
  'group-public-id': 'group',
  'health-public-id': 'health',
  'integration-public-id': 'webhook',
  'iteration-public-id': 'iteration',
  'key-result-public-id': 'keyResult',
  'label-public-id': 'label',
  'linked-file-public-id': 'linkedFile',
  'member-public-id': 'member',
  'milestone-public-id': 'milestone',
  'objective-public-id': 'objective',
  'project-public-id': 'project',
  'repo-public-id': 'repository',
  'story-public-id': 'story',
  'task-public-id': 'task',
  'story-link-public-id': 'storyLink',
  'workflow-public-id': 'workflow',
};

/** The sibling a `before_id` / `after_id` of a body on `path` moves its record next to. */
function sibling(path: string): string {
  if (path.includes('/tasks')) return 'task2';
  const first = /^\/([\w-]+)/.exec(path)?.[1] ?? '';
  return { 'custom-fields': 'customField2', epics: 'epic2', milestones: 'milestone2', objectives: 'objective2' }[first] ?? 'story2';
}

function idFor(name: string, f: ContractField, ids: Ids, path = ''): unknown {
  let kind = ID_OF[name.replace(/_(add|remove)$/, '')];
  if (name === 'comment-public-id') kind = path.startsWith('/epics/') ? 'epicComment' : 'storyComment';
  if (name === 'before_id' || name === 'after_id') kind = sibling(path);
  if (!kind) return undefined;
  const id = ids[kind];
  const one = id ?? (f.format === 'uuid' || f.items?.format === 'uuid' ? randomUUID() : 1);
  return f.type === 'array' ? [one] : one;
}

let counter = 0;
const unique = () => `s${(++counter).toString(36)}`;

/** The smallest valid value of a field (an existing record's id for an id field). */
export function sample(name: string, f: ContractField, ids: Ids, path: string, depth = 0): unknown {
  const id = idFor(name, f, ids, path);
  if (id !== undefined && (f.type === 'integer' || f.type === 'string' || f.type === 'array')) return id;
  if (f.ref) return sampleObject(f.ref, ids, path, depth + 1);
  if (f.oneOf) return sample(name, f.oneOf[0]!, ids, path, depth);
  if (f.enum) return f.enum[0];
  switch (f.type) {
    case 'string':
      if (f.format === 'date-time') return '2026-01-05T00:00:00Z';
      if (f.format === 'date') return '2026-01-05';
      if (f.format === 'uuid') return randomUUID();
      if (f.pattern?.includes('http') || f.format === 'uri' || /url|link/.test(name)) return 'https://example.com/x';
      if (f.format === 'css-color' || f.pattern) return '#123456';
      // unique, so names that must be unique (labels, groups' mention names) are
      return unique().padEnd(Math.max(f.minLength ?? 1, 1), 'x');
    case 'integer':
    case 'number':
      return f.minimum ?? 1;
    case 'boolean':
      return true;
    case 'array': {
      if (!f.items) return [];
      const n = Math.max(f.minItems ?? 0, depth > 1 ? 0 : 1);
      return Array.from({ length: n }, () => sample(name, f.items!, ids, path, depth + 1));
    }
    case 'object':
      return {};
    default:
      return 'x';
  }
}

function sampleObject(def: string, ids: Ids, path: string, depth: number): Record<string, unknown> {
  const d = DEFINITIONS[def];
  if (!d) return {};
  return Object.fromEntries(d.required.map((k) => [k, sample(k, d.fields[k]!, ids, path, depth)]));
}

/** The variants of one field beyond its sample: each enum value, the longest string, both integer bounds, null. */
function variants(name: string, f: ContractField, ids: Ids, path: string): Array<{ value: unknown; kind: string }> {
  const out: Array<{ value: unknown; kind: string }> = [{ value: sample(name, f, ids, path), kind: 'sample' }];
  if (f.enum) for (const v of f.enum.slice(1)) out.push({ value: v, kind: 'enum' });
  if (f.type === 'string' && f.maxLength !== undefined && !f.format && !f.pattern && !f.enum && idFor(name, f, ids, path) === undefined)
    out.push({
      value: (/url|link/.test(name) ? 'https://example.com/' : unique()).padEnd(Math.min(f.maxLength, 100_000), 'x'),
      kind: `maxLength ${f.maxLength}`,
    });
  if ((f.type === 'integer' || f.type === 'number') && idFor(name, f, ids, path) === undefined) {
    if (f.maximum !== undefined) out.push({ value: f.maximum, kind: 'maximum' });
  }
  if (f.type === 'boolean') out.push({ value: false, kind: 'false' });
  if (f.nullable) out.push({ value: null, kind: 'null' });
  return out;
}

function short(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 40 ? `${s.slice(0, 37)}…` : s;
}

/** Every generated request of one operation: its required fields only, then one per optional field value. */
export function requestsFor(op: OperationId, ids: Ids): SweepRequest[] {
  const o: ContractOperation = OPERATIONS[op];
  const pathValues: Array<string | number> = [];
  const path = o.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    const v = (idFor(name, o.pathParams[name] ?? { type: 'integer' }, ids, o.path) ?? 1) as string | number;
    pathValues.push(v);
    return encodeURIComponent(String(v));
  });
  const baseQuery = Object.fromEntries(o.requiredQuery.map((k) => [k, sample(k, o.query[k]!, ids, o.path)]));
  const hasQuery = Object.keys(o.query).length > 0;
  const def = o.body ? DEFINITIONS[o.body] : undefined;
  // the required fields afresh for each request (unique names: a label or group name is used once)
  const required = () => (o.body ? sampleObject(o.body, ids, o.path, 0) : undefined);
  const baseBody = required();
  const make = (what: string, query?: Record<string, unknown>, body?: unknown): SweepRequest => ({
    op,
    method: o.method,
    path,
    pathValues,
    ...(hasQuery ? { query } : {}),
    ...(o.body ? { body } : {}),
    what,
  });
  const out = [make('base', baseQuery, baseBody)];
  for (const [k, f] of Object.entries(o.query)) {
    if (o.requiredQuery.includes(k) || k === 'next') continue;
    for (const v of variants(k, f, ids, o.path)) out.push(make(`?${k}=${short(v.value)} ${v.kind}`, { ...baseQuery, [k]: v.value }, required()));
  }
  if (def && baseBody)
    for (const [k, f] of Object.entries(def.fields)) {
      for (const v of variants(k, f, ids, o.path)) {
        if (def.required.includes(k) && v.kind === 'sample') continue;
        out.push(make(`${k}=${short(v.value)} ${v.kind}`, hasQuery ? baseQuery : undefined, { ...required(), [k]: v.value }));
      }
    }
  return out;
}
