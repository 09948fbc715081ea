/**
 * The records the tracker mock keeps, one type per collection of its slice of the state. Each is derived
 * from the record's wire type, generated from the reference contract (openapi.json → @opsctl/shared/tracker/types.ts),
 * so a change of the document's record shapes changes these types and `tsc` catches a handler that writes a
 * field the document lacks or the wrong type. `Stored` names the deviations: the wire fields the mock computes
 * on the way out (never stored) and the store's own fields (each with why); shape.ts bridges store → wire.
 * Times are ISO 8601 strings; member, group and custom-field ids are uuids, the rest integers unless noted.
 * test/unit/tracker-records.test.ts fails when a record declares a field its wire type lacks, unlisted.
 */
import type * as T from '@opsctl/shared/tracker/types.js';

/**
 * A record as the store keeps it: the wire type `Wire` without the fields the mock `Computed`s on the way
 * out, with `Own` replacing or adding fields (bookkeeping the contract lacks, or `null` stored where the
 * wire omits the field: shape.ts's OMIT_WHEN_NULL). Anything else is the wire's field, as the wire types it.
 */
export type Stored<Wire, Computed extends keyof Wire = never, Own extends object = Record<never, never>> = Omit<Wire, Computed | keyof Own> & Own;

/** The story types the document's create and update bodies (and its history actions) allow; Story types it as any string. */
export type StoryType = NonNullable<T.CreateStoryParams['story_type']>;

/** crud.ts stamps every record it makes with an `app_url`; these wire types have none (dropped on the way out: shape.ts DROP, or the resource's present). */
interface AppUrl {
  app_url: string;
}

// stats: presentLabel counts the label's stories and epics
export type Label = Stored<T.Label, 'stats'>;

export type Category = Stored<T.Category, 'global_id', AppUrl>;

export type CustomFieldValue = T.CustomFieldEnumValue;

export type CustomField = Stored<
  T.CustomField,
  never,
  {
    // the mock keeps the list even when empty (the wire may omit it)
    values: CustomFieldValue[];
  }
>;

export type TrackerDocument = Stored<
  T.Doc,
  // the document's markdown is stored as `content` (the create body's name) and answered as content_markdown; no HTML
  'content_markdown' | 'content_html',
  {
    content: string;
    // crud.ts's stamp; documents.ts answers only the Doc fields
    entity_type: string;
    // the epics the document is linked to (GET /documents/{id}/epics)
    epic_ids: number[];
    created_by: string;
    /** Never written by the mock (documents carry no labels); label stats count the ones that have it. */
    label_ids?: number[];
  }
>;

/**
 * What a story made from a template gets: the create body's story contents, as given (the wire's
 * StoryContents, with labels, files and linked files resolved, is what presentContents answers).
 */
export type StoryContents = Stored<
  T.CreateStoryContents,
  never,
  {
    // the update body (UpdateStoryContents) unsets it with null, merged over the stored contents
    project_id?: number | null;
    /** Sent back by clients that post a template they read; never kept. */
    entity_type?: string;
  }
>;

// story_contents: stored as the body gave it (presentContents answers the wire's StoryContents)
export type EntityTemplate = Stored<T.EntityTemplate, 'story_contents', AppUrl & { story_contents: StoryContents }>;

export type Epic = Stored<
  T.Epic,
  // presentEpic computes these from the workflow state, labels, stories, comments and health (global_id: shape.ts)
  | 'labels'
  | 'associated_groups'
  | 'project_ids'
  | 'stories_without_projects'
  | 'comments'
  | 'state'
  | 'health'
  | 'stats'
  | 'started'
  | 'completed'
  | 'global_id',
  {
    // the story an epic was converted from (stories convert-to-epic); shape.ts drops it, the wire has none
    converted_from_story_id: number | null;
    /** Never written by the mock; dropped from answers should an imported state carry it. */
    num_points?: number;
  }
>;

export type EpicComment = Stored<
  T.ThreadedComment,
  // replies are answered nested under their parent; the store keeps them flat
  'comments',
  {
    // which epic and which parent comment (null: top level) a comment belongs to, for the nesting
    epic_id: number;
    parent_id: number | null;
  }
>;

/** An epic's health record. */
export type Health = Stored<
  T.Health,
  never,
  {
    // a recorded health always has an id (the wire's null is the placeholder's, NoHealth)
    id: string;
    // null where the wire omits the field (shape.ts OMIT_WHEN_NULL)
    objective_id: number | null;
    text: string | null;
  }
>;

/** The health of an epic that has none recorded: no id, author or times (null where the wire omits them: shape.ts OMIT_WHEN_NULL). */
export type NoHealth = Stored<
  T.Health,
  never,
  {
    id: null;
    author_id: null;
    epic_id: number;
    objective_id: null;
    status: 'No Health';
    text: null;
    created_at: null;
    updated_at: null;
  }
>;

export type TrackerFile = T.UploadedFile;

export type LinkedFile = Stored<
  T.LinkedFile,
  never,
  AppUrl & {
    /** The create body's story, attached (and removed) in the same transaction. */
    pending_story_id?: number;
  }
>;

export type Group = Stored<
  T.Group,
  // presentGroup counts the stories and epics and resolves the icon (global_id: shape.ts)
  'num_stories' | 'num_stories_started' | 'num_stories_backlog' | 'num_epics_started' | 'display_icon' | 'global_id',
  {
    // the create/update body's icon id; presentGroup answers display_icon
    display_icon_id: string | null;
  }
>;

/** The document types no webhook record (only CreateGenericIntegration, the body): a hand type. */
export interface Webhook {
  id: number;
  entity_type: string;
  app_url: string;
  created_at: string;
  updated_at: string;
  webhook_url: string;
  secret: string | null;
}

export type Iteration = Stored<
  T.Iteration,
  // presentIteration computes these from the dates, labels and stories (global_id: shape.ts)
  'labels' | 'associated_groups' | 'status' | 'stats' | 'global_id'
>;

/** A key result's value: `numeric_value` (a decimal string) or `boolean_value`. */
export type ObservedValue = T.KeyResultValue;

export type KeyResult = Stored<
  T.KeyResult,
  never,
  {
    // shape.ts recognises records by entity_type, then drops it (the wire KeyResult has none)
    entity_type: string;
    // stamped by crud.ts on update; the key results' present drops it
    updated_at?: string;
  }
>;

export type Profile = T.Profile;

// created_without_invite: shape.ts's ALWAYS; global_id: shape.ts
export type Member = Stored<T.Member, 'created_without_invite' | 'global_id'>;

export type Objective = Stored<
  T.Objective,
  // presentObjective computes these from the state, categories, key results and epics (global_id: shape.ts)
  'started' | 'completed' | 'categories' | 'key_result_ids' | 'stats' | 'global_id',
  {
    // the categories by id; presentObjective answers them as records
    category_ids: number[];
  }
>;

export type Project = Stored<
  T.Project,
  // stats: computed by presentProject; global_id: shape.ts
  'stats' | 'global_id',
  {
    // null where the wire omits the field (shape.ts OMIT_WHEN_NULL)
    start_time: string | null;
  }
>;

export type Repository = Stored<
  T.Repository,
  never,
  {
    // the seeded repositories all have one (the wire allows null); crud.ts finds records by id
    id: number;
  }
>;

export type StoryCustomField = T.StoryCustomField;

export type Story = Stored<
  T.Story,
  // presentStory computes these from the workflow state, links, labels, comments, tasks and files (global_id: shape.ts)
  | 'started'
  | 'completed'
  | 'blocked'
  | 'blocker'
  | 'story_links'
  | 'labels'
  | 'comments'
  | 'tasks'
  | 'files'
  | 'linked_files'
  | 'branches'
  | 'commits'
  | 'pull_requests'
  | 'sub_task_story_ids'
  | 'stats'
  | 'synced_item'
  | 'formatted_vcs_branch_name'
  | 'global_id',
  {
    // the create and update bodies' enum (history actions type it so too)
    story_type: StoryType;
    // the mock keeps the list even when empty (the wire may omit it)
    custom_fields: StoryCustomField[];
    // the files by id (the bodies' names); the full story answers them as records, StorySlim as these ids
    file_ids: number[];
    linked_file_ids: number[];
    // null where the wire omits the field (shape.ts OMIT_WHEN_NULL)
    cycle_time: number | null;
    lead_time: number | null;
    parent_story_id: number | null;
    /** Computed on the way out (StorySlim); never stored by the mock, dropped should an imported state carry them. */
    comment_ids?: number[];
    task_ids?: number[];
    num_tasks_completed?: number;
  }
>;

export type Reaction = T.StoryReaction;

export type StoryComment = T.StoryComment;

// global_id: shape.ts
export type Task = Stored<T.Task, 'global_id'>;

// subject_workflow_state_id: presentLink reads it from the subject story
export type StoryLink = Stored<T.StoryLink, 'subject_workflow_state_id'>;

/**
 * What a story update changed: the document's field names (HistoryChangesStory), each `{old, new}` as the
 * mock records them, `null` included where the wire's change types omit the side (e.g. an epic_id set from none).
 */
export type StoryChanges = { [K in keyof T.HistoryChangesStory]?: { old: unknown; new: unknown } };

/** The history actions the mock records: a story's create, update and delete (the document types each kind). */
export type HistoryAction =
  | T.HistoryActionStoryCreate
  // changes: see StoryChanges
  | Stored<T.HistoryActionStoryUpdate, never, { changes?: StoryChanges }>
  | T.HistoryActionStoryDelete;

export type StoryHistory = Stored<
  T.History,
  never,
  {
    // which story the entry is about (GET /stories/{id}/history); dropped from the answer
    story_id: number;
    // the mock records story actions only
    actions: HistoryAction[];
  }
>;

/** The tracker's slice of the mock state. */
export interface TrackerState {
  token: string;
  seq: number;
  workspaceId: string;
  /** The seeded workspace owner: the member the token belongs to. */
  ownerId: string;
  features: { documents: boolean; story_templates: boolean; iterations: boolean };
  entitlements: { groups: number; objectives: number };
  labels: Label[];
  categories: Category[];
  customFields: CustomField[];
  documents: TrackerDocument[];
  entityTemplates: EntityTemplate[];
  epics: Epic[];
  epicComments: EpicComment[];
  health: Health[];
  files: TrackerFile[];
  linkedFiles: LinkedFile[];
  groups: Group[];
  webhooks: Webhook[];
  iterations: Iteration[];
  keyResults: KeyResult[];
  members: Member[];
  objectives: Objective[];
  projects: Project[];
  repositories: Repository[];
  stories: Story[];
  storyComments: StoryComment[];
  tasks: Task[];
  storyLinks: StoryLink[];
  storyHistory: StoryHistory[];
}
