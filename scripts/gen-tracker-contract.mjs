// Generates packages/shared/src/tracker/{contract,types,flags,resources}.ts from the vendored OpenAPI (Swagger 2.0) document
// (packages/shared/src/tracker/openapi.json, a verbatim copy of shared/ref/shortcut-openapi.json) and the
// seed's deliberate differences (packages/shared/src/tracker/overrides.json), and the resource table from the
// contract and the CLI's choices (packages/shared/src/tracker/resources.yaml, scripts/tracker-table.mjs). One
// source for the tracker contract: the CLI's verbs and validation, the mock's routes and body checks and their
// types all read the generated files.
//
//   node scripts/gen-tracker-contract.mjs          write the files (npm run gen:contract)
//   node scripts/gen-tracker-contract.mjs --check  exit 1 naming the stale file (the test runs this)
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import { tableModules, trackerTable } from './tracker-table.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const SPEC = `${root}packages/shared/src/tracker/openapi.json`;
const OVERRIDES = `${root}packages/shared/src/tracker/overrides.json`;
const TABLE = `${root}packages/shared/src/tracker/resources.yaml`;
const OUT = `${root}packages/shared/src/tracker/`;
const BASE = '/api/v3';

const doc = JSON.parse(readFileSync(SPEC, 'utf8'));
const ov = JSON.parse(readFileSync(OVERRIDES, 'utf8'));

const fieldName = (name) => {
  for (const r of ov.fields) if (r.from === name) return r.to;
  for (const r of ov.fieldPrefixes) if (name.startsWith(r.from)) return r.to + name.slice(r.from.length);
  return name;
};
const enumValue = (v) => ov.enumValues.find((r) => r.from === v)?.to ?? v;
const pathOf = (p) => ov.pathSegments.reduce((acc, r) => acc.split(r.from).join(r.to), p.startsWith(BASE) ? p.slice(BASE.length) : p);
const dateOnly = new Set(ov.dateOnly.map((d) => d.field));
const refName = (ref) => ref.replace('#/definitions/', '');

/** One Swagger schema node → the contract's field shape (plain data, JSON-Schema words). */
function field(node, where) {
  const out = {};
  if (node.$ref) out.ref = refName(node.$ref);
  else if (node['x-oneOf']) out.oneOf = node['x-oneOf'].map((n, i) => field(n, `${where}|${i}`));
  else if (node.allOf) out.ref = refName(node.allOf[0].$ref);
  else out.type = node.type ?? 'any';
  if (node.format && node.format !== 'int64' && node.format !== 'double') out.format = node.format;
  if (dateOnly.has(where)) out.format = 'date';
  for (const k of ['maxLength', 'minLength', 'minimum', 'maximum', 'pattern', 'uniqueItems', 'minItems', 'maxItems'])
    if (node[k] !== undefined) out[k] = node[k];
  if (node.enum) out.enum = node.enum.map(enumValue);
  if (node['x-nullable'] === true) out.nullable = true;
  if (node.items) out.items = field(node.items, `${where}[]`);
  if (node.type === 'object' && node.properties)
    out.properties = Object.fromEntries(Object.entries(node.properties).map(([k, v]) => [fieldName(k), field(v, `${where}.${k}`)]));
  return out;
}

function definition(name, def) {
  return {
    fields: Object.fromEntries(Object.entries(def.properties ?? {}).map(([k, v]) => [fieldName(k), field(v, `${name}.${fieldName(k)}`)])),
    required: (def.required ?? []).map(fieldName),
    closed: def.additionalProperties === false,
  };
}

const DEFS = Object.fromEntries(
  Object.keys(doc.definitions)
    .sort()
    .map((n) => [n, definition(n, doc.definitions[n])]),
);

const operations = {};
for (const [p, item] of Object.entries(doc.paths)) {
  for (const [method, op] of Object.entries(item)) {
    if (method === 'parameters') continue;
    const params = [...(item.parameters ?? []), ...(op.parameters ?? [])];
    const limits = (x) => ov.paramLimits.find((r) => r.param === x.name && x.in === 'query') ?? {};
    const pick = (where) =>
      Object.fromEntries(
        params
          .filter((x) => x.in === where)
          .map((x) => {
            const { minimum, maximum } = limits(x);
            return [x.name, { ...field(x, `${op.operationId}.${x.name}`), ...(minimum !== undefined ? { minimum, maximum } : {}) }];
          }),
      );
    const body = params.find((x) => x.in === 'body');
    const responses = {};
    for (const [code, r] of Object.entries(op.responses ?? {})) responses[code] = r.schema ? field(r.schema, `${op.operationId}.${code}`) : null;
    operations[op.operationId] = {
      method: method.toUpperCase(),
      path: pathOf(p),
      pathParams: pick('path'),
      query: pick('query'),
      requiredQuery: params.filter((x) => x.in === 'query' && x.required).map((x) => x.name),
      ...(body ? { body: refName(body.schema.$ref), bodyRequired: body.required === true } : {}),
      ...(params.some((x) => x.in === 'formData') ? { formData: pick('formData') } : {}),
      responses,
    };
  }
}

// ---- the flags table: what the resource table's flags are made of (flag kinds, enum choices), nothing more ----
// Keyed by `METHOD /path` with every placeholder written `{}` (src/tracker/resources.ts's operationKey
// normalises paths the same way).
function flagKind(f) {
  const ref = f.ref ? DEFS[f.ref] : undefined;
  if (f.oneOf || (f.type === 'object' && !ref) || ref) return { type: 'json' };
  const out = {};
  if (f.type === 'array') {
    const it = f.items ?? {};
    if (it.type === 'integer' || it.type === 'number') out.type = 'int[]';
    else if (it.type === 'string' && it.format === 'uuid') out.type = 'uuid[]';
    else if (it.type === 'string') Object.assign(out, { type: 'string[]' }, it.enum ? { values: it.enum } : {});
    else out.type = 'json';
    if (it.maxLength !== undefined) out.max = it.maxLength;
  } else if (f.type === 'integer' || f.type === 'number') out.type = 'int';
  else if (f.type === 'boolean') out.type = 'bool';
  else if (f.type === 'string') {
    if (f.enum) Object.assign(out, { type: 'enum', values: f.enum });
    else if (f.format === 'uuid') out.type = 'uuid';
    else if (f.format === 'date-time') out.type = 'datetime';
    else if (f.format === 'date') out.type = 'date';
    else if (f.format === 'css-color' || f.pattern === '^#[a-fA-F0-9]{6}$') out.type = 'color';
    else out.type = 'string';
    if (f.maxLength !== undefined && out.type === 'string') out.max = f.maxLength;
    if (f.minLength !== undefined && out.type === 'string') out.min = f.minLength;
  } else out.type = 'json';
  if (out.type === 'int' && f.minimum !== undefined) out.min = f.minimum;
  if (out.type === 'int' && f.maximum !== undefined) out.maxValue = f.maximum;
  if (f.nullable) out.nullable = true;
  return out;
}
const opKey = (method, path) => `${method} ${path.replace(/\{[^}]+\}/g, '{}')}`;
const flagOps = {};
const flagDefs = {};
const flagsOf = (fields, required) =>
  Object.fromEntries(Object.entries(fields).map(([k, f]) => [k, { ...flagKind(f), ...(required.includes(k) ? { required: true } : {}) }]));
for (const op of Object.values(operations)) {
  const entry = {};
  if (op.body) {
    entry.body = op.body;
    flagDefs[op.body] ??= flagsOf(DEFS[op.body].fields, DEFS[op.body].required);
  }
  if (Object.keys(op.query).length) entry.query = flagsOf(op.query, op.requiredQuery);
  if (entry.body || entry.query) flagOps[opKey(op.method, op.path)] = entry;
}

// ---- id kinds: what a path placeholder and a record's id hold, so the CLI checks a positional id before sending ----
const idKind = (f) => (f.type === 'integer' || f.type === 'number' ? 'int' : f.type === 'string' && f.format === 'uuid' ? 'uuid' : 'string');
/** `METHOD /path` → the kinds of its placeholders, in the order they appear in the path. */
const pathKinds = {};
for (const op of Object.values(operations)) {
  const names = [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
  if (names.length) pathKinds[opKey(op.method, op.path)] = names.map((n) => idKind(op.pathParams[n] ?? {}));
}
/** Definition → the kind of its `id` (those whose id is an integer or a uuid). */
const idKinds = Object.fromEntries(
  Object.entries(DEFS)
    .map(([name, d]) => [name, d.fields.id ? idKind(d.fields.id) : 'string'])
    .filter(([, k]) => k !== 'string'),
);

// ---- TypeScript types of every definition ----
function tsType(f) {
  let t;
  if (f.ref) t = f.ref;
  else if (f.oneOf) t = f.oneOf.map(tsType).join(' | ');
  else if (f.enum) t = f.enum.map((v) => JSON.stringify(v)).join(' | ');
  else if (f.type === 'string') t = 'string';
  else if (f.type === 'integer' || f.type === 'number') t = 'number';
  else if (f.type === 'boolean') t = 'boolean';
  else if (f.type === 'array') t = `Array<${tsType(f.items ?? { type: 'any' })}>`;
  else if (f.type === 'object' && f.properties)
    t = `{ ${Object.entries(f.properties)
      .map(([k, v]) => `${JSON.stringify(k)}?: ${tsType(v)}`)
      .join('; ')} }`;
  else if (f.type === 'object') t = 'Record<string, unknown>';
  else t = 'unknown';
  return f.nullable ? `${t} | null` : t;
}
const types = Object.entries(DEFS)
  .map(([name, d]) => {
    const desc = doc.definitions[name].description;
    const lines = Object.entries(d.fields).map(
      ([k, f]) => `  ${/^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k)}${d.required.includes(k) ? '' : '?'}: ${tsType(f)};`,
    );
    return `${desc ? `/** ${desc.replace(/\*\//g, '* /').replace(/\n/g, ' ')} */\n` : ''}export interface ${name} {\n${lines.join('\n')}\n}`;
  })
  .join('\n\n');

const HEADER = `// GENERATED by scripts/gen-tracker-contract.mjs from packages/shared/src/tracker/openapi.json and
// packages/shared/src/tracker/overrides.json. Do not edit: change the overrides or the document, then run
// npm run gen:contract (test/unit/tracker-contract.test.ts fails while this file is stale).
`;
const contractTs = `${HEADER}import type { ContractBody, ContractOperation } from './shape.js';

/** The document's version (info.version) this contract was generated from. */
export const VERSION = ${JSON.stringify(doc.info?.version ?? '')};

/** The header the token goes in, to the mock (the seed's name) and to the real service. */
export const TOKEN_HEADER = ${JSON.stringify({ seed: ov.header.to, real: ov.header.from })} as const;

/** Every operation of the document, by operationId (the official client's method names). */
export const OPERATIONS = ${JSON.stringify(operations)} satisfies Record<string, ContractOperation>;

export type OperationId = keyof typeof OPERATIONS;

/** Every definition of the document: its fields (renamed per the overrides), required ones and whether others are refused. */
export const DEFINITIONS: Record<string, ContractBody> = ${JSON.stringify(DEFS)};
`;
const typesTs = `${HEADER}\n${types}\n`;
const flagsTs = `${HEADER}// The small tables the resource table's flags are made from (resources.ts, scripts/tracker-table.mjs), and the
// kinds of record ids the CLI's names read at start-up (never contract.ts): each operation's body definition and
// query fields, each body definition's fields as flag kinds.
import type { FlagKind } from './shape.js';

/** \`METHOD /path\` (placeholders written {}) → its body definition and query parameters (operations with neither are left out). */
export const FLAG_OPERATIONS: Record<string, { body?: string; query?: Record<string, FlagKind> }> = ${JSON.stringify(flagOps)};

/** Each body definition's fields as flags. */
export const FLAG_BODIES: Record<string, Record<string, FlagKind>> = ${JSON.stringify(flagDefs)};

/** \`METHOD /path\` (placeholders written {}) → what each placeholder holds, in path order: an integer id, a uuid or other text. */
export const PATH_KINDS: Record<string, ReadonlyArray<'int' | 'uuid' | 'string'>> = ${JSON.stringify(pathKinds)};

/** A record definition → what its \`id\` is (definitions whose id is an integer or a uuid). */
export const ID_KINDS: Record<string, 'int' | 'uuid'> = ${JSON.stringify(idKinds)};
`;

const table = trackerTable(readFileSync(TABLE, 'utf8'), { operations, flagOps, flagDefs, pathKinds });
const tableTs = tableModules(
  table,
  HEADER.replace('packages/shared/src/tracker/overrides.json.', 'packages/shared/src/tracker/{overrides.json,resources.yaml}.'),
);

const cfg = (await prettier.resolveConfig(`${OUT}contract.ts`)) ?? {};
const files = {
  'contract.ts': await prettier.format(contractTs, { ...cfg, parser: 'typescript' }),
  'types.ts': await prettier.format(typesTs, { ...cfg, parser: 'typescript' }),
  'flags.ts': await prettier.format(flagsTs, { ...cfg, parser: 'typescript' }),
};
for (const [name, text] of Object.entries(tableTs)) files[name] = await prettier.format(text, { ...cfg, parser: 'typescript' });

if (process.argv.includes('--check')) {
  const stale = Object.entries(files).filter(([name, text]) => {
    try {
      return readFileSync(OUT + name, 'utf8') !== text;
    } catch {
      return true;
    }
  });
  if (stale.length) {
    console.error(`stale: ${stale.map(([n]) => `packages/shared/src/tracker/${n}`).join(', ')}; run npm run gen:contract and commit the result`);
    process.exit(1);
  }
} else {
  mkdirSync(`${OUT}resources`, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(OUT + name, text);
  console.log(
    `wrote packages/shared/src/tracker/{${Object.keys(files)
      .filter((n) => !n.startsWith('resources/'))
      .join(
        ',',
      )}} and resources/ (a row each): ${Object.keys(operations).length} operations, ${Object.keys(DEFS).length} definitions, ${table.length} resources`,
  );
}
