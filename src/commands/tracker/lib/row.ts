import type { ResourceSpec } from '../../../tracker/resources.js';

/** `id` or `id|name` for a resource whose records have names. */
export function idArg(spec: ResourceSpec): string {
  return spec.ref ? 'id|name' : 'id';
}

/** The help words of a verb that takes a name as well as an id. */
export function byName(spec: ResourceSpec): string {
  if (!spec.ref) return '';
  return spec.ref === 'member' ? '; by id, mention name, email or @me' : '; by id or exact name';
}

/** The row's example of a CRUD verb, or the generic one. */
export function rowExample(spec: ResourceSpec, verb: keyof NonNullable<ResourceSpec['examples']>, fallback: string): string {
  return spec.examples?.[verb] ?? fallback;
}
