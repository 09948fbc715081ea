import type { FieldSpec } from './fields.js';

export type Verb = 'list' | 'get' | 'create' | 'update' | 'delete';

/** One row of the resource table: everything the CLI, the validators and the mock need to know. */
export interface ResourceSpec {
  /** CLI noun and path segment, e.g. `labels`. */
  name: string;
  singular: string;
  /** Path under /api/v3. */
  path: string;
  idType: 'int' | 'uuid';
  /** Body fields (create and update). */
  fields: Record<string, FieldSpec>;
  /** Query parameters of the list verb. */
  listQuery?: Record<string, FieldSpec>;
  /** Table columns of list output. */
  columns: string[];
  verbs: readonly Verb[];
  /** One example per verb for --help. */
  examples?: Partial<Record<Verb, string>>;
  /** The key that `apply` matches records on. */
  applyKey?: string;
}

const name128 = { type: 'string', max: 128, min: 1 } as const;

export const labels: ResourceSpec = {
  name: 'labels',
  singular: 'label',
  path: '/labels',
  idType: 'int',
  fields: {
    name: { ...name128, required: true, help: 'label name (at most 128 characters, unique)' },
    description: { type: 'string', max: 1024, help: 'description (at most 1024 characters)' },
    color: { type: 'color', nullable: true, help: 'hex colour such as #ff0000 (null clears it on update)' },
    external_id: { type: 'string', max: 128, min: 1, in: ['create'], help: 'an id in another system (at most 128 characters)' },
    archived: { type: 'bool', in: ['update'], help: 'archive (true) or restore (false)' },
  },
  listQuery: { slim: { type: 'bool', help: 'return slim labels (no stats)' } },
  columns: ['id', 'name', 'color', 'archived', 'description'],
  verbs: ['list', 'get', 'create', 'update', 'delete'],
  examples: {
    list: 'opsctl tracker labels list --json id,name',
    get: 'opsctl tracker labels get 12',
    create: 'opsctl tracker labels create --name bug --color "#ff0000"',
    update: 'opsctl tracker labels update 12 --archived',
    delete: 'opsctl tracker labels delete 12 --yes',
  },
  applyKey: 'name',
};

/** The resource table. The CLI tree, validation and the mock's routes come from here. */
export const RESOURCES: readonly ResourceSpec[] = [labels];

export function resourceByName(name: string): ResourceSpec | undefined {
  return RESOURCES.find((r) => r.name === name);
}
