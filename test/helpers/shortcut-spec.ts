import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import formatsPlugin from 'ajv-formats';

// ajv-formats is CommonJS with a `default` export: take whichever form the loader hands us
type AddFormats = typeof formatsPlugin.default;
const addFormats: AddFormats = (formatsPlugin as unknown as { default?: AddFormats }).default ?? (formatsPlugin as unknown as AddFormats);

/**
 * Response validation against the real tracker contract (shared/ref/shortcut-openapi.json, Swagger 2.0).
 *
 * The Swagger definitions become JSON Schema for ajv: `x-nullable: true` (Swagger 2's spelling of
 * OpenAPI 3's `nullable`) adds `null` to the type, every other property stays non-nullable, and the
 * definitions' own `additionalProperties: false` and `required` lists are kept, so an extra field, a
 * missing one or a `null` where the contract has none all fail.
 *
 * Deliberate differences between the seed (the mock's contract) and the reference, applied to the
 * schema before validating, each for the reason given:
 *  - brand renames the seed makes (its introduction lists them): `productboard_*` fields are
 *    `planningtool_*`, the member field `gravatar_hash` is `avatar_hash`, and the linked-file types
 *    `google`, `dropbox`, `box`, `onedrive` are `storage_a` … `storage_d`; paths use `unlink-planningtool`;
 *  - iteration `start_date`/`end_date` are date strings (`2026-01-05`): the seed says "Iteration dates are
 *    date strings", the reference types them as date-times.
 */

/** A verbatim copy of shared/ref/shortcut-openapi.json, kept in the repository so CI needs nothing else (the mock serves it too). */
export const SPEC_PATH = fileURLToPath(new URL('../../packages/shared/src/tracker/openapi.json', import.meta.url));

const RENAMES: Record<string, string> = { gravatar_hash: 'avatar_hash' };
const rename = (key: string) => RENAMES[key] ?? key.replace(/^productboard_/, 'planningtool_');
const STORAGE: Record<string, string> = { google: 'storage_a', dropbox: 'storage_b', box: 'storage_c', onedrive: 'storage_d' };

/** Swagger 2 schema → JSON Schema (draft-07) with the renames above. */
function convert(node: any): any {
  if (Array.isArray(node)) return node.map(convert);
  if (!node || typeof node !== 'object') return node;
  const out: any = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'x-nullable' || k === 'example' || k === 'discriminator') continue;
    if (k === 'properties') out.properties = Object.fromEntries(Object.entries(v as object).map(([p, s]) => [rename(p), convert(s)]));
    else if (k === 'required') out.required = (v as string[]).map(rename);
    else if (k === 'enum') out.enum = (v as unknown[]).map((x) => (typeof x === 'string' && STORAGE[x] ? STORAGE[x] : x));
    else out[k] = convert(v);
  }
  if (node['x-nullable'] === true) {
    if (out.$ref) return { anyOf: [{ $ref: out.$ref }, { type: 'null' }] };
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    if (out.enum) out.enum = [...out.enum, null];
    if (out.allOf) return { anyOf: [{ allOf: out.allOf }, { type: 'null' }] };
  }
  return out;
}

interface Operation {
  method: string;
  template: string;
  re: RegExp;
  params: number;
  /** status → compiled validator (undefined: the contract gives no body). */
  responses: Map<number, ValidateFunction | undefined>;
  /** The declared JSON body (undefined: none is declared) and whether it is required. */
  body?: { validate: ValidateFunction; required: boolean };
  /** Query parameters the operation declares. */
  query: Set<string>;
  formData: boolean;
}

export interface SpecChecker {
  /** The operation a concrete request matches, or undefined. */
  operation(method: string, path: string): Operation | undefined;
  /** Problems of one response against the contract ([] when it is valid). */
  check(method: string, path: string, status: number, body: unknown): string[];
  /** Every operation of the contract, `METHOD /template`. */
  operations(): string[];
  /** Problems of one request against the contract ([] when it is valid): its body (none where none is declared) and its query. */
  checkRequest(method: string, path: string, body: string, contentType: string): string[];
  /** Problems of an error response whose status the operation documents with a schema (403, 409, 400 of search). */
  checkError(method: string, path: string, status: number, body: unknown): string[];
}

export function loadSpec(): SpecChecker {
  const raw = JSON.parse(readFileSync(SPEC_PATH, 'utf8'));
  const definitions = convert(raw.definitions);
  for (const name of ['Iteration', 'IterationSlim']) {
    for (const f of ['start_date', 'end_date']) definitions[name].properties[f] = { type: 'string', format: 'date' };
  }
  const ajv = new Ajv({ strict: false, allErrors: true, unicodeRegExp: false });
  addFormats(ajv);
  for (const f of ['int64', 'int32', 'double', 'float']) ajv.addFormat(f, true);
  // the seed: "a hexadecimal string prefixed with #; keyword, named and global CSS values are rejected"
  ajv.addFormat('css-color', /^#[0-9a-f]{3,8}$/i);
  ajv.addSchema({ $id: 'shortcut', definitions });
  const ops: Operation[] = [];
  for (const [template0, item] of Object.entries<any>(raw.paths)) {
    const template = template0.replace('unlink-productboard', 'unlink-planningtool');
    for (const [method, op] of Object.entries<any>(item)) {
      if (method === 'parameters') continue;
      const responses = new Map<number, ValidateFunction | undefined>();
      for (const [code, r] of Object.entries<any>(op.responses ?? {})) {
        const status = Number(code);
        if (!(status >= 200 && status < 300)) continue;
        const schema = r.schema ? JSON.parse(JSON.stringify(convert(r.schema)).replace(/"#\/definitions\//g, '"shortcut#/definitions/')) : undefined;
        responses.set(status, schema ? ajv.compile(schema) : undefined);
      }
      const errors = new Map<number, ValidateFunction>();
      for (const [code, r] of Object.entries<any>(op.responses ?? {})) {
        const status = Number(code);
        if (status >= 400 && r.schema)
          errors.set(status, ajv.compile(JSON.parse(JSON.stringify(convert(r.schema)).replace(/"#\/definitions\//g, '"shortcut#/definitions/'))));
      }
      const bodyParam = (op.parameters ?? []).find((x: any) => x.in === 'body');
      const body = bodyParam
        ? {
            validate: ajv.compile(JSON.parse(JSON.stringify(convert(bodyParam.schema)).replace(/"#\/definitions\//g, '"shortcut#/definitions/'))),
            required: bodyParam.required === true,
          }
        : undefined;
      const query = new Set<string>((op.parameters ?? []).filter((x: any) => x.in === 'query').map((x: any) => x.name as string));
      const formData = (op.parameters ?? []).some((x: any) => x.in === 'formData');
      const params = (template.match(/\{/g) ?? []).length;
      const re = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`);
      ops.push({ method: method.toUpperCase(), template, re, params, responses, body, query, formData, errors } as Operation & { errors: typeof errors });
    }
  }
  ops.sort((a, b) => a.params - b.params);
  const operation = (method: string, path: string) => ops.find((o) => o.method === method && o.re.test(path.split('?')[0]!));
  return {
    operation,
    operations: () => ops.map((o) => `${o.method} ${o.template}`),
    checkRequest(method, path, body, contentType) {
      const op = operation(method, path);
      if (!op) return [`${method} ${path}: not an operation of the contract`];
      const out: string[] = [];
      const url = new URL(path, 'http://x');
      for (const name of url.searchParams.keys())
        if (!op.query.has(name) && name !== 'token') out.push(`${method} ${path}: query parameter ${name} is not declared`);
      if (op.formData) return out;
      if (!op.body) {
        if (body.length > 0) out.push(`${method} ${op.template}: a body (${body.slice(0, 40)}) where the contract declares none`);
        return out;
      }
      if (body.length === 0) {
        if (op.body.required) out.push(`${method} ${op.template}: the contract requires a body, none was sent`);
        return out;
      }
      if (!/^application\/json/i.test(contentType))
        out.push(`${method} ${op.template}: body sent as ${contentType || 'no content type'}, not application/json`);
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        return [...out, `${method} ${op.template}: the body is not JSON`];
      }
      if (!op.body.validate(json))
        for (const e of op.body.validate.errors ?? [])
          out.push(
            `${method} ${op.template} request: ${e.instancePath || '/'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` (${e.params.additionalProperty})` : ''}`,
          );
      return out;
    },
    checkError(method, path, status, body) {
      const op = operation(method, path) as (Operation & { errors: Map<number, ValidateFunction> }) | undefined;
      const validate = op?.errors.get(status);
      if (!validate || validate(body)) return [];
      return (validate.errors ?? []).map((e) => `${method} ${path} ${status}: ${e.instancePath || '/'} ${e.message}`);
    },
    check(method, path, status, body) {
      const op = operation(method, path);
      if (!op) return [`${method} ${path}: not an operation of the contract`];
      if (!op.responses.has(status))
        return [`${method} ${path}: status ${status} is not a success status of ${op.template} (${[...op.responses.keys()].join(', ')})`];
      const validate = op.responses.get(status);
      // no schema: a 204 has no body; a 200 whose body the contract leaves open (GET webhook) is not checked
      if (!validate) return status !== 204 || body === undefined || body === '' ? [] : [`${method} ${path}: ${status} must have no body`];
      if (validate(body)) return [];
      return (validate.errors ?? []).map(
        (e) =>
          `${method} ${path} ${status}: ${e.instancePath || '/'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` (${e.params.additionalProperty})` : ''}`,
      );
    },
  };
}
