/**
 * The resource table's fields filled in from the generated contract: resources.ts names each flag and
 * its help; the kind of value, the choices, nullability, requiredness and limits come from the small
 * generated flags table (packages/shared/src/tracker/flags.ts, loaded at start-up; never contract.ts), and
 * `source` tells validate.ts which operation's definition to check a body against.
 */
import { FLAG_BODIES, FLAG_OPERATIONS, PATH_KINDS } from '@opsctl/shared/tracker/flags.js';
import { itemIdKind } from '@opsctl/shared/tracker/item-id.js';
import type { FlagKind } from '@opsctl/shared/tracker/shape.js';
import type { FieldSpec } from './fields.js';
import type { ArgSpec, ExtraVerb, ResourceSpec } from './resource-spec.js';

/** A field of a body or query as this table names it: its flag's help (the rest comes from the generated contract). */
export type Helps = Record<string, string>;
/** A positional argument as this table names it: its name and help (what it holds comes from the contract). */
export type ArgInput = Omit<ArgSpec, 'type'>;
export type ExtraInput = Omit<ExtraVerb, 'query' | 'body' | 'args'> & { query?: Helps; body?: Helps; args?: readonly ArgInput[] };
type ResourceInput = Omit<ResourceSpec, 'fields' | 'listQuery' | 'extras' | 'idType'> & { fields: Helps; listQuery?: Helps; extras?: readonly ExtraInput[] };

/** `METHOD /path` with every placeholder written `{}`: the key of the generated flags table. */
export function operationKey(method: string, path: string): string {
  return `${method} ${path.replace(/\{[^}]+\}/g, '{}')}`;
}

/** A field of the generated table as the flag of `help`; `in` says which bodies (create, update) have it. */
function flagField(name: string, help: string, kinds: Array<{ mode: 'create' | 'update'; key: string; kind?: FlagKind }>, where: string): FieldSpec {
  const found = kinds.filter((k): k is { mode: 'create' | 'update'; key: string; kind: FlagKind } => k.kind !== undefined);
  const first = found[0];
  if (!first) throw new Error(`resources.ts: ${where} names ${name}, which no body or query of ${kinds.map((k) => k.key).join(' / ')} has in the contract`);
  const kind = first.kind;
  const max = kind.type === 'string' ? kind.max : undefined;
  return {
    type: kind.type,
    help: max !== undefined && !help.includes('at most') ? `${help} (at most ${max} characters)` : help,
    ...(kind.values ? { values: kind.values.map(String) } : {}),
    ...(found.some((k) => k.kind.nullable) ? { nullable: true } : {}),
    ...(found.some((k) => k.mode === 'create' && k.kind.required) ? { required: true } : {}),
    ...(max !== undefined ? { max } : {}),
    ...(kind.min !== undefined ? { min: kind.min } : {}),
    ...(kind.maxValue !== undefined ? { maxValue: kind.maxValue } : {}),
    ...(found.length < kinds.length ? { in: found.map((k) => k.mode) } : {}),
    source: Object.fromEntries(found.map((k) => [k.mode, k.key])),
  };
}

function bodyFields(helps: Helps, keys: Array<{ mode: 'create' | 'update'; key: string }>, where: string): Record<string, FieldSpec> {
  const defs = keys.map((k) => ({ ...k, def: FLAG_BODIES[FLAG_OPERATIONS[k.key]?.body ?? ''] }));
  return Object.fromEntries(
    Object.entries(helps).map(([name, help]) => [
      name,
      flagField(
        name,
        help,
        defs.map((d) => ({ mode: d.mode, key: d.key, kind: d.def?.[name] })),
        where,
      ),
    ]),
  );
}

function queryFields(helps: Helps, key: string, where: string): Record<string, FieldSpec> {
  const query = FLAG_OPERATIONS[key]?.query ?? {};
  return Object.fromEntries(Object.entries(helps).map(([name, help]) => [name, flagField(name, help, [{ mode: 'create', key, kind: query[name] }], where)]));
}

/** What the placeholders of an operation's path hold (generated PATH_KINDS); only integer ids and uuids are arguments. */
function idKinds(key: string, count: number, where: string): Array<'int' | 'uuid'> {
  const kinds = PATH_KINDS[key];
  if (!kinds || kinds.length !== count)
    throw new Error(`resources.ts: ${where} has ${count} argument(s), but ${key} has ${kinds?.length ?? 0} in the contract`);
  return kinds.map((k) => {
    if (k === 'string') throw new Error(`resources.ts: ${where}: ${key} takes a text placeholder, not an id`);
    return k;
  });
}

/** One row of the table with its fields' flags and its ids' kinds filled in from the generated contract (flags.ts). */
export function resource(r: ResourceInput): ResourceSpec {
  const item = `${r.path}/{id}`;
  const idType = itemIdKind(r.path);
  if (idType === 'string') throw new Error(`resources.ts: ${r.name}: ${item} takes a text placeholder, not an id`);
  const bodies = [
    ...(r.verbs.includes('create') ? [{ mode: 'create' as const, key: operationKey('POST', r.path) }] : []),
    ...(r.verbs.includes('update') ? [{ mode: 'update' as const, key: operationKey('PUT', item) }] : []),
  ];
  return {
    ...r,
    ...(idType ? { idType } : {}),
    fields: bodyFields(r.fields, bodies, `${r.name} fields`),
    listQuery: r.listQuery && queryFields(r.listQuery, operationKey('GET', r.path), `${r.name} list`),
    extras: r.extras?.map(({ query, body, args, ...e }): ExtraVerb => ({
      ...e,
      ...(args ? { args: zipKinds(args, idKinds(operationKey(e.method, e.path), args.length, `${r.name} ${e.name}`)) } : {}),
      ...(query ? { query: queryFields(query, operationKey(e.method, e.path), `${r.name} ${e.name}`) } : {}),
      ...(body ? { body: bodyFields(body, [{ mode: 'create', key: operationKey(e.method, e.path) }], `${r.name} ${e.name}`) } : {}),
    })),
  };
}

function zipKinds(args: readonly ArgInput[], kinds: ReadonlyArray<'int' | 'uuid'>): ArgSpec[] {
  return args.map((a, i) => ({ ...a, type: kinds[i] ?? 'int' }));
}
