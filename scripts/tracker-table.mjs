// The tracker's resource table (packages/shared/src/tracker/resources.ts), derived from the generated contract
// and the CLI's choices in packages/shared/src/tracker/resources.yaml; scripts/gen-tracker-contract.mjs writes it.
//
// From the contract: a resource's CRUD verbs (the operations at `{path}` and `{path}/{id}`), its id type, its
// singular (the record's definition, in words), the body a delete must send; an extra verb's method, path,
// arguments and their kinds, and what it answers; every flag's kind, choices, nullability, requiredness, limits
// and the operation that validates it. From resources.yaml: the names, help texts, examples, columns, paging,
// the verbs with their own module, and the flags each verb offers.
import { parse } from 'yaml';

const RESOURCE_KEYS = new Set([
  'ref',
  'singular',
  'path',
  'description',
  'fields',
  'listQuery',
  'help',
  'idHelp',
  'columns',
  'examples',
  'applyKey',
  'applyFields',
  'serverFields',
  'extras',
]);
const EXTRA_KEYS = new Set([
  'op',
  'description',
  'args',
  'query',
  'body',
  'help',
  'result',
  'columns',
  'paging',
  'confirm',
  'example',
  'handler',
  'fixedBody',
  'pick',
]);
const TOP_KEYS = new Set(['help', 'columns', 'resources']);

/** `METHOD /path` with every placeholder written `{}`: the key of the generated flags table. */
export const opKey = (method, path) => `${method} ${path.replace(/\{[^}]+\}/g, '{}')}`;
const camel = (name) => name.replace(/-(\w)/g, (_, c) => c.toUpperCase());
const words = (definition) => definition.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
/** A path placeholder as the CLI's argument: the first is `id`, `{comment-public-id}` is `comment_id`. */
const argName = (param, i) => (i === 0 ? 'id' : `${param.replace(/-public-id$/, '').replace(/-/g, '_')}_id`);

function refuse(where, what) {
  throw new Error(`resources.yaml: ${where}: ${what}`);
}

function checkKeys(obj, allowed, where) {
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) refuse(where, 'expected a mapping');
  for (const k of Object.keys(obj)) if (!allowed.has(k)) refuse(where, `unknown key "${k}" (known: ${[...allowed].join(', ')})`);
}

/**
 * The table as data. `contract`: { operations (by operationId), flagOps, flagDefs, pathKinds } as the
 * generator computes them; `yamlText`: resources.yaml.
 */
export function trackerTable(yamlText, contract) {
  const { operations, flagOps, flagDefs, pathKinds } = contract;
  const doc = parse(yamlText, { merge: true });
  checkKeys(doc, TOP_KEYS, 'the top level');
  const defaults = doc.help ?? {};
  const byKey = new Map(Object.values(operations).map((op) => [opKey(op.method, op.path), op]));
  const answer = (op) => {
    const code = Object.keys(op.responses).find((c) => c.startsWith('2'));
    const schema = code ? op.responses[code] : null;
    return !schema ? 'none' : schema.type === 'array' ? 'list' : 'one';
  };

  /** A field of the contract as a flag with the help `helpFor()` gives; `kinds` are the bodies (create, update) or the query that may hold it. */
  function flagField(name, helpFor, kinds, where) {
    const found = kinds.filter((k) => k.kind !== undefined);
    const first = found[0];
    if (!first) refuse(where, `names ${name}, which no body or query of ${kinds.map((k) => k.key).join(' / ')} has in the contract`);
    const kind = first.kind;
    const help = helpFor();
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

  /** The help of a flag: the verb's own, the resource's, then the shared default (`{singular}` filled in). */
  function helpOf(name, scopes, singular, where) {
    for (const s of scopes) if (s && typeof s[name] === 'string') return s[name].replaceAll('{singular}', singular);
    if (typeof defaults[name] === 'string') return defaults[name].replaceAll('{singular}', singular);
    return refuse(where, `${name} has no help: give it under help:`);
  }

  function names(list, where) {
    if (list === undefined) return [];
    if (!Array.isArray(list) || list.some((n) => typeof n !== 'string')) refuse(where, 'expected a list of field names');
    return list;
  }

  function bodyFields(list, keys, scopes, singular, where) {
    const defs = keys.map((k) => ({ ...k, def: flagDefs[flagOps[k.key]?.body ?? ''] }));
    return Object.fromEntries(
      names(list, where).map((name) => [
        name,
        flagField(
          name,
          () => helpOf(name, scopes, singular, where),
          defs.map((d) => ({ mode: d.mode, key: d.key, kind: d.def?.[name] })),
          where,
        ),
      ]),
    );
  }

  function queryFields(list, key, scopes, singular, where) {
    const query = flagOps[key]?.query ?? {};
    return Object.fromEntries(
      names(list, where).map((name) => [
        name,
        flagField(name, () => helpOf(name, scopes, singular, where), [{ mode: 'create', key, kind: query[name] }], where),
      ]),
    );
  }

  function extra(name, e, r, singular) {
    const where = `${r.name} ${name}`;
    checkKeys(e, EXTRA_KEYS, where);
    const op = operations[e.op];
    if (!op) refuse(where, `op: no operation ${e.op} in the contract (an operationId of openapi.json)`);
    if (typeof e.description !== 'string') refuse(where, 'description: say what the verb does');
    const params = [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
    let i = 0;
    const path = op.path.replace(/\{[^}]+\}/g, () => `{${argName(params[i], i++)}}`);
    const key = opKey(op.method, op.path);
    const kinds = pathKinds[key] ?? [];
    if (e.args !== undefined && !(Array.isArray(e.args) && e.args.length === 0)) refuse(where, 'args: only [] (no arguments: its handler reads its own flags)');
    const args =
      e.args === undefined && params.length
        ? params.map((p, n) => {
            if (kinds[n] !== 'int' && kinds[n] !== 'uuid') refuse(where, `${key} takes a text placeholder, not an id`);
            const arg = argName(p, n);
            return { name: arg, ...(arg === 'id' && r.idHelp ? { help: r.idHelp } : {}), type: kinds[n] };
          })
        : undefined;
    const scopes = [e.help, r.help];
    return {
      name,
      description: e.description,
      method: op.method,
      path,
      ...(args ? { args } : {}),
      ...(e.query ? { query: queryFields(e.query, key, scopes, singular, `${where} query`) } : {}),
      ...(e.body ? { body: bodyFields(e.body, [{ mode: 'create', key }], scopes, singular, `${where} body`) } : {}),
      result: e.result ?? (e.paging || e.pick ? 'list' : answer(op)),
      ...pick(e, ['columns', 'paging', 'confirm', 'example', 'handler', 'fixedBody', 'pick']),
    };
  }

  function resource(name, r) {
    checkKeys(r, RESOURCE_KEYS, name);
    r = { ...r, name };
    const path = r.path ?? `/${name}`;
    const item = `${path}/{id}`;
    const at = (method, p) => byKey.get(opKey(method, p));
    const idType = ['GET', 'PUT', 'DELETE'].map((m) => pathKinds[opKey(m, item)]?.[0]).find(Boolean);
    if (idType === 'string') refuse(name, `${item} takes a text placeholder, not an id`);
    const list = at('GET', path);
    const verbs = [
      ...(list && answer(list) === 'list' ? ['list'] : []),
      ...(at('GET', item) ? ['get'] : []),
      ...(at('POST', path)?.body ? ['create'] : []),
      ...(at('PUT', item) ? ['update'] : []),
      ...(at('DELETE', item) ? ['delete'] : []),
    ];
    const record = (at('GET', item) ?? list)?.responses['200']?.ref;
    const singular = r.singular ?? (record ? words(record) : refuse(name, 'singular: the contract names no record here, so say it'));
    const bodies = [
      ...(verbs.includes('create') ? [{ mode: 'create', key: opKey('POST', path) }] : []),
      ...(verbs.includes('update') ? [{ mode: 'update', key: opKey('PUT', item) }] : []),
    ];
    return {
      name,
      ...pick(r, ['ref']),
      singular,
      path,
      ...(idType ? { idType } : {}),
      ...pick(r, ['description']),
      fields: bodyFields(r.fields, bodies, [r.help], singular, `${name} fields`),
      ...(r.listQuery ? { listQuery: queryFields(r.listQuery, opKey('GET', path), [r.help], singular, `${name} listQuery`) } : {}),
      columns: r.columns ?? [],
      verbs,
      ...(r.extras ? { extras: Object.entries(r.extras).map(([n, e]) => extra(n, e, r, singular)) } : {}),
      ...pick(r, ['examples', 'applyKey', 'applyFields', 'serverFields']),
      ...(at('DELETE', item)?.bodyRequired ? { deleteBody: {} } : {}),
    };
  }

  checkKeys(doc.resources, new Set(Object.keys(doc.resources ?? {})), 'resources');
  return Object.entries(doc.resources).map(([name, r]) => resource(name, r));
}

function pick(obj, keys) {
  return Object.fromEntries(keys.filter((k) => obj[k] !== undefined).map((k) => [k, obj[k]]));
}

/**
 * The generated modules' texts (before formatting), by path under packages/shared/src/tracker/: one module per
 * row (`resources/<name>.ts`), so a command or a mock route group loads the one row it reads; `resources.ts`,
 * every row and RESOURCES; `resource-index.ts`, what the CLI's tracker noun lists of each row (its name, help
 * line and verbs) and a loader of its row.
 */
export function tableModules(table, header) {
  const files = {};
  for (const r of table) {
    const type = r.idType ? `ItemResource<'${r.idType}'>` : 'ResourceSpec';
    files[`resources/${r.name}.ts`] = `${header}// The tracker's ${r.name} row (scripts/tracker-table.mjs); resources.ts lists every row.
import type { ${r.idType ? 'ItemResource' : 'ResourceSpec'} } from '../resource-spec.js';

export const ${camel(r.name)}: ${type} = ${JSON.stringify(r)};
`;
  }
  files['resources.ts'] = `${header}// The tracker's resource table: the contract's operations, ids and field kinds with resources.yaml's names, help
// texts, examples and what the contract cannot say (scripts/tracker-table.mjs), one module per row under resources/.
// The CLI's verbs, its checks before sending, the completions and the mock's routes all read it.
import type { ResourceSpec } from './resource-spec.js';
${table.map((r) => `import { ${camel(r.name)} } from './resources/${r.name}.js';`).join('\n')}

export { ${table.map((r) => camel(r.name)).join(', ')} };

/** Every resource, in the CLI's order. */
export const RESOURCES: readonly ResourceSpec[] = [${table.map((r) => camel(r.name)).join(', ')}];
`;
  const index = table.map((r) => ({ name: r.name, summary: r.description ?? `${r.name}: ${[...r.verbs, ...(r.extras ?? []).map((e) => e.name)].join(', ')}` }));
  files['resource-index.ts'] = `${header}// What the CLI's tracker noun shows of each row before it builds one (scripts/tracker-table.mjs): its name and
// help line, in the CLI's order, and a loader of the row's own module (resources/<name>.ts).
import type { ResourceSpec } from './resource-spec.js';

/** Each resource's name and its line in \`tracker --help\`, in the CLI's order. */
export const RESOURCE_INDEX: ReadonlyArray<{ readonly name: string; readonly summary: string }> = ${JSON.stringify(index)};

/** Each resource's row, imported on demand. */
export const ROW_LOADERS: ReadonlyMap<string, () => Promise<ResourceSpec>> = new Map<string, () => Promise<ResourceSpec>>([
${table.map((r) => `  ['${r.name}', () => import('./resources/${r.name}.js').then((m) => m.${camel(r.name)})],`).join('\n')}
]);
`;
  return files;
}
