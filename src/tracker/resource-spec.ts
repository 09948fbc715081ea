/** The shape of a row of the tracker's resource table (resources.ts), apart from the table so the contract's readers can name it. */
import type { FieldSpec } from './fields.js';
import type { RefKind } from './names.js';

export type Verb = 'list' | 'get' | 'create' | 'update' | 'delete';

/** A positional argument of an extra verb (`{name}` in its path). */
export interface ArgSpec {
  name: string;
  /** What its path placeholder holds, from the contract (contract-fields.ts). */
  type: 'int' | 'uuid';
  help?: string;
}

/**
 * How a list endpoint pages: `page` (page/page_size, answer {data,next,total} with next a page number),
 * `offset` (limit/offset over a plain array), `next` (answer {data,next,total} with next a path+query).
 */
export interface Paging {
  kind: 'page' | 'offset' | 'next';
  /** Largest page the server accepts. */
  max: number;
}

/** A verb beyond CRUD: `opsctl tracker epics comments 12`, `opsctl tracker iterations enable`. */
export interface ExtraVerb {
  name: string;
  description: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Full path under /api/v3; `{name}` placeholders are filled from `args` in order. */
  path: string;
  args?: readonly ArgSpec[];
  query?: Record<string, FieldSpec>;
  body?: Record<string, FieldSpec>;
  /** What the answer is: a list (table), one record, named groups of `{data, next, total}` (search), or nothing (204). */
  result: 'list' | 'one' | 'groups' | 'none';
  columns?: string[];
  paging?: Paging;
  /** Ask before doing it (unless --yes). */
  confirm?: boolean;
  example?: string;
  /** A verb with its own module instead of the generic one (`upload`, `apply`, `export`, `move`, `import`). */
  handler?: 'upload' | 'apply' | 'export' | 'move' | 'import' | 'key-results';
  /** A body sent as is, without flags (`task-check` sends {complete: true}). */
  fixedBody?: Readonly<Record<string, unknown>>;
  /** Show this field of a one-record answer as the list (`workflows states` shows `states`). */
  pick?: string;
}

/** One row of the resource table: everything the CLI, the validators and the mock need to know. */
export interface ResourceSpec {
  /** CLI noun and path segment, e.g. `labels`. */
  name: string;
  singular: string;
  /** Path under /api/v3. */
  path: string;
  /** What `{path}/{id}` takes, from the contract (contract-fields.ts); undefined where the resource has no item path. */
  idType?: 'int' | 'uuid';
  /** Body fields (create and update). */
  fields: Record<string, FieldSpec>;
  /** Query parameters of the list verb. */
  listQuery?: Record<string, FieldSpec>;
  /** Table columns of list output. */
  columns: string[];
  verbs: readonly Verb[];
  extras?: readonly ExtraVerb[];
  /** One example per verb for --help. */
  examples?: Partial<Record<Verb, string>>;
  /** The key that `apply` matches records on. */
  applyKey?: string;
  /** The fields `apply` manages (compared and written). */
  applyFields?: readonly string[];
  /** Fields of its records that only the server sets: `apply -f` ignores them (so `list --json` output applies as it is). */
  serverFields?: readonly string[];
  description?: string;
  /** The body a `delete` sends, where the contract requires one (DELETE /documents/{id} takes a GetDoc); none otherwise. */
  deleteBody?: Readonly<Record<string, unknown>>;
  /** Its records answer to names (see names.ts): `get`, `update`, `delete` and extra verbs take a name as well as an id. */
  ref?: RefKind;
}
