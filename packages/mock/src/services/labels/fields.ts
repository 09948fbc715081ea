import { MockError } from '../../http.js';

/**
 * Google's partial response: the `fields` system parameter every method of the label API's discovery
 * documents takes ("Selector specifying which fields to include in a partial response"). The syntax of
 * Google's APIs: a comma-separated list of fields; `a/b` selects b inside a; `a(b,c)` selects b and c of
 * each a (an object, or every element of a list), nested as deep as needed (`labels(id,properties/title)`);
 * `*` selects every field at its level. A field the method's response cannot have is refused with Google's
 * 400 ("Invalid field selection NAME"), before the method runs.
 */

/** A selection: each field named, with what is selected inside it (`true`: all of it). */
export type Selection = Map<string, Selection | true>;

export interface SchemaNode {
  $ref?: string;
  type?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  additionalProperties?: SchemaNode;
}

const invalid = (what: string) => new MockError(400, 'INVALID_ARGUMENT', `Invalid field selection ${what}`);

/** Parses a `fields` value; throws Google's 400 naming what is wrong. */
export function parseFields(text: string): Selection {
  let at = 0;
  const name = (): string => {
    const m = /^\s*([A-Za-z0-9_$@-]+|\*)\s*/.exec(text.slice(at));
    if (!m) throw invalid(text.slice(at) ? text.slice(at) : `${text} (a field name is missing at its end)`);
    at += m[0].length;
    return m[1]!;
  };
  const list = (): Selection => {
    const out: Selection = new Map();
    for (;;) {
      // a path a/b/c (or a.b.c), then an optional sub-selection of its last field
      const path = [name()];
      while (text[at] === '/' || text[at] === '.') {
        at++;
        path.push(name());
      }
      let inner: Selection | true = true;
      if (text[at] === '(') {
        at++;
        inner = list();
        if (text[at] !== ')') throw invalid(`${text} (a "(" is not closed)`);
        at++;
        while (text[at] === ' ') at++;
      }
      merge(out, path, inner);
      if (text[at] !== ',') return out;
      at++;
    }
  };
  const selection = list();
  if (at !== text.length) throw invalid(`${text} (unexpected "${text.slice(at)}")`);
  return selection;
}

/** Adds the path (its last field selecting `inner`) to a selection; a field selected whole stays whole. */
function merge(into: Selection, path: string[], inner: Selection | true): void {
  const [head, ...rest] = path as [string, ...string[]];
  const sub: Selection | true = rest.length === 0 ? inner : new Map();
  if (rest.length > 0) merge(sub as Selection, rest, inner);
  const had = into.get(head);
  if (had === true || sub === true) into.set(head, true);
  else if (had === undefined) into.set(head, sub);
  else for (const [k, v] of sub) merge(had, [k], v);
}

/** Refuses a selection naming a field the method's response cannot have (its schema in the discovery document). */
export function checkFields(schemas: Record<string, SchemaNode>, responseRef: string | undefined, selection: Selection): void {
  const walk = (sel: Selection, schema: SchemaNode | undefined): void => {
    const s = resolve(schemas, schema);
    for (const [field, inner] of sel) {
      let child: SchemaNode | undefined;
      if (field === '*') child = undefined;
      else if (s?.additionalProperties) child = s.additionalProperties;
      else if (s?.properties && Object.hasOwn(s.properties, field)) child = s.properties[field];
      else throw invalid(field);
      const element = resolve(schemas, child)?.items ?? child;
      if (inner !== true && field !== '*') walk(inner, element);
    }
  };
  walk(selection, responseRef ? { $ref: responseRef } : undefined);
}

/** The response with only the selected fields (in every element of a list); fields it does not hold stay absent. */
export function selectFields(value: unknown, selection: Selection): unknown {
  if (Array.isArray(value)) return value.map((v) => selectFields(v, selection));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  const obj = value as Record<string, unknown>;
  const every = selection.get('*');
  for (const key of Object.keys(obj)) {
    const inner = selection.get(key) ?? every;
    if (inner === undefined) continue;
    out[key] = inner === true ? obj[key] : selectFields(obj[key], inner);
  }
  return out;
}

function resolve(schemas: Record<string, SchemaNode>, schema: SchemaNode | undefined): SchemaNode | undefined {
  return schema?.$ref ? schemas[schema.$ref] : schema;
}
