/**
 * Request bodies as the tracker mock reads them once `validate` (common.ts) has checked them against the
 * generated contract (packages/shared/src/tracker/contract.ts): each is the document's definition of that body,
 * as generated in packages/shared/src/tracker/types.ts (renames applied). Where one handler serves create and
 * update, its body is both definitions at once (`Either`): the create definition's required fields, and
 * `null` wherever either definition allows it. Nothing here is written by hand but `MoveParams`.
 */
import type * as T from '@opsctl/shared/tracker/types.js';

/** Create and update bodies of one handler: C's fields (null where U allows it), plus U's own fields. */
type Either<C, U> = { [K in keyof C]: C[K] | (K extends keyof U ? Exclude<U[K], undefined> : never) } & Omit<U, keyof C>;

export type LabelParam = T.CreateLabelParams;
export type CategoryParam = T.CreateCategoryParams;
export type CustomFieldParam = T.CustomFieldValueParams;
export type CustomFieldValueParam = T.UpdateCustomFieldEnumValue;
export type TaskParam = T.CreateTaskParams;
export type StoryLinkParam = T.CreateStoryLinkParams;

/** `before_id` / `after_id` of the bodies that move a record among its siblings (an int id, or a uuid for custom fields). */
export interface MoveParams {
  before_id?: number | string;
  after_id?: number | string;
}

export type LabelBody = Either<T.CreateLabelParams, T.UpdateLabel>;
export type CategoryBody = Either<T.CreateCategory, T.UpdateCategory>;
export type CustomFieldBody = T.UpdateCustomField;
export type DocumentBody = Either<T.CreateDoc, T.UpdateDoc>;
export type EntityTemplateBody = Either<T.CreateEntityTemplate, T.UpdateEntityTemplate>;
export type EpicBody = Either<T.CreateEpic, T.UpdateEpic>;
export type FileBody = T.UpdateFile;
export type LinkedFileBody = Either<T.CreateLinkedFile, T.UpdateLinkedFile>;
export type GroupBody = Either<T.CreateGroup, T.UpdateGroup>;
export type HealthBody = T.UpdateHealth;
export type WebhookBody = T.CreateGenericIntegration;
export type IterationBody = Either<T.CreateIteration, T.UpdateIteration>;
export type KeyResultBody = T.UpdateKeyResult;
export type ObjectiveBody = Either<T.CreateObjective, T.UpdateObjective>;
export type ProjectBody = Either<T.CreateProject, T.UpdateProject>;
export type StoryBody = Either<T.CreateStoryParams, T.UpdateStory>;
export type StoryLinkBody = Either<T.CreateStoryLink, T.UpdateStoryLink>;
/** An epic comment or reply (comment-add). */
export type CommentBody = T.CreateEpicComment;
/** A story comment: a reply when `parent_id` is given. */
export type StoryCommentBody = T.CreateStoryComment;
/** comment-update. */
export type TextBody = T.UpdateComment;
/** health-set. */
export type HealthSetBody = T.CreateEpicHealth;
/** react and unreact. */
export type EmojiBody = T.CreateOrDeleteStoryReaction;
export type TaskAddBody = T.CreateTask;
export type TaskUpdateBody = T.UpdateTask;
export type BulkCreateBody = T.CreateStories;
export type BulkUpdateBody = T.UpdateStories;
export type BulkDeleteBody = T.DeleteStories;
/** from-template: any story field overrides the template's; the name too, when given. */
export type FromTemplateBody = T.CreateStoryFromTemplateParams;
export type StorySearchBody = T.SearchStories;
