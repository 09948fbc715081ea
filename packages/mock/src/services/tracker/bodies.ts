/**
 * Request bodies as the tracker mock reads them once `validate` (common.ts) has checked them against the
 * resource table (src/tracker/resources.ts): each type spells out the fields of one table entry, with
 * the fields it requires on create required here, `null` where the table says nullable, and the nested
 * `json` fields as validate.ts's schemas shape them. Update bodies are the `Partial` of these.
 */
import type { ObservedValue, StoryContents } from './records.js';

/** labelParams: a label by name, made when missing. */
export interface LabelParam {
  name: string;
  color?: string;
  description?: string;
  external_id?: string;
}

/** categoryParams: a category by name, made when missing. */
export interface CategoryParam {
  name: string;
  color?: string;
  external_id?: string;
}

/** storyCustomFields. */
export interface CustomFieldParam {
  field_id: string;
  value_id: string;
  value?: string;
}

/** customFieldValues: an existing value by id, or a new one by its text. */
export interface CustomFieldValueParam {
  id?: string;
  value?: string;
  color_key?: string | null;
  enabled?: boolean;
}

/** storyTasks. */
export interface TaskParam {
  description: string;
  complete?: boolean;
  external_id?: string;
  owner_ids?: string[];
  created_at?: string;
  updated_at?: string;
}

/** storyLinkParams: the other end defaults to the new story. */
export interface StoryLinkParam {
  verb: string;
  subject_id?: number;
  object_id?: number;
}

/** `before_id` / `after_id` of the bodies that move a record among its siblings. */
export interface MoveParams {
  before_id?: number | string;
  after_id?: number | string;
}

export interface LabelBody {
  name: string;
  description?: string;
  color?: string | null;
  external_id?: string;
  archived?: boolean;
}

export interface CategoryBody {
  name: string;
  color?: string | null;
  external_id?: string;
  archived?: boolean;
}

export interface CustomFieldBody {
  name?: string;
  description?: string;
  enabled?: boolean;
  icon_set_identifier?: string;
  before_id?: string;
  after_id?: string;
  values?: CustomFieldValueParam[];
}

export interface DocumentBody {
  title: string;
  content: string;
}

export interface EntityTemplateBody {
  name: string;
  author_id?: string;
  story_contents: StoryContents;
}

export interface EpicBody {
  name: string;
  description?: string;
  epic_state_id?: number;
  state?: string;
  external_id?: string;
  owner_ids?: string[];
  follower_ids?: string[];
  group_ids?: string[];
  group_id?: string | null;
  objective_ids?: number[];
  milestone_id?: number | null;
  labels?: LabelParam[];
  requested_by_id?: string;
  deadline?: string | null;
  planned_start_date?: string | null;
  started_at_override?: string | null;
  completed_at_override?: string | null;
  converted_from_story_id?: number | null;
  created_at?: string;
  updated_at?: string;
  archived?: boolean;
  before_id?: number;
  after_id?: number;
}

export interface FileBody {
  name?: string;
  description?: string;
  external_id?: string;
  uploader_id?: string;
  created_at?: string;
  updated_at?: string;
}

export interface LinkedFileBody {
  name: string;
  url: string;
  type: string;
  description?: string;
  content_type?: string;
  size?: number;
  story_id?: number;
  thumbnail_url?: string;
  uploader_id?: string;
}

export interface GroupBody {
  name: string;
  mention_name: string;
  description?: string;
  color?: string | null;
  color_key?: string;
  display_icon_id?: string | null;
  member_ids?: string[];
  workflow_ids?: number[];
  archived?: boolean | null;
  default_workflow_id?: number | null;
}

export interface HealthBody {
  status?: string;
  text?: string;
}

export interface WebhookBody {
  webhook_url: string;
  secret?: string;
}

export interface IterationBody {
  name: string;
  start_date: string;
  end_date: string;
  description?: string;
  follower_ids?: string[];
  group_ids?: string[];
  labels?: LabelParam[];
}

export interface KeyResultBody {
  name?: string;
  initial_observed_value?: ObservedValue;
  observed_value?: ObservedValue;
  target_value?: ObservedValue;
}

export interface ObjectiveBody {
  name: string;
  description?: string;
  state?: string;
  categories?: CategoryParam[];
  started_at_override?: string | null;
  completed_at_override?: string | null;
  archived?: boolean;
  before_id?: number;
  after_id?: number;
}

export interface ProjectBody {
  name: string;
  team_id: number;
  abbreviation?: string;
  color?: string | null;
  description?: string;
  external_id?: string;
  follower_ids?: string[];
  iteration_length?: number;
  start_time?: string;
  created_at?: string;
  updated_at?: string;
  archived?: boolean;
  days_to_thermometer?: number;
  show_thermometer?: boolean;
}

export interface StoryBody {
  name: string;
  description?: string;
  story_type?: string;
  workflow_state_id?: number;
  estimate?: number | null;
  epic_id?: number | null;
  iteration_id?: number | null;
  project_id?: number | null;
  group_id?: string | null;
  parent_story_id?: number | null;
  labels?: LabelParam[];
  custom_fields?: CustomFieldParam[];
  owner_ids?: string[];
  follower_ids?: string[];
  requested_by_id?: string;
  external_id?: string;
  external_links?: string[];
  file_ids?: number[];
  linked_file_ids?: number[];
  deadline?: string | null;
  started_at_override?: string | null;
  completed_at_override?: string | null;
  move_to?: 'first' | 'last';
  archived?: boolean;
  tasks?: TaskParam[];
  story_links?: StoryLinkParam[];
  story_template_id?: string;
  created_at?: string;
  updated_at?: string;
  /** Comments the new story starts with (CreateStoryCommentParams). */
  comments?: StoryCommentBody[];
  /** Sub-tasks: an existing story linked by id, or a new one made from a name. */
  sub_tasks?: Array<{ story_id: number } | { name: string; owner_ids?: string[]; workflow_state_id?: number }>;
  /** The task this story was converted from (accepted; the mock keeps no record of conversions). */
  source_task_id?: number;
  /** Update: move before or after another story (its id). */
  before_id?: number;
  after_id?: number;
  /** Update: version-control links (accepted; the mock has no repositories to link). */
  branch_ids?: number[];
  commit_ids?: number[];
  pull_request_ids?: number[];
}

export interface StoryLinkBody {
  verb: string;
  subject_id: number;
  object_id: number;
}

/** An epic comment or reply (comment-add). */
export interface CommentBody {
  text: string;
  author_id?: string;
  external_id?: string;
  created_at?: string;
  updated_at?: string;
}

/** A story comment: a reply when `parent_id` is given. */
export interface StoryCommentBody extends CommentBody {
  parent_id?: number | null;
}

/** comment-update. */
export interface TextBody {
  text: string;
}

/** health-set. */
export interface HealthSetBody {
  status: string;
  text?: string;
}

/** react and unreact. */
export interface EmojiBody {
  emoji: string;
}

export interface TaskAddBody {
  description: string;
  created_at?: string;
  updated_at?: string;
  complete?: boolean;
  owner_ids?: string[];
  external_id?: string;
}

export interface TaskUpdateBody {
  description?: string;
  complete?: boolean;
  owner_ids?: string[];
  before_id?: number;
  after_id?: number;
}

/** bulk-create: the envelope; each story is validated on its own. */
export interface BulkCreateBody {
  stories: unknown[];
}

export interface BulkUpdateBody {
  story_ids: number[];
  archived?: boolean;
  story_type?: string;
  workflow_state_id?: number;
  epic_id?: number | null;
  iteration_id?: number | null;
  project_id?: number | null;
  group_id?: string | null;
  estimate?: number | null;
  requested_by_id?: string;
  deadline?: string | null;
  external_links?: string[];
  owner_ids_add?: string[];
  owner_ids_remove?: string[];
  follower_ids_add?: string[];
  follower_ids_remove?: string[];
  labels_add?: LabelParam[];
  labels_remove?: LabelParam[];
  custom_fields_add?: CustomFieldParam[];
  custom_fields_remove?: CustomFieldParam[];
  move_to?: 'first' | 'last';
  before_id?: number;
  after_id?: number;
}

export interface BulkDeleteBody {
  story_ids: number[];
}

/** from-template: any story field overrides the template's; the name too, when given. */
export interface FromTemplateBody extends Partial<StoryBody> {
  story_template_id: string;
  /** Added to, or removed from, what the template gives (CreateStoryFromTemplateParams' *_add / *_remove). */
  external_links_add?: string[];
  external_links_remove?: string[];
  file_ids_add?: number[];
  file_ids_remove?: number[];
  linked_file_ids_add?: number[];
  linked_file_ids_remove?: number[];
  follower_ids_add?: string[];
  follower_ids_remove?: string[];
  owner_ids_add?: string[];
  owner_ids_remove?: string[];
  labels_add?: LabelParam[];
  labels_remove?: Array<{ name: string }>;
  custom_fields_add?: CustomFieldParam[];
  custom_fields_remove?: Array<{ field_id: string }>;
}

export interface StorySearchBody {
  archived?: boolean;
  story_type?: string;
  workflow_state_id?: number;
  workflow_state_types?: string[];
  epic_id?: number | null;
  epic_ids?: number[];
  iteration_id?: number | null;
  iteration_ids?: number[];
  project_id?: number | null;
  project_ids?: number[];
  group_id?: string | null;
  group_ids?: string[];
  label_ids?: number[];
  label_name?: string;
  owner_id?: string | null;
  owner_ids?: string[];
  requested_by_id?: string;
  external_id?: string;
  estimate?: number;
  includes_description?: boolean;
  created_at_start?: string;
  created_at_end?: string;
  updated_at_start?: string;
  updated_at_end?: string;
  completed_at_start?: string;
  completed_at_end?: string;
  deadline_start?: string;
  deadline_end?: string;
}
