/**
 * The records the tracker mock keeps, one type per collection of its slice of the state, as the handlers
 * write them (the reference contract, openapi.json, types what goes on the wire; shape.ts bridges the two).
 * Times are ISO 8601 strings; member, group and custom-field ids are uuids, the rest integers unless noted.
 */

/** The fields every record made through the generic CRUD routes carries. */
interface Made<Id extends number | string = number> {
  id: Id;
  entity_type: string;
  app_url: string;
  created_at: string;
  updated_at: string;
}

interface Mentions {
  group_mention_ids: string[];
  member_mention_ids: string[];
  mention_ids: string[];
}

export interface Label extends Made {
  name: string;
  description: string | null;
  color: string | null;
  external_id: string | null;
  archived: boolean;
  global_id: string;
}

export interface Category extends Made {
  name: string;
  color: string | null;
  external_id: string | null;
  archived: boolean;
  type: string;
}

export interface CustomFieldValue {
  id: string;
  value: string;
  color_key: string | null;
  position?: number;
  enabled: boolean;
  entity_type: string;
}

export interface CustomField {
  id: string;
  name: string;
  description: string;
  canonical_name: string;
  enabled: boolean;
  entity_type: string;
  field_type: string;
  icon_set_identifier: string;
  position: number;
  created_at: string;
  updated_at: string;
  values: CustomFieldValue[];
}

export interface TrackerDocument extends Made<string> {
  title: string;
  content: string;
  archived?: boolean;
  epic_ids: number[];
  created_by: string;
  /** Never written by the mock (documents carry no labels); label stats count the ones that have it. */
  label_ids?: number[];
}

/** What a story made from a template gets: part of a story create body, as given (validate.ts's storyContents). */
export interface StoryContents {
  /** Sent back by clients that post a template they read; never kept. */
  entity_type?: string;
  name?: string;
  description?: string;
  story_type?: string;
  custom_fields?: Array<{ field_id: string; value_id: string; value?: string }>;
  deadline?: string | null;
  epic_id?: number | null;
  estimate?: number | null;
  external_links?: string[];
  file_ids?: number[];
  linked_file_ids?: number[];
  follower_ids?: string[];
  owner_ids?: string[];
  group_id?: string | null;
  iteration_id?: number | null;
  project_id?: number | null;
  workflow_state_id?: number | null;
  labels?: Array<{ name: string; color?: string; description?: string; external_id?: string }>;
  tasks?: Array<{ description: string; complete?: boolean; external_id?: string; owner_ids?: string[] }>;
}

export interface EntityTemplate extends Made<string> {
  name: string;
  author_id: string;
  last_used_at: string;
  story_contents: StoryContents;
}

export interface Epic extends Made, Mentions {
  name: string;
  description: string;
  archived: boolean;
  epic_state_id: number;
  external_id: string | null;
  owner_ids: string[];
  follower_ids: string[];
  requested_by_id: string;
  label_ids: number[];
  objective_ids: number[];
  milestone_id: number | null;
  group_ids: string[];
  group_id: string | null;
  deadline: string | null;
  planned_start_date: string | null;
  started_at: string | null;
  completed_at: string | null;
  started_at_override: string | null;
  completed_at_override: string | null;
  converted_from_story_id: number | null;
  position: number;
  planningtool_id: string | null;
  planningtool_name: string | null;
  planningtool_plugin_id: string | null;
  planningtool_url: string | null;
  /** Never written by the mock; dropped from answers should an imported state carry it. */
  num_points?: number;
  /** Computed on the way out (presentEpic) from the epic's workflow state, never stored. */
  started?: boolean;
  completed?: boolean;
}

/** What an epic's and a story's comments share. */
interface CommentBase extends Mentions {
  id: number;
  parent_id: number | null;
  app_url: string;
  author_id: string;
  text: string;
  external_id: string | null;
  deleted: boolean;
  entity_type: string;
  created_at: string;
  updated_at: string;
}

export interface EpicComment extends CommentBase {
  epic_id: number;
}

/** An epic's health record. */
export interface Health {
  id: string;
  author_id: string;
  epic_id: number;
  objective_id: number | null;
  status: string;
  text: string | null;
  entity_type: string;
  created_at: string;
  updated_at: string;
}

/** The health of an epic that has none recorded: no id, author or times. */
export interface NoHealth {
  id: null;
  author_id: null;
  epic_id: number;
  objective_id: null;
  status: 'No Health';
  text: null;
  entity_type: string;
  created_at: null;
  updated_at: null;
}

export interface TrackerFile extends Mentions {
  id: number;
  name: string;
  filename: string;
  description: string | null;
  content_type: string;
  external_id: string | null;
  size: number;
  story_ids: number[];
  thumbnail_url: string | null;
  url: string;
  uploader_id: string;
  entity_type: string;
  created_at: string;
  updated_at: string;
}

export interface LinkedFile extends Made, Mentions {
  name: string;
  url: string;
  type: string;
  description: string | null;
  content_type: string | null;
  size: number | null;
  thumbnail_url: string | null;
  uploader_id: string;
  story_ids: number[];
  /** The create body's story, attached (and removed) in the same transaction. */
  pending_story_id?: number;
}

export interface Group extends Made<string> {
  name: string;
  mention_name: string;
  description: string;
  archived: boolean;
  color: string | null;
  color_key: string | null;
  display_icon_id: string | null;
  member_ids: string[];
  workflow_ids: number[];
  default_workflow_id: number | null;
}

export interface Webhook extends Made {
  webhook_url: string;
  secret: string | null;
}

export interface Iteration extends Made, Mentions {
  name: string;
  description: string;
  start_date: string;
  end_date: string;
  follower_ids: string[];
  group_ids: string[];
  label_ids: number[];
}

/** A key result's value: `numeric_value` (a decimal string) or `boolean_value`. */
export interface ObservedValue {
  numeric_value?: string;
  boolean_value?: boolean;
}

export interface KeyResult {
  id: string;
  name: string;
  objective_id: number | null;
  progress: number;
  type: string;
  initial_observed_value: ObservedValue;
  current_observed_value: ObservedValue;
  current_target_value: ObservedValue;
  entity_type: string;
  updated_at?: string;
}

export interface Profile {
  id: string;
  name: string;
  mention_name: string;
  email_address: string;
  avatar_hash: string | null;
  deactivated: boolean;
  is_owner: boolean;
  two_factor_auth_activated: boolean;
  display_icon: null;
  entity_type: string;
}

export interface Member {
  id: string;
  created_at: string;
  updated_at: string;
  disabled: boolean;
  entity_type: string;
  group_ids: string[];
  role: string;
  state: string;
  profile: Profile;
}

export interface Objective extends Made {
  name: string;
  description: string;
  archived: boolean;
  state: string;
  category_ids: number[];
  started_at: string | null;
  completed_at: string | null;
  started_at_override: string | null;
  completed_at_override: string | null;
  position: number;
}

export interface Project extends Made {
  name: string;
  team_id: number;
  abbreviation: string | null;
  color: string | null;
  description: string;
  external_id: string | null;
  follower_ids: string[];
  iteration_length: number;
  start_time: string | null;
  archived: boolean;
  days_to_thermometer: number;
  show_thermometer: boolean;
  workflow_id: number;
}

export interface Repository {
  id: number;
  name: string;
  full_name: string;
  external_id: string;
  type: string;
  url: string;
  entity_type: string;
  created_at: string;
  updated_at: string;
}

export interface StoryCustomField {
  field_id: string;
  value_id: string;
  value: string;
}

export interface Story extends Made, Mentions {
  name: string;
  description: string;
  story_type: string;
  archived: boolean;
  workflow_id: number;
  workflow_state_id: number;
  estimate: number | null;
  epic_id: number | null;
  iteration_id: number | null;
  project_id: number | null;
  group_id: string | null;
  label_ids: number[];
  owner_ids: string[];
  follower_ids: string[];
  requested_by_id: string;
  external_id: string | null;
  external_links: string[];
  file_ids: number[];
  linked_file_ids: number[];
  deadline: string | null;
  custom_fields: StoryCustomField[];
  previous_iteration_ids: number[];
  position: number;
  moved_at: string;
  started_at: string | null;
  completed_at: string | null;
  started_at_override: string | null;
  completed_at_override: string | null;
  cycle_time: number | null;
  lead_time: number | null;
  story_template_id: string | null;
  parent_story_id: number | null;
  /** Computed on the way out; never stored by the mock, dropped should an imported state carry them. */
  comment_ids?: number[];
  task_ids?: number[];
  num_tasks_completed?: number;
}

export interface Reaction {
  emoji: string;
  permission_ids: string[];
}

export interface StoryComment extends CommentBase {
  story_id: number;
  linked_to_slack: boolean;
  blocker: boolean;
  unblocks_parent: boolean;
  position: number;
  reactions: Reaction[];
}

export interface Task extends Mentions {
  id: number;
  story_id: number;
  description: string;
  complete: boolean;
  completed_at: string | null;
  owner_ids: string[];
  external_id: string | null;
  position: number;
  entity_type: string;
  created_at: string;
  updated_at: string;
}

export interface StoryLink {
  id: number;
  entity_type: string;
  verb: string;
  subject_id: number;
  object_id: number;
  created_at: string;
  updated_at: string;
}

export type StoryChanges = Record<string, { old: unknown; new: unknown }>;

export interface HistoryAction {
  id: number;
  entity_type: string;
  action: 'create' | 'update' | 'delete';
  name: string;
  story_type: string;
  app_url?: string;
  changes?: StoryChanges;
}

export interface StoryHistory {
  id: string;
  story_id: number;
  changed_at: string;
  version: string;
  primary_id: number;
  member_id: string;
  actions: HistoryAction[];
  references: unknown[];
}

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
