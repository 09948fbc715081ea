/**
 * What the CLI reads of the tracker's rows without the table: which fields and arguments name records (names.ts
 * resolves names of them), operation keys, a row's extra verb by name. A verb's spec and run import this, and the
 * one row they need (resources/<name>.ts), not the whole table (resources.ts).
 */
import type { ArgSpec, ExtraVerb, FieldSpec, RefKind, ResourceSpec } from '@opsctl/shared/tracker/resource-spec.js';

/** `METHOD /path` with every placeholder written `{}`: the key of the generated flags table. */
export function operationKey(method: string, path: string): string {
  return `${method} ${path.replace(/\{[^}]+\}/g, '{}')}`;
}

/**
 * Which kind of record a field or argument of this name holds an id of (names.ts resolves names of it).
 * The API names these fields the same way on every resource, so one table covers them all.
 */
const REF_FIELDS: ReadonlyMap<string, RefKind> = new Map<string, RefKind>([
  ['owner_id', 'member'],
  ['owner_ids', 'member'],
  ['follower_ids', 'member'],
  ['member_ids', 'member'],
  ['requested_by_id', 'member'],
  ['author_id', 'member'],
  ['uploader_id', 'member'],
  ['owner_ids_add', 'member'],
  ['owner_ids_remove', 'member'],
  ['follower_ids_add', 'member'],
  ['follower_ids_remove', 'member'],
  ['epic_id', 'epic'],
  ['epic_ids', 'epic'],
  ['project_id', 'project'],
  ['project_ids', 'project'],
  ['iteration_id', 'iteration'],
  ['iteration_ids', 'iteration'],
  ['label_ids', 'label'],
  ['group_id', 'group'],
  ['group_ids', 'group'],
  ['objective_ids', 'objective'],
  ['milestone_id', 'milestone'],
  ['workflow_state_id', 'workflow-state'],
  ['epic_state_id', 'epic-state'],
  ['workflow_ids', 'workflow'],
  ['default_workflow_id', 'workflow'],
]);

/** The kind of record a flag's field refers to, when its value may be a name; only id-typed fields. */
export function fieldRef(name: string, f: FieldSpec): RefKind | undefined {
  if (!['int', 'uuid', 'int[]', 'uuid[]'].includes(f.type)) return undefined;
  return REF_FIELDS.get(name);
}

/** The kind of record a positional argument of a verb of `spec` refers to (`id` is the resource itself). */
export function argRef(spec: ResourceSpec, arg: ArgSpec): RefKind | undefined {
  return arg.name === 'id' ? spec.ref : REF_FIELDS.get(arg.name);
}

export function extraByName(spec: ResourceSpec, name: string): ExtraVerb | undefined {
  return spec.extras?.find((e) => e.name === name);
}
