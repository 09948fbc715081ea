import { UsageError } from '../../../core/errors.js';

/** One `-f key=value` (raw: always a string) or `-F key=value` (typed: numbers, booleans, null, @file) as typed. */
export interface FieldArg {
  raw: boolean;
  text: string;
}

/** A JSON value a field can hold. */
export type FieldValue = string | number | boolean | null | FieldValue[] | { [key: string]: FieldValue };

/** Where a field's value comes from when it is `@file` or `@-`: the caller reads it (files and stdin belong to the command). */
export type ReadValue = (source: string, flag: string) => Promise<string>;

/**
 * The value of a typed field, as gh's `-F`: `true`, `false` and `null` as JSON, a whole number as a
 * number (one beyond 2^53 stays a string, so no digit is lost), `@path` the file's text, `@-` stdin;
 * anything else a string.
 */
export async function typedValue(value: string, flag: string, read: ReadValue): Promise<FieldValue> {
  if (value === 'true') return true;
  if (value === 'false') return false;
  if (value === 'null') return null;
  if (/^-?(0|[1-9]\d*)$/.test(value) && Number.isSafeInteger(Number(value))) return Number(value);
  if (value.startsWith('@') && value.length > 1) return read(value.slice(1), flag);
  return value;
}

/**
 * `key`, `key[sub]`, `key[sub][deeper]`, `key[]` (append to an array): the segments of a field's name.
 * An empty segment (`[]`) may only come last.
 */
export function keyPath(key: string, flag: string): string[] {
  const m = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
  if (!m) throw new UsageError(`${flag}: "${key}" is not a field name (write key, key[sub] or key[] for an array)`, { field: 'field' });
  const rest = [...(m[2] ?? '').matchAll(/\[([^[\]]*)\]/g)].map((x) => x[1] ?? '');
  const path = [m[1] ?? '', ...rest];
  if (path.slice(0, -1).includes('')) {
    throw new UsageError(`${flag}: "${key}": [] (append to an array) may only come last`, {
      field: 'field',
      hint: 'write the array items as key[]=a -F key[]=b',
    });
  }
  return path;
}

function isObject(v: FieldValue | undefined): v is { [key: string]: FieldValue } {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Puts `value` at `path` in `root` (objects made on the way, `[]` appends); a name used both as a value and an object is refused. */
function place(root: { [key: string]: FieldValue }, path: string[], value: FieldValue | undefined, flag: string, key: string): void {
  let node = root;
  for (let i = 0; i < path.length; i++) {
    const seg = path[i] ?? '';
    const last = i === path.length - 1;
    const nextIsAppend = path[i + 1] === '';
    if (last) {
      if (value !== undefined) node[seg] = value;
      return;
    }
    if (nextIsAppend) {
      const have = node[seg];
      if (have !== undefined && !Array.isArray(have)) throw clash(flag, key, path.slice(0, i + 1));
      const list = have ?? [];
      if (value !== undefined) list.push(value);
      node[seg] = list;
      return;
    }
    const have = node[seg];
    if (have === undefined) {
      const made = Object.create(null) as { [key: string]: FieldValue };
      node[seg] = made;
      node = made;
    } else if (isObject(have)) node = have;
    else throw clash(flag, key, path.slice(0, i + 1));
  }
}

function clash(flag: string, key: string, at: string[]): UsageError {
  const name = at.map((s, i) => (i === 0 ? s : `[${s}]`)).join('');
  return new UsageError(`${flag}: "${key}": ${name} is already a value, not an object or array`, { field: 'field', hint: `give ${name} one shape` });
}

/** The fields as a JSON body: nested keys make objects, `key[]` arrays (`key[]` with no `=`: an empty array). */
export async function fieldsBody(args: FieldArg[], read: ReadValue): Promise<{ [key: string]: FieldValue }> {
  // no inherited names: -f __proto__=x is a field like any other, not a prototype
  const root = Object.create(null) as { [key: string]: FieldValue };
  for (const { key, value, flag } of split(args)) {
    const path = keyPath(key, flag);
    if (value === undefined && path[path.length - 1] !== '') throw notKeyValue(flag, key);
    place(root, path, value === undefined ? undefined : await valueOf(value, flag, read), flag, key);
  }
  return root;
}

/** The fields as query parameters (GET, DELETE): each name exactly as typed, repeated names kept in order, values as text. */
export async function fieldsQuery(args: FieldArg[], read: ReadValue): Promise<Record<string, string | string[]>> {
  const out = Object.create(null) as Record<string, string | string[]>;
  for (const { key, value, flag } of split(args)) {
    keyPath(key, flag);
    if (value === undefined) throw notKeyValue(flag, key);
    const v = await valueOf(value, flag, read);
    const text = v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
    const have = out[key];
    out[key] = have === undefined ? text : [...(Array.isArray(have) ? have : [have]), text];
  }
  return out;
}

async function valueOf(value: { text: string; raw: boolean }, flag: string, read: ReadValue): Promise<FieldValue> {
  return value.raw ? value.text : typedValue(value.text, flag, read);
}

function split(args: FieldArg[]): Array<{ key: string; value?: { text: string; raw: boolean }; flag: string }> {
  return args.map(({ raw, text }) => {
    const flag = raw ? '-f' : '-F';
    const eq = text.indexOf('=');
    if (eq === 0) throw notKeyValue(flag, text);
    if (eq < 0) return { key: text, flag };
    return { key: text.slice(0, eq), value: { text: text.slice(eq + 1), raw }, flag };
  });
}

function notKeyValue(flag: string, text: string): UsageError {
  return new UsageError(`${flag}: "${text}" is not key=value`, { field: 'field', hint: `write it like ${flag} part=snippet (key[]=x for an array item)` });
}
