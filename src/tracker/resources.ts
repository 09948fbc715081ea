import type { FieldSpec } from './fields.js';
export { operationKey } from './contract-fields.js';
import { resource, type ArgInput, type ExtraInput, type Helps } from './contract-fields.js';
import type { RefKind } from './names.js';
import { withArticle } from '../core/problems.js';

export type { ArgSpec, ExtraVerb, Paging, ResourceSpec, Verb } from './resource-spec.js';
import type { ArgSpec, ExtraVerb, ResourceSpec } from './resource-spec.js';

// ---- fields: the help is the CLI's choice; type, choices, nullability, requiredness and limits are the contract's (contract-fields.ts) ----
const COLOR_HELP = 'hex colour such as #ff0000 (null clears it on update)';

const includesDescription = { includes_description: 'include each story/epic description' };
const storyColumns = ['id', 'name', 'story_type', 'workflow_state_id', 'estimate', 'project_id', 'epic_id'];
const epicColumns = ['id', 'name', 'state', 'epic_state_id', 'archived', 'position'];
/** A positional argument; what it holds (an integer id or a uuid) is its path placeholder's kind in the contract. */
const arg = (name = 'id', help?: string): ArgInput => ({ name, help });

const commentBody = {
  text: 'comment text',
  author_id: 'author member id (default: the token owner)',
  external_id: 'an id in another system',
  created_at: 'creation time (ISO 8601)',
  updated_at: 'update time (ISO 8601)',
} satisfies Helps;

export const categories = resource({
  name: 'categories',
  ref: 'category',
  singular: 'category',
  path: '/categories',
  fields: {
    name: 'category name (at most 128 characters, unique)',
    color: COLOR_HELP,
    external_id: 'an id in another system',
    archived: 'archive (true) or restore (false)',
  },
  columns: ['id', 'name', 'color', 'archived'],
  verbs: ['list', 'get', 'create', 'update', 'delete'],
  extras: [
    {
      name: 'milestones',
      description: 'the milestones of a category (deprecated: use objectives)',
      method: 'GET',
      path: '/categories/{id}/milestones',
      args: [arg()],
      result: 'list',
      columns: ['id', 'name', 'state', 'archived'],
    },
    {
      name: 'objectives',
      description: 'the objectives of a category',
      method: 'GET',
      path: '/categories/{id}/objectives',
      args: [arg()],
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
});

export const customFields = resource({
  name: 'custom-fields',
  singular: 'custom field',
  path: '/custom-fields',
  fields: {
    name: 'field name',
    description: 'description',
    enabled: 'enable (only enabled fields can be applied to stories) or disable',
    icon_set_identifier: 'icon set identifier',
    before_id: 'move before this custom field',
    after_id: 'move after this custom field',
    values: 'the values in sort order; omitted values are deleted, values without id are created (--data)',
  },
  columns: ['id', 'name', 'field_type', 'enabled', 'position'],
  verbs: ['list', 'get', 'update', 'delete'],
  examples: { update: 'opsctl tracker custom-fields update UUID --data @values.json' },
});

export const documents = resource({
  name: 'documents',
  singular: 'document',
  path: '/documents',
  fields: {
    title: 'document title',
    content: 'document content (markdown)',
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
      args: [arg()],
      result: 'list',
      columns: epicColumns,
    },
    {
      name: 'link-epic',
      description: 'link a document to an epic',
      method: 'PUT',
      path: '/documents/{id}/epics/{epic_id}',
      args: [arg(), arg('epic_id')],
      result: 'none',
      example: 'opsctl tracker documents link-epic UUID 12',
    },
    {
      name: 'unlink-epic',
      description: 'unlink a document from an epic',
      method: 'DELETE',
      path: '/documents/{id}/epics/{epic_id}',
      args: [arg(), arg('epic_id')],
      result: 'none',
    },
  ],
  examples: {
    create: 'opsctl tracker documents create --title Runbook --content "# Steps"',
    update: 'opsctl tracker documents update UUID --title "Runbook v2"',
  },
});

export const entityTemplates = resource({
  name: 'entity-templates',
  singular: 'entity template',
  path: '/entity-templates',
  fields: {
    name: 'template name',
    author_id: 'author member id',
    story_contents: 'the story the template makes (--data)',
  },
  columns: ['id', 'name', 'author_id', 'last_used_at'],
  verbs: ['list', 'get', 'create', 'update', 'delete'],
  extras: [
    { name: 'enable', description: 'turn story templates on for the workspace', method: 'PUT', path: '/entity-templates/enable', result: 'none' },
    { name: 'disable', description: 'turn story templates off for the workspace', method: 'PUT', path: '/entity-templates/disable', result: 'none' },
  ],
  examples: { create: `opsctl tracker entity-templates create --data '{"name":"Bug","story_contents":{"story_type":"bug"}}'` },
});

export const epicWorkflow = resource({
  name: 'epic-workflow',
  singular: 'epic workflow',
  path: '/epic-workflow',
  fields: {},
  columns: [],
  verbs: [],
  extras: [{ name: 'get', description: 'show the epic workflow and its states', method: 'GET', path: '/epic-workflow', result: 'one' }],
});

const epicFields: Helps = {
  name: 'epic name',
  description: 'description',
  epic_state_id: 'epic workflow state id (wins over --state)',
  state: 'deprecated: use --epic-state-id',
  external_id: 'an id in another system',
  owner_ids: 'owner member ids',
  follower_ids: 'follower member ids',
  group_ids: 'group ids',
  group_id: 'deprecated: use --group-ids',
  objective_ids: 'objective ids',
  milestone_id: 'deprecated: use --objective-ids',
  labels: 'labels [{name, color, description, external_id}] (--data)',
  requested_by_id: 'requesting member id',
  deadline: 'deadline (null clears it)',
  planned_start_date: 'planned start (null clears it)',
  started_at_override: 'override the start time (null clears it)',
  completed_at_override: 'override the completion time (null clears it)',
  converted_from_story_id: 'the story this epic was converted from',
  created_at: 'creation time (ISO 8601)',
  updated_at: 'update time (ISO 8601)',
  archived: 'archive (true) or restore (false)',
  before_id: 'move before this epic',
  after_id: 'move after this epic',
};

export const epics = resource({
  name: 'epics',
  ref: 'epic',
  singular: 'epic',
  path: '/epics',
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
      args: [arg()],
      result: 'list',
      columns: ['id', 'author_id', 'text', 'created_at'],
    },
    {
      name: 'comment',
      description: 'show one comment with its replies',
      method: 'GET',
      path: '/epics/{id}/comments/{comment_id}',
      args: [arg(), arg('comment_id')],
      result: 'one',
    },
    {
      name: 'comment-add',
      description: 'comment on an epic',
      method: 'POST',
      path: '/epics/{id}/comments',
      args: [arg()],
      body: commentBody,
      result: 'one',
      example: 'opsctl tracker epics comment-add 12 --text "Looks good"',
    },
    {
      name: 'reply',
      description: 'reply to a comment (a nested reply)',
      method: 'POST',
      path: '/epics/{id}/comments/{comment_id}',
      args: [arg(), arg('comment_id')],
      body: commentBody,
      result: 'one',
    },
    {
      name: 'comment-update',
      description: 'change the text of a comment',
      method: 'PUT',
      path: '/epics/{id}/comments/{comment_id}',
      args: [arg(), arg('comment_id')],
      body: { text: commentBody.text },
      result: 'one',
    },
    {
      name: 'comment-delete',
      description: 'delete a comment',
      method: 'DELETE',
      path: '/epics/{id}/comments/{comment_id}',
      args: [arg(), arg('comment_id')],
      result: 'none',
      confirm: true,
    },
    { name: 'health', description: 'the current health of an epic', method: 'GET', path: '/epics/{id}/health', args: [arg()], result: 'one' },
    {
      name: 'health-set',
      description: 'record a new health for an epic',
      method: 'POST',
      path: '/epics/{id}/health',
      args: [arg()],
      body: { status: 'the health', text: 'a note' },
      result: 'one',
      example: 'opsctl tracker epics health-set 12 --status "On Track"',
    },
    {
      name: 'health-history',
      description: 'the health records of an epic, most recent first',
      method: 'GET',
      path: '/epics/{id}/health-history',
      args: [arg()],
      result: 'list',
      columns: ['id', 'status', 'text', 'created_at'],
    },
    {
      name: 'stories',
      description: 'the stories of an epic',
      method: 'GET',
      path: '/epics/{id}/stories',
      args: [arg()],
      query: includesDescription,
      result: 'list',
      columns: storyColumns,
    },
    {
      name: 'unlink-planningtool',
      description: 'unlink the external planning-tool epic',
      method: 'POST',
      path: '/epics/{id}/unlink-planningtool',
      args: [arg()],
      result: 'none',
    },
    {
      name: 'documents',
      description: 'the documents linked to an epic',
      method: 'GET',
      path: '/epics/{id}/documents',
      args: [arg()],
      result: 'list',
      columns: ['id', 'title', 'app_url'],
    },
  ],
  examples: {
    create: 'opsctl tracker epics create --name "Q3 launch" --epic-state-id 500000002',
    update: 'opsctl tracker epics update 12 --before-id 10 --deadline null',
  },
});

export const files = resource({
  name: 'files',
  singular: 'file',
  path: '/files',
  fields: {
    name: 'file name',
    description: 'description',
    external_id: 'an id in another system',
    uploader_id: 'uploader member id',
    created_at: 'creation time',
    updated_at: 'update time',
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
});

export const linkedFiles = resource({
  name: 'linked-files',
  singular: 'linked file',
  path: '/linked-files',
  fields: {
    name: 'name',
    url: 'URL',
    type: 'where the file lives',
    description: 'description',
    content_type: 'MIME type',
    size: 'size in bytes',
    story_id: 'attach to this story',
    thumbnail_url: 'thumbnail URL',
    uploader_id: 'uploader member id',
  },
  columns: ['id', 'name', 'type', 'url', 'story_ids'],
  verbs: ['list', 'get', 'create', 'update', 'delete'],
  examples: { create: 'opsctl tracker linked-files create --name spec --type url --url https://example.com/spec' },
});

export const groups = resource({
  name: 'groups',
  ref: 'group',
  singular: 'group',
  path: '/groups',
  fields: {
    name: 'group name',
    mention_name: 'mention name',
    description: 'description',
    color: COLOR_HELP,
    color_key: 'a colour by name',
    display_icon_id: 'icon id',
    member_ids: 'member ids',
    workflow_ids: 'workflow ids',
    archived: 'archive (true) or restore (false)',
    default_workflow_id: 'default workflow id',
  },
  columns: ['id', 'name', 'mention_name', 'color_key', 'archived', 'num_stories'],
  verbs: ['list', 'get', 'create', 'update'],
  extras: [
    {
      name: 'stories',
      description: 'the stories of a group (--all pages by offset)',
      method: 'GET',
      path: '/groups/{id}/stories',
      args: [arg()],
      result: 'list',
      columns: storyColumns,
      paging: { kind: 'offset', max: 1000 },
    },
  ],
  examples: { create: 'opsctl tracker groups create --name Platform --mention-name platform --color-key blue' },
});

export const health = resource({
  name: 'health',
  singular: 'health record',
  path: '/health',
  fields: {
    status: 'the health',
    text: 'a note',
  },
  columns: ['id', 'status', 'text'],
  verbs: ['update'],
});

export const webhooks = resource({
  name: 'webhooks',
  singular: 'webhook integration',
  path: '/integrations/webhook',
  fields: {
    webhook_url: 'where events are sent',
    secret: 'shared secret for signatures',
  },
  columns: ['id', 'webhook_url'],
  verbs: ['get', 'create', 'delete'],
  examples: { create: 'opsctl tracker webhooks create --webhook-url https://ci.example/hook --secret s3cret' },
});

const iterationFields: Helps = {
  name: 'iteration name',
  start_date: 'start date, e.g. 2026-01-05',
  end_date: 'end date, e.g. 2026-01-19',
  description: 'description',
  follower_ids: 'follower member ids',
  group_ids: 'group ids',
  labels: 'labels [{name, color, …}] (--data)',
};

export const iterations = resource({
  name: 'iterations',
  ref: 'iteration',
  singular: 'iteration',
  path: '/iterations',
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
      args: [arg()],
      query: includesDescription,
      result: 'list',
      columns: storyColumns,
    },
  ],
  examples: { create: 'opsctl tracker iterations create --name "Sprint 1" --start-date 2026-01-05 --end-date 2026-01-19' },
});

export const keyResults = resource({
  name: 'key-results',
  singular: 'key result',
  path: '/key-results',
  fields: {
    name: 'name',
    initial_observed_value: '{numeric_value} or {boolean_value} (--data)',
    observed_value: '{numeric_value} or {boolean_value} (--data)',
    target_value: '{numeric_value} or {boolean_value} (--data)',
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
});

export const labels = resource({
  name: 'labels',
  ref: 'label',
  singular: 'label',
  path: '/labels',
  fields: {
    name: 'label name (at most 128 characters, unique)',
    description: 'description',
    color: COLOR_HELP,
    external_id: 'an id in another system',
    archived: 'archive (true) or restore (false)',
  },
  listQuery: { slim: 'return slim labels (no stats)' },
  columns: ['id', 'name', 'color', 'archived', 'description'],
  verbs: ['list', 'get', 'create', 'update', 'delete'],
  extras: [
    { name: 'epics', description: 'the epics with a label', method: 'GET', path: '/labels/{id}/epics', args: [arg()], result: 'list', columns: epicColumns },
    {
      name: 'stories',
      description: 'the stories with a label',
      method: 'GET',
      path: '/labels/{id}/stories',
      args: [arg()],
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
});

export const members = resource({
  name: 'members',
  ref: 'member',
  singular: 'member',
  path: '/members',
  fields: {},
  listQuery: {
    disabled: 'true: only disabled members; false: only enabled ones',
    'org-public-id': "the members of this organization (a uuid; default: the token's)",
  },
  columns: ['id', 'profile.name', 'profile.mention_name', 'role', 'disabled'],
  verbs: ['list', 'get'],
  extras: [{ name: 'me', description: 'the member the token belongs to', method: 'GET', path: '/member', result: 'one' }],
});

function objectiveSpec(name: 'objectives' | 'milestones'): ResourceSpec {
  const singular = name.slice(0, -1);
  return resource({
    name,
    ref: name === 'objectives' ? 'objective' : 'milestone',
    singular,
    path: `/${name}`,
    description: name === 'milestones' ? 'milestones (deprecated: use objectives)' : undefined,
    fields: {
      name: `${singular} name`,
      description: 'description',
      state: 'the state',
      categories: 'categories [{name, color, external_id}] (--data)',
      started_at_override: 'override the start time (null clears it)',
      completed_at_override: 'override the completion time (null clears it)',
      archived: 'archive (true) or restore (false)',
      before_id: `move before this ${singular}`,
      after_id: `move after this ${singular}`,
    },
    columns: ['id', 'name', 'state', 'archived', 'position'],
    verbs: ['list', 'get', 'create', 'update', 'delete'],
    extras: [
      {
        name: 'epics',
        description: `the epics of ${withArticle(singular)}`,
        method: 'GET',
        path: `/${name}/{id}/epics`,
        args: [arg()],
        result: 'list',
        columns: epicColumns,
      },
    ],
  });
}
export const objectives = objectiveSpec('objectives');
export const milestones = objectiveSpec('milestones');

export const projects = resource({
  name: 'projects',
  ref: 'project',
  singular: 'project',
  path: '/projects',
  fields: {
    name: 'project name',
    team_id: 'team id',
    abbreviation: 'short name (3 characters recommended)',
    color: COLOR_HELP,
    description: 'description',
    external_id: 'an id in another system',
    follower_ids: 'follower member ids',
    iteration_length: 'iteration length in weeks',
    start_time: 'start time',
    created_at: 'creation time',
    updated_at: 'update time',
    archived: 'archive (true) or restore (false)',
    days_to_thermometer: 'days to thermometer',
    show_thermometer: 'show the thermometer',
  },
  columns: ['id', 'name', 'abbreviation', 'archived', 'stats.num_stories'],
  verbs: ['list', 'get', 'create', 'update', 'delete'],
  extras: [
    {
      name: 'stories',
      description: 'the stories of a project',
      method: 'GET',
      path: '/projects/{id}/stories',
      args: [arg()],
      query: includesDescription,
      result: 'list',
      columns: storyColumns,
    },
  ],
  examples: { create: 'opsctl tracker projects create --name Backend --team-id 1 --abbreviation BE' },
});

export const repositories = resource({
  name: 'repositories',
  singular: 'repository',
  path: '/repositories',
  fields: {},
  columns: ['id', 'full_name', 'type', 'url'],
  verbs: ['list', 'get'],
});

const storyCommentColumns = ['id', 'author_id', 'parent_id', 'text', 'created_at'];
const storyArg = arg('id', 'story id');

/** Body fields a story can be created with (single, bulk and from a template). */
const storyFields: Helps = {
  name: 'story name',
  description: 'description',
  story_type: 'the kind of story',
  workflow_state_id: 'workflow state id (see: opsctl tracker workflows list; or use stories move --state NAME)',
  estimate: 'estimate in points (null clears it)',
  epic_id: 'epic id (null detaches)',
  iteration_id: 'iteration id (null detaches)',
  project_id: 'project id (null detaches)',
  group_id: 'group id (null detaches)',
  parent_story_id: 'make it a sub-task of this story (null detaches)',
  labels: 'labels [{name, color, …}]; created when missing (--data)',
  custom_fields: 'custom field values [{field_id, value_id}]; only enabled fields (--data)',
  owner_ids: 'owner member ids',
  follower_ids: 'follower member ids',
  requested_by_id: 'requesting member id',
  external_id: 'an id in another system (stories import matches on it)',
  external_links: 'external links (comma-separated URLs)',
  file_ids: 'uploaded file ids',
  linked_file_ids: 'linked file ids',
  deadline: 'deadline (null clears it)',
  started_at_override: 'override the start time (null clears it)',
  completed_at_override: 'override the completion time (null clears it)',
  move_to: 'move it to the top or bottom of its state',
  archived: 'archive (true) or restore (false)',
  tasks: 'checklist [{description, complete, owner_ids, external_id}] (--data)',
  story_links: 'links [{verb, subject_id | object_id}] to existing stories (--data)',
  story_template_id: 'the template it was made from',
  created_at: 'creation time (ISO 8601)',
  updated_at: 'update time (ISO 8601)',
};

const commentBodyStory: Helps = { ...commentBody, external_id: 'an id in another system' };
const storySearchBody: Helps = {
  archived: 'archived (true) or active (false) stories only',
  story_type: 'the kind of story',
  workflow_state_id: 'in this workflow state',
  workflow_state_types: 'in workflow states of these types',
  epic_id: 'in this epic',
  epic_ids: 'in any of these epics',
  iteration_id: 'in this iteration',
  iteration_ids: 'in any of these iterations',
  project_id: 'in this project',
  project_ids: 'in any of these projects',
  group_id: 'of this group',
  group_ids: 'of any of these groups',
  label_ids: 'with any of these labels',
  label_name: 'with this label name',
  owner_id: 'owned by this member',
  owner_ids: 'owned by any of these members',
  requested_by_id: 'requested by this member',
  external_id: 'with this external id',
  estimate: 'with this estimate',
  includes_description: 'include each description',
  created_at_start: 'created at or after',
  created_at_end: 'created at or before',
  updated_at_start: 'updated at or after',
  updated_at_end: 'updated at or before',
  completed_at_start: 'completed at or after',
  completed_at_end: 'completed at or before',
  deadline_start: 'deadline at or after',
  deadline_end: 'deadline at or before',
};
const bulkUpdateBody: Helps = {
  story_ids: 'the stories to change',
  archived: 'archive (true) or restore (false)',
  story_type: 'the kind of story',
  workflow_state_id: 'move them to this workflow state',
  epic_id: 'epic id (null detaches)',
  iteration_id: 'iteration id (null detaches)',
  project_id: 'project id (null detaches)',
  group_id: 'group id (null detaches)',
  estimate: 'estimate (null clears it)',
  requested_by_id: 'requesting member id',
  deadline: 'deadline (null clears it)',
  external_links: 'external links (replaces them)',
  owner_ids_add: 'owners to add',
  owner_ids_remove: 'owners to remove',
  follower_ids_add: 'followers to add',
  follower_ids_remove: 'followers to remove',
  labels_add: 'labels to add [{name, …}] (--data)',
  labels_remove: 'labels to remove [{name}] (--data)',
  custom_fields_add: 'custom field values to set (--data)',
  custom_fields_remove: 'custom field values to remove (--data)',
  move_to: 'move them to the top or bottom of their states',
  before_id: 'move before this story',
  after_id: 'move after this story',
};
const { name: _tplName, ...templateOverrides } = storyFields;

export const stories = resource({
  name: 'stories',
  singular: 'story',
  path: '/stories',
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
      body: { stories: 'the stories [{name, …}] (at most 100)' },
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
      body: { story_ids: 'the stories to delete' },
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
        name: "story name (default: the template's)",
        story_template_id: 'the template',
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
      args: [storyArg, arg('comment_id')],
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
      body: { ...commentBodyStory, parent_id: 'the comment replied to' },
      result: 'one',
      example: 'opsctl tracker stories reply 12 --parent-id 40 --text "Fixed"',
    },
    {
      name: 'comment-update',
      description: 'change the text of a story comment',
      method: 'PUT',
      path: '/stories/{id}/comments/{comment_id}',
      args: [storyArg, arg('comment_id')],
      body: { text: commentBody.text },
      result: 'one',
    },
    {
      name: 'comment-delete',
      description: 'delete a story comment',
      method: 'DELETE',
      path: '/stories/{id}/comments/{comment_id}',
      args: [storyArg, arg('comment_id')],
      result: 'none',
      confirm: true,
    },
    {
      name: 'comment-unlink-chat',
      description: 'unlink a story comment thread from its chat (Slack) thread: replies there no longer come back as comments',
      method: 'POST',
      path: '/stories/{id}/comments/{comment_id}/unlink-from-slack',
      args: [storyArg, arg('comment_id')],
      result: 'one',
      example: 'opsctl tracker stories comment-unlink-chat 12 34',
    },
    {
      name: 'react',
      description: 'add an emoji reaction to a story comment',
      method: 'POST',
      path: '/stories/{id}/comments/{comment_id}/reactions',
      args: [storyArg, arg('comment_id')],
      body: { emoji: 'the emoji, e.g. :+1:' },
      result: 'list',
      columns: ['emoji', 'permission_ids'],
    },
    {
      name: 'unreact',
      description: 'remove your emoji reaction from a story comment',
      method: 'DELETE',
      path: '/stories/{id}/comments/{comment_id}/reactions',
      args: [storyArg, arg('comment_id')],
      body: { emoji: 'the emoji, e.g. :+1:' },
      result: 'none',
    },
    {
      name: 'task-add',
      description: 'add a task (checklist item) to a story',
      method: 'POST',
      path: '/stories/{id}/tasks',
      args: [storyArg],
      body: {
        description: 'what to do',
        complete: 'already done',
        owner_ids: 'owner member ids',
        external_id: 'an id in another system',
      },
      result: 'one',
      example: 'opsctl tracker stories task-add 12 --description "Write the test"',
    },
    {
      name: 'task',
      description: 'show one task of a story',
      method: 'GET',
      path: '/stories/{id}/tasks/{task_id}',
      args: [storyArg, arg('task_id')],
      result: 'one',
    },
    {
      name: 'task-update',
      description: 'change a task',
      method: 'PUT',
      path: '/stories/{id}/tasks/{task_id}',
      args: [storyArg, arg('task_id')],
      body: {
        description: 'what to do',
        complete: 'done (true) or not (false)',
        owner_ids: 'owner member ids',
        before_id: 'move before this task',
        after_id: 'move after this task',
      },
      result: 'one',
    },
    {
      name: 'task-check',
      description: 'mark a task done',
      method: 'PUT',
      path: '/stories/{id}/tasks/{task_id}',
      args: [storyArg, arg('task_id')],
      fixedBody: { complete: true },
      result: 'one',
      example: 'opsctl tracker stories task-check 12 41',
    },
    {
      name: 'task-uncheck',
      description: 'mark a task not done',
      method: 'PUT',
      path: '/stories/{id}/tasks/{task_id}',
      args: [storyArg, arg('task_id')],
      fixedBody: { complete: false },
      result: 'one',
    },
    {
      name: 'task-delete',
      description: 'delete a task',
      method: 'DELETE',
      path: '/stories/{id}/tasks/{task_id}',
      args: [storyArg, arg('task_id')],
      result: 'none',
      confirm: true,
    },
    {
      name: 'by-link',
      description: 'the stories with an external link',
      method: 'GET',
      path: '/external-link/stories',
      query: { external_link: 'the external link' },
      result: 'list',
      columns: storyColumns,
    },
  ],
  examples: { create: 'opsctl tracker stories create --name "Fix login" --story-type bug --project-id 12' },
});

export const storyLinks = resource({
  name: 'story-links',
  singular: 'story link',
  path: '/story-links',
  description: 'story links: SUBJECT blocks | duplicates | relates to OBJECT',
  fields: {
    verb: 'how the subject relates to the object',
    subject_id: 'the story that blocks / duplicates / relates to',
    object_id: 'the story it is about',
  },
  columns: ['id', 'subject_id', 'verb', 'object_id'],
  verbs: ['get', 'create', 'update', 'delete'],
  examples: { create: 'opsctl tracker story-links create --subject-id 12 --verb blocks --object-id 13' },
});

export const workflows = resource({
  name: 'workflows',
  ref: 'workflow',
  singular: 'workflow',
  path: '/workflows',
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
      args: [arg()],
      result: 'list',
      columns: ['id', 'name', 'type', 'position', 'num_stories'],
      pick: 'states',
    },
  ],
});

const searchQuery: Helps = {
  query: 'search operators as in the web app',
  page_size: 'results per page (1-250, default 25)',
  detail: 'how much of each result (default: full)',
};
const searchVerb = (name: string, what: string, columns: string[]): ExtraInput => ({
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

export const search = resource({
  name: 'search',
  singular: 'search',
  path: '/search',
  fields: {},
  columns: [],
  verbs: [],
  extras: [
    {
      name: 'all',
      description: 'search epics, iterations, milestones and stories at once (one page of each)',
      method: 'GET',
      path: '/search',
      query: { ...searchQuery, entity_types: 'the kinds of record to search; default story and epic' },
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
        title: 'words of the title',
        archived: 'archived documents only (true) or active ones (false)',
        created_by_me: 'only documents you created',
        followed_by_me: 'only documents you follow',
        page_size: 'results per page (1-250, default 25)',
      },
      result: 'list',
      columns: ['id', 'title', 'app_url'],
      paging: { kind: 'next', max: 250 },
      example: 'opsctl tracker search documents --title runbook',
    },
  ],
});

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
