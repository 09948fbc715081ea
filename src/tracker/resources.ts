import type { FieldSpec } from './fields.js';
import type { RefKind } from './names.js';
import { withArticle } from '../core/problems.js';

export type Verb = 'list' | 'get' | 'create' | 'update' | 'delete';

/** A positional argument of an extra verb (`{name}` in its path). */
export interface ArgSpec {
  name: string;
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
  idType: 'int' | 'uuid';
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

// ---- field helpers (plain data: no zod here, this module is loaded at start-up) ----
const str = (max: number, help: string, more: Partial<FieldSpec> = {}): FieldSpec => ({ type: 'string', max, help, ...more });
const text = (help: string, more: Partial<FieldSpec> = {}): FieldSpec => str(100_000, help, more);
const int = (help: string, more: Partial<FieldSpec> = {}): FieldSpec => ({ type: 'int', help, ...more });
const bool = (help: string, more: Partial<FieldSpec> = {}): FieldSpec => ({ type: 'bool', help, ...more });
const uuid = (help: string, more: Partial<FieldSpec> = {}): FieldSpec => ({ type: 'uuid', help, ...more });
const uuids = (help: string): FieldSpec => ({ type: 'uuid[]', help });
const ints = (help: string): FieldSpec => ({ type: 'int[]', help });
const when = (help: string, more: Partial<FieldSpec> = {}): FieldSpec => ({ type: 'datetime', help, ...more });
const color = (more: Partial<FieldSpec> = {}): FieldSpec => ({
  type: 'color',
  nullable: true,
  help: 'hex colour such as #ff0000 (null clears it on update)',
  ...more,
});
const json = (schema: string, help: string, more: Partial<FieldSpec> = {}): FieldSpec => ({ type: 'json', schema, help, ...more });
const C = ['create'] as const;
const U = ['update'] as const;

export const STATE_VALUES = ['done', 'in progress', 'to do'] as const;
export const HEALTH_STATUSES = ['At Risk', 'No Health', 'Off Track', 'On Track'] as const;
export const LINKED_FILE_TYPES = ['storage_a', 'storage_b', 'storage_c', 'storage_d', 'url'] as const;
export const COLOR_KEYS = [
  'black',
  'blue',
  'brass',
  'fuchsia',
  'gray',
  'green',
  'midnight-blue',
  'orange',
  'pink',
  'purple',
  'red',
  'sky-blue',
  'slate',
  'turquoise',
  'yellow',
  'yellow-green',
] as const;
export const STORY_TYPES = ['feature', 'chore', 'bug'] as const;

const includesDescription = { includes_description: bool('include each story/epic description') };
const storyColumns = ['id', 'name', 'story_type', 'workflow_state_id', 'estimate', 'project_id', 'epic_id'];
const epicColumns = ['id', 'name', 'state', 'epic_state_id', 'archived', 'position'];
const intId = (name = 'id', help?: string): ArgSpec => ({ name, type: 'int', help });
const uuidId = (name = 'id', help?: string): ArgSpec => ({ name, type: 'uuid', help });

const commentBody = {
  text: text('comment text (at most 100000 characters)', { required: true }),
  author_id: uuid('author member id (default: the token owner)'),
  external_id: str(128, 'an id in another system'),
  created_at: when('creation time (ISO 8601)'),
  updated_at: when('update time (ISO 8601)'),
} satisfies Record<string, FieldSpec>;

export const categories: ResourceSpec = {
  name: 'categories',
  ref: 'category',
  singular: 'category',
  path: '/categories',
  idType: 'int',
  fields: {
    name: str(128, 'category name (at most 128 characters, unique)', { min: 1, required: true }),
    color: color(),
    external_id: str(128, 'an id in another system', { in: C }),
    archived: bool('archive (true) or restore (false)', { in: U }),
  },
  columns: ['id', 'name', 'color', 'archived'],
  verbs: ['list', 'get', 'create', 'update', 'delete'],
  extras: [
    {
      name: 'milestones',
      description: 'the milestones of a category (deprecated: use objectives)',
      method: 'GET',
      path: '/categories/{id}/milestones',
      args: [intId()],
      result: 'list',
      columns: ['id', 'name', 'state', 'archived'],
    },
    {
      name: 'objectives',
      description: 'the objectives of a category',
      method: 'GET',
      path: '/categories/{id}/objectives',
      args: [intId()],
      result: 'list',
      columns: ['id', 'name', 'state', 'archived'],
    },
    {
      name: 'apply',
      description: "make the categories match a YAML or JSON file (export's format; list --json and get --json output too)",
      method: 'GET',
      path: '/categories',
      result: 'none',
      handler: 'apply',
      example: 'opsctl tracker categories apply -f categories.yaml --dry-run',
    },
    {
      name: 'export',
      description: 'print the categories as an apply file (YAML; --json for JSON)',
      method: 'GET',
      path: '/categories',
      result: 'one',
      handler: 'export',
      example: 'opsctl tracker categories export > categories.yaml',
    },
  ],
  examples: { create: 'opsctl tracker categories create --name Infra --color "#336699"' },
  applyKey: 'name',
  applyFields: ['name', 'color', 'archived'],
  serverFields: ['id', 'entity_type', 'global_id', 'created_at', 'updated_at', 'type'],
};

export const customFields: ResourceSpec = {
  name: 'custom-fields',
  singular: 'custom field',
  path: '/custom-fields',
  idType: 'uuid',
  fields: {
    name: str(63, 'field name (at most 63 characters)', { min: 1 }),
    description: str(100_000, 'description'),
    enabled: bool('enable (only enabled fields can be applied to stories) or disable'),
    icon_set_identifier: str(63, 'icon set identifier (at most 63 characters)'),
    before_id: uuid('move before this custom field'),
    after_id: uuid('move after this custom field'),
    values: json('customFieldValues', 'the values in sort order; omitted values are deleted, values without id are created (--data)'),
  },
  columns: ['id', 'name', 'field_type', 'enabled', 'position'],
  verbs: ['list', 'get', 'update', 'delete'],
  examples: { update: 'opsctl tracker custom-fields update UUID --data @values.json' },
};

export const documents: ResourceSpec = {
  name: 'documents',
  singular: 'document',
  path: '/documents',
  idType: 'uuid',
  fields: {
    title: str(256, 'document title (at most 256 characters)', { min: 1, required: true }),
    content: text('document content (markdown)', { required: true }),
  },
  columns: ['id', 'title', 'app_url'],
  verbs: ['list', 'get', 'create', 'update', 'delete'],
  deleteBody: {},
  extras: [
    {
      name: 'epics',
      description: 'the epics a document is linked to',
      method: 'GET',
      path: '/documents/{id}/epics',
      args: [uuidId()],
      result: 'list',
      columns: epicColumns,
    },
    {
      name: 'link-epic',
      description: 'link a document to an epic',
      method: 'PUT',
      path: '/documents/{id}/epics/{epic_id}',
      args: [uuidId(), intId('epic_id')],
      result: 'none',
      example: 'opsctl tracker documents link-epic UUID 12',
    },
    {
      name: 'unlink-epic',
      description: 'unlink a document from an epic',
      method: 'DELETE',
      path: '/documents/{id}/epics/{epic_id}',
      args: [uuidId(), intId('epic_id')],
      result: 'none',
    },
  ],
  examples: {
    create: 'opsctl tracker documents create --title Runbook --content "# Steps"',
    update: 'opsctl tracker documents update UUID --title "Runbook v2"',
  },
};

export const entityTemplates: ResourceSpec = {
  name: 'entity-templates',
  singular: 'entity template',
  path: '/entity-templates',
  idType: 'uuid',
  fields: {
    name: str(128, 'template name (at most 128 characters)', { min: 1, required: true }),
    author_id: uuid('author member id', { in: C }),
    story_contents: json('storyContents', 'the story the template makes (--data)', { required: true }),
  },
  columns: ['id', 'name', 'author_id', 'last_used_at'],
  verbs: ['list', 'get', 'create', 'update', 'delete'],
  extras: [
    { name: 'enable', description: 'turn story templates on for the workspace', method: 'PUT', path: '/entity-templates/enable', result: 'none' },
    { name: 'disable', description: 'turn story templates off for the workspace', method: 'PUT', path: '/entity-templates/disable', result: 'none' },
  ],
  examples: { create: `opsctl tracker entity-templates create --data '{"name":"Bug","story_contents":{"story_type":"bug"}}'` },
};

export const epicWorkflow: ResourceSpec = {
  name: 'epic-workflow',
  singular: 'epic workflow',
  path: '/epic-workflow',
  idType: 'int',
  fields: {},
  columns: [],
  verbs: [],
  extras: [{ name: 'get', description: 'show the epic workflow and its states', method: 'GET', path: '/epic-workflow', result: 'one' }],
};

const epicFields: Record<string, FieldSpec> = {
  name: str(256, 'epic name (at most 256 characters)', { min: 1, required: true }),
  description: text('description (at most 100000 characters)'),
  epic_state_id: int('epic workflow state id (wins over --state)'),
  state: { type: 'enum', values: STATE_VALUES, help: 'deprecated: done, in progress, to do (use --epic-state-id)' },
  external_id: str(128, 'an id in another system'),
  owner_ids: uuids('owner member ids'),
  follower_ids: uuids('follower member ids'),
  group_ids: uuids('group ids'),
  group_id: uuid('deprecated: use --group-ids', { nullable: true }),
  objective_ids: ints('objective ids'),
  milestone_id: int('deprecated: use --objective-ids', { nullable: true }),
  labels: json('labelParams', 'labels [{name, color, description, external_id}] (--data)'),
  requested_by_id: uuid('requesting member id'),
  deadline: when('deadline (null clears it)', { nullable: true }),
  planned_start_date: when('planned start (null clears it)', { nullable: true }),
  started_at_override: when('override the start time (null clears it)', { nullable: true }),
  completed_at_override: when('override the completion time (null clears it)', { nullable: true }),
  converted_from_story_id: int('the story this epic was converted from', { nullable: true, in: C }),
  created_at: when('creation time (ISO 8601)', { in: C }),
  updated_at: when('update time (ISO 8601)', { in: C }),
  archived: bool('archive (true) or restore (false)', { in: U }),
  before_id: int('move before this epic', { in: U }),
  after_id: int('move after this epic', { in: U }),
};

export const epics: ResourceSpec = {
  name: 'epics',
  ref: 'epic',
  singular: 'epic',
  path: '/epics',
  idType: 'int',
  fields: epicFields,
  listQuery: includesDescription,
  columns: epicColumns,
  verbs: ['list', 'get', 'create', 'update', 'delete'],
  extras: [
    {
      name: 'paginated',
      description: 'list epics page by page (--all for every page)',
      method: 'GET',
      path: '/epics/paginated',
      query: includesDescription,
      result: 'list',
      columns: epicColumns,
      paging: { kind: 'page', max: 250 },
      example: 'opsctl tracker epics paginated --all',
    },
    {
      name: 'comments',
      description: 'the threaded comments of an epic',
      method: 'GET',
      path: '/epics/{id}/comments',
      args: [intId()],
      result: 'list',
      columns: ['id', 'author_id', 'text', 'created_at'],
    },
    {
      name: 'comment',
      description: 'show one comment with its replies',
      method: 'GET',
      path: '/epics/{id}/comments/{comment_id}',
      args: [intId(), intId('comment_id')],
      result: 'one',
    },
    {
      name: 'comment-add',
      description: 'comment on an epic',
      method: 'POST',
      path: '/epics/{id}/comments',
      args: [intId()],
      body: commentBody,
      result: 'one',
      example: 'opsctl tracker epics comment-add 12 --text "Looks good"',
    },
    {
      name: 'reply',
      description: 'reply to a comment (a nested reply)',
      method: 'POST',
      path: '/epics/{id}/comments/{comment_id}',
      args: [intId(), intId('comment_id')],
      body: commentBody,
      result: 'one',
    },
    {
      name: 'comment-update',
      description: 'change the text of a comment',
      method: 'PUT',
      path: '/epics/{id}/comments/{comment_id}',
      args: [intId(), intId('comment_id')],
      body: { text: commentBody.text },
      result: 'one',
    },
    {
      name: 'comment-delete',
      description: 'delete a comment',
      method: 'DELETE',
      path: '/epics/{id}/comments/{comment_id}',
      args: [intId(), intId('comment_id')],
      result: 'none',
      confirm: true,
    },
    { name: 'health', description: 'the current health of an epic', method: 'GET', path: '/epics/{id}/health', args: [intId()], result: 'one' },
    {
      name: 'health-set',
      description: 'record a new health for an epic',
      method: 'POST',
      path: '/epics/{id}/health',
      args: [intId()],
      body: { status: { type: 'enum', values: HEALTH_STATUSES, required: true, help: 'At Risk, No Health, Off Track, On Track' }, text: text('a note') },
      result: 'one',
      example: 'opsctl tracker epics health-set 12 --status "On Track"',
    },
    {
      name: 'health-history',
      description: 'the health records of an epic, most recent first',
      method: 'GET',
      path: '/epics/{id}/health-history',
      args: [intId()],
      result: 'list',
      columns: ['id', 'status', 'text', 'created_at'],
    },
    {
      name: 'stories',
      description: 'the stories of an epic',
      method: 'GET',
      path: '/epics/{id}/stories',
      args: [intId()],
      query: includesDescription,
      result: 'list',
      columns: storyColumns,
    },
    {
      name: 'unlink-planningtool',
      description: 'unlink the external planning-tool epic',
      method: 'POST',
      path: '/epics/{id}/unlink-planningtool',
      args: [intId()],
      result: 'none',
    },
    {
      name: 'documents',
      description: 'the documents linked to an epic',
      method: 'GET',
      path: '/epics/{id}/documents',
      args: [intId()],
      result: 'list',
      columns: ['id', 'title', 'app_url'],
    },
  ],
  examples: {
    create: 'opsctl tracker epics create --name "Q3 launch" --epic-state-id 500000002',
    update: 'opsctl tracker epics update 12 --before-id 10 --deadline null',
  },
};

export const files: ResourceSpec = {
  name: 'files',
  singular: 'file',
  path: '/files',
  idType: 'int',
  fields: {
    name: str(1024, 'file name (at most 1024 characters)', { min: 1 }),
    description: str(4096, 'description (at most 4096 characters)'),
    external_id: str(128, 'an id in another system'),
    uploader_id: uuid('uploader member id'),
    created_at: when('creation time'),
    updated_at: when('update time'),
  },
  columns: ['id', 'name', 'content_type', 'size', 'story_ids'],
  verbs: ['list', 'get', 'update', 'delete'],
  extras: [
    {
      name: 'upload',
      description: 'upload files (4 per request, batched beyond that)',
      method: 'POST',
      path: '/files',
      result: 'list',
      columns: ['id', 'name', 'content_type', 'size', 'story_ids'],
      handler: 'upload',
      example: 'opsctl tracker files upload a.png b.log --story 12',
    },
  ],
};

export const linkedFiles: ResourceSpec = {
  name: 'linked-files',
  singular: 'linked file',
  path: '/linked-files',
  idType: 'int',
  fields: {
    name: str(256, 'name (at most 256 characters)', { min: 1, required: true }),
    url: str(2048, 'URL (at most 2048 characters)', { min: 1, required: true }),
    type: { type: 'enum', values: LINKED_FILE_TYPES, required: true, help: `one of ${LINKED_FILE_TYPES.join(', ')}` },
    description: str(512, 'description (at most 512 characters)'),
    content_type: str(128, 'MIME type', { in: C }),
    size: int('size in bytes'),
    story_id: int('attach to this story'),
    thumbnail_url: str(2048, 'thumbnail URL'),
    uploader_id: uuid('uploader member id'),
  },
  columns: ['id', 'name', 'type', 'url', 'story_ids'],
  verbs: ['list', 'get', 'create', 'update', 'delete'],
  examples: { create: 'opsctl tracker linked-files create --name spec --type url --url https://example.com/spec' },
};

export const groups: ResourceSpec = {
  name: 'groups',
  ref: 'group',
  singular: 'group',
  path: '/groups',
  idType: 'uuid',
  fields: {
    name: str(63, 'group name (at most 63 characters)', { min: 1, required: true }),
    mention_name: str(63, 'mention name (at most 63 characters)', { min: 1, required: true }),
    description: str(4096, 'description'),
    color: color(),
    color_key: { type: 'enum', values: COLOR_KEYS, help: `one of ${COLOR_KEYS.join(', ')}` },
    display_icon_id: uuid('icon id', { nullable: true }),
    member_ids: uuids('member ids'),
    workflow_ids: ints('workflow ids'),
    archived: bool('archive (true) or restore (false)', { in: U, nullable: true }),
    default_workflow_id: int('default workflow id', { in: U, nullable: true }),
  },
  columns: ['id', 'name', 'mention_name', 'color_key', 'archived', 'num_stories'],
  verbs: ['list', 'get', 'create', 'update'],
  extras: [
    {
      name: 'stories',
      description: 'the stories of a group (--all pages by offset)',
      method: 'GET',
      path: '/groups/{id}/stories',
      args: [uuidId()],
      result: 'list',
      columns: storyColumns,
      paging: { kind: 'offset', max: 1000 },
    },
  ],
  examples: { create: 'opsctl tracker groups create --name Platform --mention-name platform --color-key blue' },
};

export const health: ResourceSpec = {
  name: 'health',
  singular: 'health record',
  path: '/health',
  idType: 'uuid',
  fields: {
    status: { type: 'enum', values: HEALTH_STATUSES, help: 'At Risk, No Health, Off Track, On Track' },
    text: text('a note'),
  },
  columns: ['id', 'status', 'text'],
  verbs: ['update'],
};

export const webhooks: ResourceSpec = {
  name: 'webhooks',
  singular: 'webhook integration',
  path: '/integrations/webhook',
  idType: 'int',
  fields: {
    webhook_url: str(2048, 'where events are sent (at most 2048 characters)', { min: 1, required: true }),
    secret: str(128, 'shared secret for signatures (at most 128 characters)'),
  },
  columns: ['id', 'webhook_url'],
  verbs: ['get', 'create', 'delete'],
  examples: { create: 'opsctl tracker webhooks create --webhook-url https://ci.example/hook --secret s3cret' },
};

const iterationFields: Record<string, FieldSpec> = {
  name: str(256, 'iteration name (at most 256 characters)', { min: 1, required: true }),
  start_date: { type: 'date', required: true, help: 'start date, e.g. 2026-01-05' },
  end_date: { type: 'date', required: true, help: 'end date, e.g. 2026-01-19' },
  description: text('description'),
  follower_ids: uuids('follower member ids'),
  group_ids: uuids('group ids'),
  labels: json('labelParams', 'labels [{name, color, …}] (--data)'),
};

export const iterations: ResourceSpec = {
  name: 'iterations',
  ref: 'iteration',
  singular: 'iteration',
  path: '/iterations',
  idType: 'int',
  fields: iterationFields,
  columns: ['id', 'name', 'status', 'start_date', 'end_date'],
  verbs: ['list', 'get', 'create', 'update', 'delete'],
  extras: [
    { name: 'enable', description: 'turn iterations on for the workspace', method: 'PUT', path: '/iterations/enable', result: 'none' },
    { name: 'disable', description: 'turn iterations off for the workspace', method: 'PUT', path: '/iterations/disable', result: 'none' },
    {
      name: 'stories',
      description: 'the stories of an iteration',
      method: 'GET',
      path: '/iterations/{id}/stories',
      args: [intId()],
      query: includesDescription,
      result: 'list',
      columns: storyColumns,
    },
  ],
  examples: { create: 'opsctl tracker iterations create --name "Sprint 1" --start-date 2026-01-05 --end-date 2026-01-19' },
};

export const keyResults: ResourceSpec = {
  name: 'key-results',
  singular: 'key result',
  path: '/key-results',
  idType: 'uuid',
  fields: {
    name: str(1024, 'name (at most 1024 characters)', { min: 1 }),
    initial_observed_value: json('keyResultValue', '{numeric_value} or {boolean_value} (--data)'),
    observed_value: json('keyResultValue', '{numeric_value} or {boolean_value} (--data)'),
    target_value: json('keyResultValue', '{numeric_value} or {boolean_value} (--data)'),
  },
  columns: ['id', 'name', 'type', 'progress'],
  verbs: ['get', 'update'],
  extras: [
    {
      name: 'list',
      description: "the key results of an objective (the API lists them only through the objective's key_result_ids)",
      method: 'GET',
      path: '/objectives/{id}',
      result: 'list',
      handler: 'key-results',
      columns: ['id', 'name', 'type', 'progress'],
      example: 'opsctl tracker key-results list --objective "Grow adoption"',
    },
  ],
};

export const labels: ResourceSpec = {
  name: 'labels',
  ref: 'label',
  singular: 'label',
  path: '/labels',
  idType: 'int',
  fields: {
    name: str(128, 'label name (at most 128 characters, unique)', { min: 1, required: true }),
    description: str(1024, 'description (at most 1024 characters)'),
    color: color(),
    external_id: str(128, 'an id in another system (at most 128 characters)', { min: 1, in: C }),
    archived: bool('archive (true) or restore (false)', { in: U }),
  },
  listQuery: { slim: bool('return slim labels (no stats)') },
  columns: ['id', 'name', 'color', 'archived', 'description'],
  verbs: ['list', 'get', 'create', 'update', 'delete'],
  extras: [
    { name: 'epics', description: 'the epics with a label', method: 'GET', path: '/labels/{id}/epics', args: [intId()], result: 'list', columns: epicColumns },
    {
      name: 'stories',
      description: 'the stories with a label',
      method: 'GET',
      path: '/labels/{id}/stories',
      args: [intId()],
      query: includesDescription,
      result: 'list',
      columns: storyColumns,
    },
    {
      name: 'apply',
      description: "make the labels match a YAML or JSON file (export's format; list --json and get --json output too; renamed_from keeps a label's id)",
      method: 'GET',
      path: '/labels',
      result: 'none',
      handler: 'apply',
      example: 'opsctl tracker labels apply -f labels.yaml --dry-run',
    },
    {
      name: 'export',
      description: 'print the labels as an apply file (YAML; --json for JSON): copy them to another workspace with apply -f',
      method: 'GET',
      path: '/labels',
      result: 'one',
      handler: 'export',
      example: 'opsctl tracker labels export > labels.yaml',
    },
  ],
  examples: {
    list: 'opsctl tracker labels list --json=id,name',
    get: 'opsctl tracker labels get 12',
    create: 'opsctl tracker labels create --name bug --color "#ff0000"',
    update: 'opsctl tracker labels update 12 --archived',
    delete: 'opsctl tracker labels delete 12 --yes',
  },
  applyKey: 'name',
  applyFields: ['name', 'description', 'color', 'archived'],
  serverFields: ['id', 'app_url', 'entity_type', 'global_id', 'created_at', 'updated_at', 'stats'],
};

export const members: ResourceSpec = {
  name: 'members',
  ref: 'member',
  singular: 'member',
  path: '/members',
  idType: 'uuid',
  fields: {},
  listQuery: { disabled: bool('true: only disabled members; false: only enabled ones') },
  columns: ['id', 'profile.name', 'profile.mention_name', 'role', 'disabled'],
  verbs: ['list', 'get'],
  extras: [{ name: 'me', description: 'the member the token belongs to', method: 'GET', path: '/member', result: 'one' }],
};

function objectiveSpec(name: 'objectives' | 'milestones'): ResourceSpec {
  const singular = name.slice(0, -1);
  return {
    name,
    ref: name === 'objectives' ? 'objective' : 'milestone',
    singular,
    path: `/${name}`,
    idType: 'int',
    description: name === 'milestones' ? 'milestones (deprecated: use objectives)' : undefined,
    fields: {
      name: str(256, `${singular} name (at most 256 characters)`, { min: 1, required: true }),
      description: text('description'),
      state: { type: 'enum', values: STATE_VALUES, help: 'done, in progress, to do' },
      categories: json('categoryParams', 'categories [{name, color, external_id}] (--data)'),
      started_at_override: when('override the start time (null clears it)', { nullable: true }),
      completed_at_override: when('override the completion time (null clears it)', { nullable: true }),
      archived: bool('archive (true) or restore (false)', { in: U }),
      before_id: int(`move before this ${singular}`, { in: U }),
      after_id: int(`move after this ${singular}`, { in: U }),
    },
    columns: ['id', 'name', 'state', 'archived', 'position'],
    verbs: ['list', 'get', 'create', 'update', 'delete'],
    extras: [
      {
        name: 'epics',
        description: `the epics of ${withArticle(singular)}`,
        method: 'GET',
        path: `/${name}/{id}/epics`,
        args: [intId()],
        result: 'list',
        columns: epicColumns,
      },
    ],
  };
}
export const objectives = objectiveSpec('objectives');
export const milestones = objectiveSpec('milestones');

export const projects: ResourceSpec = {
  name: 'projects',
  ref: 'project',
  singular: 'project',
  path: '/projects',
  idType: 'int',
  fields: {
    name: str(128, 'project name (at most 128 characters)', { min: 1, required: true }),
    team_id: int('team id', { required: true }),
    abbreviation: str(63, 'short name (3 characters recommended)'),
    color: color(),
    description: text('description'),
    external_id: str(128, 'an id in another system', { in: C }),
    follower_ids: uuids('follower member ids'),
    iteration_length: int('iteration length in weeks', { in: C }),
    start_time: when('start time', { in: C }),
    created_at: when('creation time', { in: C }),
    updated_at: when('update time', { in: C }),
    archived: bool('archive (true) or restore (false)', { in: U }),
    days_to_thermometer: int('days to thermometer', { in: U }),
    show_thermometer: bool('show the thermometer', { in: U }),
  },
  columns: ['id', 'name', 'abbreviation', 'archived', 'stats.num_stories'],
  verbs: ['list', 'get', 'create', 'update', 'delete'],
  extras: [
    {
      name: 'stories',
      description: 'the stories of a project',
      method: 'GET',
      path: '/projects/{id}/stories',
      args: [intId()],
      query: includesDescription,
      result: 'list',
      columns: storyColumns,
    },
  ],
  examples: { create: 'opsctl tracker projects create --name Backend --team-id 1 --abbreviation BE' },
};

export const repositories: ResourceSpec = {
  name: 'repositories',
  singular: 'repository',
  path: '/repositories',
  idType: 'int',
  fields: {},
  columns: ['id', 'full_name', 'type', 'url'],
  verbs: ['list', 'get'],
};

export const STORY_LINK_VERBS = ['blocks', 'duplicates', 'relates to'] as const;
const storyCommentColumns = ['id', 'author_id', 'parent_id', 'text', 'created_at'];
const storyArg = intId('id', 'story id');

/** Body fields a story can be created with (single, bulk and from a template). */
const storyFields: Record<string, FieldSpec> = {
  name: str(512, 'story name (at most 512 characters)', { min: 1, required: true }),
  description: text('description'),
  story_type: { type: 'enum', values: STORY_TYPES, help: 'feature, chore or bug' },
  workflow_state_id: int('workflow state id (see: opsctl tracker workflows list; or use stories move --state NAME)'),
  estimate: int('estimate in points (null clears it)', { nullable: true }),
  epic_id: int('epic id (null detaches)', { nullable: true }),
  iteration_id: int('iteration id (null detaches)', { nullable: true }),
  project_id: int('project id (null detaches)', { nullable: true }),
  group_id: uuid('group id (null detaches)', { nullable: true }),
  parent_story_id: int('make it a sub-task of this story (null detaches)', { nullable: true }),
  labels: json('labelParams', 'labels [{name, color, …}]; created when missing (--data)'),
  custom_fields: json('storyCustomFields', 'custom field values [{field_id, value_id}]; only enabled fields (--data)'),
  owner_ids: uuids('owner member ids'),
  follower_ids: uuids('follower member ids'),
  requested_by_id: uuid('requesting member id'),
  external_id: str(128, 'an id in another system (stories import matches on it)', { in: C }),
  external_links: { type: 'string[]', max: 2048, help: 'external links (comma-separated URLs)' },
  file_ids: ints('uploaded file ids'),
  linked_file_ids: ints('linked file ids'),
  deadline: when('deadline (null clears it)', { nullable: true }),
  started_at_override: when('override the start time (null clears it)', { nullable: true }),
  completed_at_override: when('override the completion time (null clears it)', { nullable: true }),
  move_to: { type: 'enum', values: ['first', 'last'], help: 'first or last in its state' },
  archived: bool('archive (true) or restore (false)'),
  tasks: json('storyTasks', 'checklist [{description, complete, owner_ids, external_id}] (--data)', { in: C }),
  story_links: json('storyLinkParams', 'links [{verb, subject_id | object_id}] to existing stories (--data)', { in: C }),
  story_template_id: uuid('the template it was made from', { in: C }),
  created_at: when('creation time (ISO 8601)', { in: C }),
  updated_at: when('update time (ISO 8601)', { in: C }),
};

const commentBodyStory: Record<string, FieldSpec> = { ...commentBody, external_id: str(1024, 'an id in another system') };
const storySearchBody: Record<string, FieldSpec> = {
  archived: bool('archived (true) or active (false) stories only'),
  story_type: { type: 'enum', values: STORY_TYPES, help: 'feature, chore or bug' },
  workflow_state_id: int('in this workflow state'),
  workflow_state_types: { type: 'string[]', help: 'backlog, unstarted, started, done (comma-separated)' },
  epic_id: int('in this epic', { nullable: true }),
  epic_ids: ints('in any of these epics'),
  iteration_id: int('in this iteration', { nullable: true }),
  iteration_ids: ints('in any of these iterations'),
  project_id: int('in this project', { nullable: true }),
  project_ids: ints('in any of these projects'),
  group_id: uuid('of this group', { nullable: true }),
  group_ids: uuids('of any of these groups'),
  label_ids: ints('with any of these labels'),
  label_name: str(128, 'with this label name'),
  owner_id: uuid('owned by this member', { nullable: true }),
  owner_ids: uuids('owned by any of these members'),
  requested_by_id: uuid('requested by this member'),
  external_id: str(1024, 'with this external id'),
  estimate: int('with this estimate'),
  includes_description: bool('include each description'),
  created_at_start: when('created at or after'),
  created_at_end: when('created at or before'),
  updated_at_start: when('updated at or after'),
  updated_at_end: when('updated at or before'),
  completed_at_start: when('completed at or after'),
  completed_at_end: when('completed at or before'),
  deadline_start: when('deadline at or after'),
  deadline_end: when('deadline at or before'),
};
const bulkUpdateBody: Record<string, FieldSpec> = {
  story_ids: { ...ints('the stories to change'), required: true },
  archived: bool('archive (true) or restore (false)'),
  story_type: { type: 'enum', values: STORY_TYPES, help: 'feature, chore or bug' },
  workflow_state_id: int('move them to this workflow state'),
  epic_id: int('epic id (null detaches)', { nullable: true }),
  iteration_id: int('iteration id (null detaches)', { nullable: true }),
  project_id: int('project id (null detaches)', { nullable: true }),
  group_id: uuid('group id (null detaches)', { nullable: true }),
  estimate: int('estimate (null clears it)', { nullable: true }),
  requested_by_id: uuid('requesting member id'),
  deadline: when('deadline (null clears it)', { nullable: true }),
  external_links: { type: 'string[]', max: 2048, help: 'external links (replaces them)' },
  owner_ids_add: uuids('owners to add'),
  owner_ids_remove: uuids('owners to remove'),
  follower_ids_add: uuids('followers to add'),
  follower_ids_remove: uuids('followers to remove'),
  labels_add: json('labelParams', 'labels to add [{name, …}] (--data)'),
  labels_remove: json('labelParams', 'labels to remove [{name}] (--data)'),
  custom_fields_add: json('storyCustomFields', 'custom field values to set (--data)'),
  custom_fields_remove: json('storyCustomFields', 'custom field values to remove (--data)'),
  move_to: { type: 'enum', values: ['first', 'last'], help: 'first or last in their states' },
  before_id: int('move before this story'),
  after_id: int('move after this story'),
};
const { name: _tplName, ...templateOverrides } = storyFields;

export const stories: ResourceSpec = {
  name: 'stories',
  singular: 'story',
  path: '/stories',
  idType: 'int',
  fields: storyFields,
  columns: storyColumns,
  verbs: ['get', 'create', 'update', 'delete'],
  extras: [
    {
      name: 'move',
      description: 'move a story to a workflow state by name (e.g. --state "In Progress")',
      method: 'PUT',
      path: '/stories/{id}',
      args: [storyArg],
      body: { state: { type: 'string', min: 1, max: 128, required: true, help: 'the workflow state name (see: opsctl tracker workflows list)' } },
      result: 'one',
      handler: 'move',
      example: 'opsctl tracker stories move 12 --state "In Progress"',
    },
    {
      name: 'import',
      description: 'create stories from a YAML, JSON or CSV file (bulk, paced, idempotent by external_id)',
      method: 'POST',
      path: '/stories/bulk',
      result: 'none',
      handler: 'import',
      example: 'opsctl tracker stories import -f stories.csv --dry-run',
    },
    {
      name: 'search',
      description: 'find stories by attributes (POST /stories/search)',
      method: 'POST',
      path: '/stories/search',
      body: storySearchBody,
      result: 'list',
      columns: storyColumns,
      example: 'opsctl tracker stories search --workflow-state-types started --project-id 12',
    },
    {
      name: 'bulk-create',
      description: 'create up to 100 stories in one request (--data \'{"stories":[…]}\')',
      method: 'POST',
      path: '/stories/bulk',
      body: { stories: json('storyList', 'the stories [{name, …}] (at most 100)', { required: true }) },
      result: 'list',
      columns: storyColumns,
    },
    {
      name: 'bulk-update',
      description: 'change many stories at once',
      method: 'PUT',
      path: '/stories/bulk',
      body: bulkUpdateBody,
      result: 'list',
      columns: storyColumns,
      example: 'opsctl tracker stories bulk-update --story-ids 1,2,3 --workflow-state-id 500000003',
    },
    {
      name: 'bulk-delete',
      description: 'delete many stories at once',
      method: 'DELETE',
      path: '/stories/bulk',
      body: { story_ids: { ...ints('the stories to delete'), required: true } },
      result: 'none',
      confirm: true,
    },
    {
      name: 'from-template',
      description: 'create a story from an entity template (fields given override the template)',
      method: 'POST',
      path: '/stories/from-template',
      body: {
        ...templateOverrides,
        name: str(512, "story name (default: the template's)", { min: 1 }),
        story_template_id: uuid('the template', { required: true }),
      },
      result: 'one',
      example: 'opsctl tracker stories from-template --story-template-id UUID --name "Crash on save"',
    },
    {
      name: 'history',
      description: 'what changed on a story, oldest first',
      method: 'GET',
      path: '/stories/{id}/history',
      args: [storyArg],
      result: 'list',
      columns: ['changed_at', 'id', 'member_id'],
    },
    {
      name: 'sub-tasks',
      description: 'the sub-task stories of a story',
      method: 'GET',
      path: '/stories/{id}/sub-tasks',
      args: [storyArg],
      result: 'list',
      columns: storyColumns,
    },
    {
      name: 'comments',
      description: 'the comments of a story (replies carry parent_id)',
      method: 'GET',
      path: '/stories/{id}/comments',
      args: [storyArg],
      result: 'list',
      columns: storyCommentColumns,
    },
    {
      name: 'comment',
      description: 'show one story comment',
      method: 'GET',
      path: '/stories/{id}/comments/{comment_id}',
      args: [storyArg, intId('comment_id')],
      result: 'one',
    },
    {
      name: 'comment-add',
      description: 'comment on a story',
      method: 'POST',
      path: '/stories/{id}/comments',
      args: [storyArg],
      body: commentBodyStory,
      result: 'one',
      example: 'opsctl tracker stories comment-add 12 --text "Repro attached"',
    },
    {
      name: 'reply',
      description: 'reply to a story comment',
      method: 'POST',
      path: '/stories/{id}/comments',
      args: [storyArg],
      body: { ...commentBodyStory, parent_id: int('the comment replied to', { required: true }) },
      result: 'one',
      example: 'opsctl tracker stories reply 12 --parent-id 40 --text "Fixed"',
    },
    {
      name: 'comment-update',
      description: 'change the text of a story comment',
      method: 'PUT',
      path: '/stories/{id}/comments/{comment_id}',
      args: [storyArg, intId('comment_id')],
      body: { text: commentBody.text },
      result: 'one',
    },
    {
      name: 'comment-delete',
      description: 'delete a story comment',
      method: 'DELETE',
      path: '/stories/{id}/comments/{comment_id}',
      args: [storyArg, intId('comment_id')],
      result: 'none',
      confirm: true,
    },
    {
      name: 'comment-unlink-chat',
      description: 'unlink a story comment thread from its chat (Slack) thread: replies there no longer come back as comments',
      method: 'POST',
      path: '/stories/{id}/comments/{comment_id}/unlink-from-slack',
      args: [storyArg, intId('comment_id')],
      result: 'one',
      example: 'opsctl tracker stories comment-unlink-chat 12 34',
    },
    {
      name: 'react',
      description: 'add an emoji reaction to a story comment',
      method: 'POST',
      path: '/stories/{id}/comments/{comment_id}/reactions',
      args: [storyArg, intId('comment_id')],
      body: { emoji: str(64, 'the emoji, e.g. :+1:', { min: 1, required: true }) },
      result: 'list',
      columns: ['emoji', 'permission_ids'],
    },
    {
      name: 'unreact',
      description: 'remove your emoji reaction from a story comment',
      method: 'DELETE',
      path: '/stories/{id}/comments/{comment_id}/reactions',
      args: [storyArg, intId('comment_id')],
      body: { emoji: str(64, 'the emoji, e.g. :+1:', { min: 1, required: true }) },
      result: 'none',
    },
    {
      name: 'task-add',
      description: 'add a task (checklist item) to a story',
      method: 'POST',
      path: '/stories/{id}/tasks',
      args: [storyArg],
      body: {
        description: str(2048, 'what to do (at most 2048 characters)', { min: 1, required: true }),
        complete: bool('already done'),
        owner_ids: uuids('owner member ids'),
        external_id: str(128, 'an id in another system'),
      },
      result: 'one',
      example: 'opsctl tracker stories task-add 12 --description "Write the test"',
    },
    {
      name: 'task',
      description: 'show one task of a story',
      method: 'GET',
      path: '/stories/{id}/tasks/{task_id}',
      args: [storyArg, intId('task_id')],
      result: 'one',
    },
    {
      name: 'task-update',
      description: 'change a task',
      method: 'PUT',
      path: '/stories/{id}/tasks/{task_id}',
      args: [storyArg, intId('task_id')],
      body: {
        description: str(2048, 'what to do', { min: 1 }),
        complete: bool('done (true) or not (false)'),
        owner_ids: uuids('owner member ids'),
        before_id: int('move before this task'),
        after_id: int('move after this task'),
      },
      result: 'one',
    },
    {
      name: 'task-check',
      description: 'mark a task done',
      method: 'PUT',
      path: '/stories/{id}/tasks/{task_id}',
      args: [storyArg, intId('task_id')],
      fixedBody: { complete: true },
      result: 'one',
      example: 'opsctl tracker stories task-check 12 41',
    },
    {
      name: 'task-uncheck',
      description: 'mark a task not done',
      method: 'PUT',
      path: '/stories/{id}/tasks/{task_id}',
      args: [storyArg, intId('task_id')],
      fixedBody: { complete: false },
      result: 'one',
    },
    {
      name: 'task-delete',
      description: 'delete a task',
      method: 'DELETE',
      path: '/stories/{id}/tasks/{task_id}',
      args: [storyArg, intId('task_id')],
      result: 'none',
      confirm: true,
    },
    {
      name: 'by-link',
      description: 'the stories with an external link',
      method: 'GET',
      path: '/external-link/stories',
      query: { external_link: str(2048, 'the external link', { required: true, min: 1 }) },
      result: 'list',
      columns: storyColumns,
    },
  ],
  examples: { create: 'opsctl tracker stories create --name "Fix login" --story-type bug --project-id 12' },
};

export const storyLinks: ResourceSpec = {
  name: 'story-links',
  singular: 'story link',
  path: '/story-links',
  idType: 'int',
  description: 'story links: SUBJECT blocks | duplicates | relates to OBJECT',
  fields: {
    verb: { type: 'enum', values: STORY_LINK_VERBS, required: true, help: 'blocks, duplicates or relates to' },
    subject_id: int('the story that blocks / duplicates / relates to', { required: true }),
    object_id: int('the story it is about', { required: true }),
  },
  columns: ['id', 'subject_id', 'verb', 'object_id'],
  verbs: ['get', 'create', 'update', 'delete'],
  examples: { create: 'opsctl tracker story-links create --subject-id 12 --verb blocks --object-id 13' },
};

export const workflows: ResourceSpec = {
  name: 'workflows',
  ref: 'workflow',
  singular: 'workflow',
  path: '/workflows',
  idType: 'int',
  description: 'story workflows and their states (read-only: edited in the web app)',
  fields: {},
  columns: ['id', 'name', 'default_state_id'],
  verbs: ['list', 'get'],
  extras: [
    {
      name: 'states',
      description: 'the states of a workflow, in order',
      method: 'GET',
      path: '/workflows/{id}',
      args: [intId()],
      result: 'list',
      columns: ['id', 'name', 'type', 'position', 'num_stories'],
      pick: 'states',
    },
  ],
};

const searchQuery: Record<string, FieldSpec> = {
  query: { type: 'string', min: 1, max: 2048, required: true, help: 'search operators as in the web app' },
  page_size: { type: 'int', min: 1, maxValue: 250, help: 'results per page (1-250, default 25)' },
  detail: { type: 'enum', values: ['full', 'slim'], help: 'full (default) or slim' },
};
const searchVerb = (name: string, what: string, columns: string[]): ExtraVerb => ({
  name,
  description: `search ${what}`,
  method: 'GET',
  path: `/search/${name}`,
  query: searchQuery,
  result: 'list',
  columns,
  paging: { kind: 'next', max: 250 },
  example: `opsctl tracker search ${name} --query "login" --all`,
});

export const search: ResourceSpec = {
  name: 'search',
  singular: 'search',
  path: '/search',
  idType: 'int',
  fields: {},
  columns: [],
  verbs: [],
  extras: [
    {
      name: 'all',
      description: 'search epics, iterations, milestones and stories at once (one page of each)',
      method: 'GET',
      path: '/search',
      query: { ...searchQuery, entity_types: { type: 'string[]', help: 'story, epic, iteration, milestone, objective' } },
      result: 'groups',
    },
    searchVerb('stories', 'stories', storyColumns),
    searchVerb('epics', 'epics', epicColumns),
    searchVerb('iterations', 'iterations', ['id', 'name', 'status', 'start_date', 'end_date']),
    searchVerb('milestones', 'milestones (deprecated: objectives)', ['id', 'name', 'state']),
    searchVerb('objectives', 'objectives', ['id', 'name', 'state']),
    {
      name: 'documents',
      description: 'search documents by title',
      method: 'GET',
      path: '/search/documents',
      query: {
        title: { type: 'string', min: 1, max: 256, required: true, help: 'words of the title' },
        archived: bool('archived documents only (true) or active ones (false)'),
        created_by_me: bool('only documents you created'),
        followed_by_me: bool('only documents you follow'),
        page_size: { type: 'int', min: 1, maxValue: 250, help: 'results per page (1-250, default 25)' },
      },
      result: 'list',
      columns: ['id', 'title', 'app_url'],
      paging: { kind: 'next', max: 250 },
      example: 'opsctl tracker search documents --title runbook',
    },
  ],
};

/** The resource table. The CLI tree, validation and the mock's routes come from here. */
export const RESOURCES: readonly ResourceSpec[] = [
  categories,
  customFields,
  documents,
  entityTemplates,
  epicWorkflow,
  epics,
  files,
  linkedFiles,
  groups,
  health,
  webhooks,
  iterations,
  keyResults,
  labels,
  members,
  milestones,
  objectives,
  projects,
  repositories,
  search,
  stories,
  storyLinks,
  workflows,
];

/**
 * Which kind of record a field or argument of this name holds an id of (names.ts resolves names of it).
 * The API names these fields the same way on every resource, so one table covers them all.
 */
const REF_FIELDS: ReadonlyMap<string, RefKind> = new Map<string, RefKind>([
  ['owner_id', 'member'],
  ['owner_ids', 'member'],
  ['follower_ids', 'member'],
  ['member_ids', 'member'],
  ['requested_by_id', 'member'],
  ['author_id', 'member'],
  ['uploader_id', 'member'],
  ['owner_ids_add', 'member'],
  ['owner_ids_remove', 'member'],
  ['follower_ids_add', 'member'],
  ['follower_ids_remove', 'member'],
  ['epic_id', 'epic'],
  ['epic_ids', 'epic'],
  ['project_id', 'project'],
  ['project_ids', 'project'],
  ['iteration_id', 'iteration'],
  ['iteration_ids', 'iteration'],
  ['label_ids', 'label'],
  ['group_id', 'group'],
  ['group_ids', 'group'],
  ['objective_ids', 'objective'],
  ['milestone_id', 'milestone'],
  ['workflow_state_id', 'workflow-state'],
  ['epic_state_id', 'epic-state'],
  ['workflow_ids', 'workflow'],
  ['default_workflow_id', 'workflow'],
]);

/** The kind of record a flag's field refers to, when its value may be a name; only id-typed fields. */
export function fieldRef(name: string, f: FieldSpec): RefKind | undefined {
  if (!['int', 'uuid', 'int[]', 'uuid[]'].includes(f.type)) return undefined;
  return REF_FIELDS.get(name);
}

/** The kind of record a positional argument of a verb of `spec` refers to (`id` is the resource itself). */
export function argRef(spec: ResourceSpec, arg: ArgSpec): RefKind | undefined {
  return arg.name === 'id' ? spec.ref : REF_FIELDS.get(arg.name);
}

export function resourceByName(name: string): ResourceSpec | undefined {
  return RESOURCES.find((r) => r.name === name);
}

export function extraByName(spec: ResourceSpec, name: string): ExtraVerb | undefined {
  return spec.extras?.find((e) => e.name === name);
}
