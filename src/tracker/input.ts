import { dottedToItemPath, problemList, withArticle } from '../core/problems.js';
import { jsonSyntaxText } from '../core/syntax-error.js';
import { UsageError, ValidationError } from '../core/errors.js';
import { itemAt } from '../core/arrays.js';
import { shellWord } from '../core/hints.js';
import { COLOR_HINT, type FieldSpec } from './fields.js';
import { isId, type NameResolver } from './names.js';
import { argRef, fieldRef } from './refs.js';
import type { ArgSpec, ResourceSpec } from './resources.js';

/** `external_id` → `--external-id`. */
export function flagName(field: string): string {
  return `--${field.replace(/_/g, '-')}`;
}

/** commander's camelCase attribute for a field's flag. */
export function flagAttr(field: string): string {
  return field.replace(/[_-]([a-z])/g, (_m, c: string) => c.toUpperCase());
}

/** Converts one flag's text into the field's JSON value, or fails naming the flag. */
export function coerceFlag(field: string, spec: FieldSpec, raw: unknown): unknown {
  const flag = flagName(field);
  if (typeof raw === 'boolean') return raw;
  const text = String(raw);
  if (spec.nullable && text === 'null') return null;
  switch (spec.type) {
    case 'int': {
      if (!/^-?\d+$/.test(text)) throw new ValidationError(flag, `"${text}" is not an integer`);
      return Number(text);
    }
    case 'bool':
      if (text === 'true') return true;
      if (text === 'false') return false;
      throw new ValidationError(flag, `"${text}" is not true or false`);
    case 'int[]':
      return splitList(text).map((v) => {
        if (!/^-?\d+$/.test(v)) throw new ValidationError(flag, `"${v}" is not an integer`, 'give a comma-separated list, e.g. 1,2,3');
        return Number(v);
      });
    case 'uuid[]':
      return splitList(text);
    case 'string[]': {
      const items = splitList(text);
      const bad = spec.values ? items.find((v) => !spec.values?.includes(v)) : undefined;
      if (bad !== undefined)
        throw new ValidationError(flag, `"${bad}" is not one of: ${spec.values?.join(', ')}`, 'give a comma-separated list of those values');
      return items;
    }
    case 'json':
      try {
        return JSON.parse(text);
      } catch {
        throw new ValidationError(flag, 'is not valid JSON');
      }
    default:
      return text;
  }
}

function splitList(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** The `--data` hint: its three forms. */
export const DATA_FORMS = 'give @FILE (a JSON object in a file), - for stdin, or the JSON object itself';

/**
 * Reads `--data @file.json`, `--data -` (stdin) or inline JSON into an object. `readFile` reads the file
 * named after `@` as every file flag does (commands/lib/file-flag.ts: the file named, the cause in words, the fix).
 */
export async function readDataFlag(
  value: string | undefined,
  readStdin: () => Promise<string>,
  readFile: (path: string) => Promise<string>,
): Promise<Record<string, unknown>> {
  if (value === undefined) return {};
  let text: string;
  if (value === '-') text = await readStdin();
  else if (value.startsWith('@')) text = await readFile(value.slice(1));
  else text = value;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    const source = value === '-' ? 'stdin' : value.startsWith('@') ? value.slice(1) : 'the value';
    throw new UsageError(`--data: ${source} is not valid JSON: ${jsonSyntaxText(text)}`, {
      field: 'data',
      hint: DATA_FORMS,
    });
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new UsageError('--data: must be a JSON object', { field: 'data', hint: DATA_FORMS });
  return parsed as Record<string, unknown>;
}

/**
 * One flag's value: a field that holds ids of a kind that has names (`--owner-ids alice,@me`,
 * `--epic-id "Q3 launch"`) has each name resolved to its id (one list request per kind and run);
 * everything else is coerced as its type says.
 */
export async function flagValue(field: string, spec: FieldSpec, raw: unknown, names?: NameResolver): Promise<unknown> {
  const kind = fieldRef(field, spec);
  if (!kind || !names || typeof raw === 'boolean') return coerceFlag(field, spec, raw);
  const text = String(raw);
  if (spec.nullable && text === 'null') return null;
  const items = spec.type.endsWith('[]') ? splitList(text) : [text];
  // ids alone need no lookup (and keep their exact type checks)
  if (items.every((item) => isId(kind, item))) return coerceFlag(field, spec, raw);
  const ids = await names.resolveAll(kind, items, flagName(field));
  return spec.type.endsWith('[]') ? ids : ids[0];
}

/** The flags of `fields` as a body (on top of `data`, which they override). */
export async function flagsToBody(
  fields: Record<string, FieldSpec>,
  mode: 'create' | 'update',
  flags: Record<string, unknown>,
  data: Record<string, unknown>,
  names?: NameResolver,
): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = { ...data };
  for (const [field, fspec] of Object.entries(fields)) {
    if (fspec.in && !fspec.in.includes(mode)) continue;
    const raw = flags[flagAttr(field)];
    if (raw === undefined) continue;
    body[field] = await flagValue(field, fspec, raw, names);
  }
  return body;
}

/** Builds a create or update body from flags (and --data), then validates it against the contract. */
export async function buildBody(
  spec: ResourceSpec,
  mode: 'create' | 'update',
  flags: Record<string, unknown>,
  data: Record<string, unknown> = {},
  names?: NameResolver,
): Promise<Record<string, unknown>> {
  const body = await flagsToBody(spec.fields, mode, flags, data, names);
  await assertValid(spec.fields, mode, body, spec.singular);
  return body;
}

/** Rejects what the contract forbids before anything is sent, naming every bad field (as its flag). */
export async function assertValid(fields: Record<string, FieldSpec>, mode: 'create' | 'update', body: Record<string, unknown>, what: string): Promise<void> {
  const { acceptedFields, validateBody } = await import('./validate.js');
  const problems = validateBody(fields, mode, body);
  if (problems.length === 0) return;
  const described = problems.map((p) => {
    const top = itemAt(p.field.split('.'), 0);
    const fspec = fields[top];
    // a nested (json) field has no flag of its own: it came in --data
    const flag = fspec ? (fspec.type === 'json' ? `--data ${dottedToItemPath(p.field)}` : flagName(top)) : p.field;
    const hint =
      p.kind === 'required'
        ? `pass ${flag} to ${mode} ${withArticle(what)}`
        : p.kind === 'unknown'
          ? `${what} ${mode} accepts: ${acceptedFields(fields, mode).join(', ')}`
          : p.kind === 'too_long' && fspec?.max
            ? `shorten it to ${fspec.max} characters or fewer`
            : fspec?.type === 'color' && p.kind === 'invalid'
              ? COLOR_HINT
              : undefined;
    return { kind: p.kind, flag, message: p.message, hint };
  });
  // problems is not empty (returned above): nor is described, one entry per problem
  const first = itemAt(described, 0);
  if (described.length === 1) throw new ValidationError(first.flag, first.message, first.hint);
  // several: every one named, each with its fix; nothing was sent
  const required = described.filter((d) => d.kind === 'required' && d.flag).map((d) => d.flag);
  const others = described.filter((d) => d.kind !== 'required').map((d) => d.hint);
  const hints = [
    ...(required.length
      ? [`pass ${required.length > 1 ? `${required.slice(0, -1).join(', ')} and ${required.at(-1)}` : required[0]} to ${mode} ${withArticle(what)}`]
      : []),
    ...new Set(others.filter((h): h is string => Boolean(h))),
  ];
  throw new UsageError(`cannot ${mode} ${withArticle(what)}: ${problemList(described.map((d) => `${d.flag}: ${d.message}`))}`, {
    code: 'validation',
    field: first.flag,
    hint: hints.length ? hints.join('; ') : undefined,
  });
}

/** An id argument of a resource, or the name of one of its records (when its records have names). */
export async function resolveId(spec: ResourceSpec, raw: string, names: NameResolver): Promise<string | number> {
  if (spec.ref && !isId(spec.ref, raw.trim())) return names.resolve(spec.ref, raw, `<${spec.singular}>`);
  return parseId(spec, raw);
}

/** A positional argument of an extra verb: an id of its type, or a name when it refers to named records. */
export async function resolveArg(spec: ResourceSpec, arg: ArgSpec, raw: string, names: NameResolver): Promise<string | number> {
  const where = `<${(arg.name === 'id' ? `${spec.singular}-id` : arg.name).replace(/[_ ]/g, '-')}>`;
  const kind = argRef(spec, arg);
  if (kind && !isId(kind, raw.trim())) return names.resolve(kind, raw, where);
  const ok = arg.type === 'int' ? /^\d{1,15}$/.test(raw) : /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(raw);
  if (!ok) throw new ValidationError(where, `"${raw}" is not ${arg.type === 'int' ? 'an integer id' : 'a uuid'}`, `see: opsctl tracker ${spec.name} --help`);
  return raw;
}

/** The resources `opsctl tracker search <resource> --query Q` finds by text. */
const SEARCHABLE: ReadonlySet<string> = new Set(['stories', 'epics', 'iterations', 'milestones', 'objectives']);

/** Where to find a record's id: its list, else a search by the text given, else the resource's help. */
function findIdHint(spec: ResourceSpec, raw: string): string {
  if (spec.verbs.includes('list')) return `see: opsctl tracker ${spec.name} list`;
  if (SEARCHABLE.has(spec.name)) return `find its id by text: opsctl tracker search ${spec.name} --query ${shellWord(raw)}`;
  return `see: opsctl tracker ${spec.name} --help`;
}

/** Parses an id argument of a resource: an integer or a uuid, as the table says. */
export function parseId(spec: ResourceSpec, raw: string): string | number {
  if (spec.idType === 'int') {
    if (!/^\d{1,15}$/.test(raw)) throw new ValidationError(`${spec.singular} id`, `"${raw}" is not an integer id`, findIdHint(spec, raw));
    return Number(raw);
  }
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(raw)) {
    throw new ValidationError(`${spec.singular} id`, `"${raw}" is not a uuid`, findIdHint(spec, raw));
  }
  return raw;
}
