import { MockError, type MockRequest } from '../../http.js';
import type { LabelApiVersion, MethodId } from '@opsctl/shared/labels/schema.js';
import { checkFields, parseFields, selectFields } from './fields.js';

/**
 * The label API's contract as Google publishes it: the discovery document of each version (verbatim
 * copies of shared/ref/drivelabels-{v2,v2beta}-discovery.json), loaded on the first request of that
 * version. Every request is checked against its method: a query parameter the method does not declare
 * (nor the document's system parameters such as `alt`, `fields`, `access_token`), and a JSON body field
 * that its request schema does not have, at any depth, are refused with Google's 400 INVALID_ARGUMENT
 * ("Invalid JSON payload received. Unknown name …"), as Google's front end does. A field given by its
 * proto name (`label_type`) is accepted as its JSON name (`labelType`), as Google's JSON parser accepts both.
 */
type Json = Record<string, unknown>;
interface SchemaNode {
  $ref?: string;
  type?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  additionalProperties?: SchemaNode;
}
interface MethodNode {
  id: string;
  parameters?: Record<string, { location?: string }>;
  request?: { $ref?: string };
  response?: { $ref?: string };
}
export interface Contract {
  version: LabelApiVersion;
  doc: Json;
  schemas: Record<string, SchemaNode>;
  /** Methods by the table's id (`labels.permissions.list`). */
  methods: Map<string, MethodNode>;
  /** Parameters every method takes (`alt`, `fields`, `key`, `access_token`, …). */
  system: Set<string>;
}

const loaders: Record<LabelApiVersion, () => Promise<{ default: unknown }>> = {
  v2: () => import('./drivelabels-v2-discovery.json', { with: { type: 'json' } }),
  v2beta: () => import('./drivelabels-v2beta-discovery.json', { with: { type: 'json' } }),
};
const loaded = new Map<LabelApiVersion, Promise<Contract>>();

/** The discovery document of a version, read once per process. */
export function contractOf(version: LabelApiVersion): Promise<Contract> {
  let got = loaded.get(version);
  if (!got) {
    got = loaders[version]().then((m) => build(version, m.default as Json));
    loaded.set(version, got);
  }
  return got;
}

function build(version: LabelApiVersion, doc: Json): Contract {
  const methods = new Map<string, MethodNode>();
  const walk = (resources: unknown): void => {
    for (const r of Object.values((resources ?? {}) as Record<string, { methods?: Record<string, MethodNode>; resources?: unknown }>)) {
      for (const m of Object.values(r.methods ?? {})) methods.set(m.id.replace(/^drivelabels\./, ''), m);
      walk(r.resources);
    }
  };
  walk(doc.resources);
  return {
    version,
    doc,
    schemas: (doc.schemas ?? {}) as Record<string, SchemaNode>,
    methods,
    system: new Set(Object.keys(doc.parameters ?? {})),
  };
}

/** Google's BadRequest error for one refused name. */
function badRequest(field: string, description: string): MockError {
  return new MockError(400, 'INVALID_ARGUMENT', description, {
    details: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field, description }] }],
  });
}

/** Refuses what the method's contract does not declare (query parameters, body fields). */
export function checkRequest(contract: Contract, id: MethodId, req: MockRequest): void {
  const method = contract.methods.get(id);
  if (!method) return;
  const declared = method.parameters ?? {};
  for (const name of new Set(req.query.keys())) {
    if (contract.system.has(name)) continue;
    const p = declared[name];
    if (p && p.location === 'query') continue;
    throw badRequest(
      name,
      `Invalid JSON payload received. Unknown name "${name}": Cannot bind query parameter. Field '${name}' could not be found in request message.`,
    );
  }
  const ref = method.request?.$ref;
  if (ref && req.body !== undefined && req.body !== null && typeof req.body === 'object' && !Array.isArray(req.body)) {
    checkObject(contract, req.body as Json, contract.schemas[ref], '');
  }
}

const camel = (k: string) => k.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

/** Walks a JSON value against its schema; unknown names are refused, proto (snake_case) names renamed to their JSON names in place. */
function checkObject(contract: Contract, value: Json, schema: SchemaNode | undefined, at: string): void {
  const s = resolve(contract, schema);
  if (!s) return;
  if (s.additionalProperties) {
    for (const v of Object.values(value)) checkValue(contract, v, s.additionalProperties, at);
    return;
  }
  const props = s.properties ?? {};
  for (const key of Object.keys(value)) {
    let name = key;
    if (!Object.hasOwn(props, key)) {
      const alias = camel(key);
      if (alias !== key && Object.hasOwn(props, alias) && !Object.hasOwn(value, alias)) {
        value[alias] = value[key];
        delete value[key];
        name = alias;
      } else {
        const where = at ? ` at '${at}'` : '';
        throw badRequest(at || key, `Invalid JSON payload received. Unknown name "${key}"${where}: Cannot find field.`);
      }
    }
    checkValue(contract, value[name], props[name], at ? `${at}.${name}` : name);
  }
}

function checkValue(contract: Contract, v: unknown, schema: SchemaNode | undefined, at: string): void {
  const s = resolve(contract, schema);
  if (!s || v === null || typeof v !== 'object') return;
  if (Array.isArray(v)) {
    if (s.items) v.forEach((item, i) => checkValue(contract, item, s.items, `${at}[${i}]`));
    return;
  }
  if (s.properties || s.additionalProperties) checkObject(contract, v as Json, s, at);
}

function resolve(contract: Contract, schema: SchemaNode | undefined): SchemaNode | undefined {
  return schema?.$ref ? contract.schemas[schema.$ref] : schema;
}

/**
 * The `fields` selection of a request (Google's partial response: fields.ts), checked against the method's
 * response schema before the method runs; what trims the answer, or undefined without one.
 */
export function partialResponse(contract: Contract, id: MethodId, req: MockRequest): ((json: unknown) => unknown) | undefined {
  const text = req.query
    .getAll('fields')
    .filter((f) => f.trim() !== '')
    .join(',');
  if (!text) return undefined;
  const selection = parseFields(text);
  checkFields(contract.schemas, contract.methods.get(id)?.response?.$ref, selection);
  return (json) => selectFields(json, selection);
}
