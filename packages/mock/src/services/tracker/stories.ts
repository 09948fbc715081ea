import { randomUUID } from 'node:crypto';
import { stories as spec } from '@opsctl/shared/tracker/resources/stories.js';
import { MockError, reply, type MockRequest } from '../../http.js';
import type { Route, ServiceContext } from '../../service.js';
import { API, APP_URL, assign, boolQuery, ensureLabels, find, intParam, move, nextId, nowIso, tracker, unprocessable, type TrackerState } from './common.js';
import type { CustomFieldParam, StoryBody, StoryCommentBody, TaskParam } from './bodies.js';
import { crudRoutes } from './crud.js';
import type { HistoryAction, Label, LinkedFile, Story, StoryChanges, StoryComment, StoryCustomField, StoryLink, Task, TrackerFile } from './records.js';
import { phase } from './stats.js';
import { commentCount, commentsOf, findLink, firstPosition, lastPosition, linksOf, subTasksOf, tasksOf } from './story-index.js';
import { byId } from '../../indexes.js';
import { DEFAULT_STORY_STATE, STORY_STATES, STORY_WORKFLOW_ID } from './state.js';

const SIMPLE = [
  'name',
  'description',
  'story_type',
  'estimate',
  'owner_ids',
  'follower_ids',
  'requested_by_id',
  'external_links',
  'deadline',
  'archived',
  'file_ids',
  'linked_file_ids',
  'started_at_override',
  'completed_at_override',
  'parent_story_id',
] as const;

/** A story link as the API shows it: with the workflow state of its subject. */
export interface LinkView extends StoryLink {
  subject_workflow_state_id: number;
}

/** A story link as a story lists it (TypedStoryLink). */
interface TypedLink extends LinkView {
  type: 'subject' | 'object';
}

/** A story as the API shows it; which of the optional parts it has depends on slim or full (presentStory). */
export interface StoryView extends Omit<Story, 'description' | 'file_ids' | 'linked_file_ids' | 'comment_ids' | 'task_ids' | 'num_tasks_completed'> {
  description?: string;
  file_ids?: number[];
  linked_file_ids?: number[];
  labels: Label[];
  started: boolean;
  completed: boolean;
  blocked: boolean;
  blocker: boolean;
  story_links: TypedLink[];
  sub_task_story_ids: number[];
  stats: { num_related_documents: number };
  comments?: StoryComment[];
  tasks?: Task[];
  files?: TrackerFile[];
  linked_files?: LinkedFile[];
  branches?: never[];
  commits?: never[];
  pull_requests?: never[];
  comment_ids?: number[];
  task_ids?: number[];
  num_tasks_completed?: number;
}

/** A story before it has an id (makeStory). */
export type NewStory = Omit<Story, 'id' | 'entity_type' | 'app_url'>;

/** A story's links as TypedStoryLink: `type` says whether the story is the link's subject or object. */
function typedLinks(t: TrackerState, s: Story): TypedLink[] {
  return linksOf(t, s.id).map((l) => ({ ...presentLink(t, l), type: l.subject_id === s.id ? 'subject' : 'object' }));
}

export function presentLink(t: TrackerState, l: StoryLink): LinkView {
  const subject = byId(t.stories, l.subject_id);
  return { ...l, subject_workflow_state_id: subject?.workflow_state_id ?? DEFAULT_STORY_STATE };
}

/**
 * A story as the API shows it: StorySlim in lists (ids of its comments, tasks and files), the full Story
 * from single-story reads and writes (the comments, tasks and files themselves). The state flags, the
 * blocked/blocker flags and sub-tasks are computed from the store.
 */
export function presentStory(t: TrackerState, s: Story, includeDescription = true, full = false): StoryView {
  const ph = phase(s);
  const links = typedLinks(t, s);
  const tasks = tasksOf(t, s.id).sort((a, b) => a.position - b.position);
  const comments = commentsOf(t, s.id);
  const { comment_ids: _c, task_ids: _t, num_tasks_completed: _n, ...rest } = s;
  const out: StoryView = {
    ...rest,
    labels: s.label_ids
      .map((id) => byId(t.labels, id))
      .filter((l) => l !== undefined)
      .map((l) => ({ ...l })),
    started: ph === 'started' || ph === 'done',
    completed: ph === 'done',
    // blocked: another story blocks this one and is not done; blocker: this one blocks an unfinished story
    blocked: links.some((l) => l.verb === 'blocks' && l.type === 'object' && phase(byId(t.stories, l.subject_id) ?? {}) !== 'done'),
    blocker: links.some((l) => l.verb === 'blocks' && l.type === 'subject' && ph !== 'done'),
    story_links: links,
    sub_task_story_ids: subTasksOf(t, s.id).map((x) => x.id),
    stats: { num_related_documents: 0 },
  };
  if (full) {
    out.comments = comments.map((c) => presentStoryComment(c));
    out.tasks = tasks.map((k) => ({ ...k }));
    out.files = t.files.filter((f) => s.file_ids.includes(f.id)).map((f) => ({ ...f }));
    out.linked_files = t.linkedFiles.filter((f) => s.linked_file_ids.includes(f.id)).map((f) => ({ ...f }));
    out.branches = [];
    out.commits = [];
    out.pull_requests = [];
    delete out.file_ids;
    delete out.linked_file_ids;
  } else {
    out.comment_ids = comments.map((c) => c.id);
    out.task_ids = tasks.map((k) => k.id);
    out.num_tasks_completed = tasks.filter((k) => k.complete).length;
  }
  if (!includeDescription) delete out.description;
  return out;
}

/** A story comment; replies are comments with a `parent_id`, listed flat as the reference does. */
export function presentStoryComment(c: StoryComment): StoryComment {
  return { ...c, reactions: (c.reactions ?? []).map((r) => ({ emoji: r.emoji, permission_ids: [...r.permission_ids] })) };
}

/** Stories matching `pred`, presented, honouring `includes_description`. */
export function storyList(t: TrackerState, req: MockRequest, pred: (s: Story) => boolean): StoryView[] {
  const withDescription = boolQuery(req, 'includes_description') ?? false;
  return t.stories.filter(pred).map((s) => presentStory(t, s, withDescription));
}

/** Checks that the records a story body points at exist (422 naming the field otherwise). */
export function checkStoryRefs(t: TrackerState, body: Partial<StoryBody>, self?: number): void {
  const refs = [
    ['epic_id', 'epics'],
    ['iteration_id', 'iterations'],
    ['project_id', 'projects'],
    ['group_id', 'groups'],
    ['parent_story_id', 'stories'],
  ] as const;
  for (const [field, coll] of refs) {
    const v = body[field];
    const records: ReadonlyArray<{ id: number | string }> = t[coll];
    if (v !== undefined && v !== null && !byId(records, v))
      throw unprocessable(`${field}: ${coll === 'stories' ? 'story' : coll.slice(0, -1)} ${v} does not exist`, field);
  }
  if (self !== undefined && body.parent_story_id === self) throw unprocessable('parent_story_id: a story cannot be its own parent', 'parent_story_id');
  if (body.workflow_state_id !== undefined && !STORY_STATES.some((s) => s.id === body.workflow_state_id)) {
    throw unprocessable(
      `workflow_state_id: ${body.workflow_state_id} is not a state of the workflow (${STORY_STATES.map((s) => `${s.id} ${s.name}`).join(', ')})`,
      'workflow_state_id',
    );
  }
  for (const field of ['file_ids', 'linked_file_ids'] as const) {
    const coll = field === 'file_ids' ? 'files' : 'linkedFiles';
    const records: ReadonlyArray<{ id: number }> = t[coll];
    for (const id of body[field] ?? []) if (!byId(records, id)) throw unprocessable(`${field}: ${id} does not exist`, field);
  }
}

/**
 * A story's custom field values: each names a field of the workspace and one of its values, and only
 * enabled fields can be applied to stories (the seed's rule); anything else is unprocessable.
 */
export function customValues(t: TrackerState, items: readonly CustomFieldParam[]): StoryCustomField[] {
  const seen = new Set<string>();
  return items.map(({ field_id, value_id }) => {
    const field = t.customFields.find((f) => f.id === field_id);
    if (!field) throw unprocessable(`custom_fields: custom field ${field_id} does not exist`, 'custom_fields');
    if (!field.enabled)
      throw unprocessable(
        `custom_fields: custom field "${field.name}" is disabled; only enabled fields can be applied to stories (enable it first)`,
        'custom_fields',
      );
    if (seen.has(field_id)) throw unprocessable(`custom_fields: custom field "${field.name}" is given twice`, 'custom_fields');
    seen.add(field_id);
    const value = field.values.find((v) => v.id === value_id);
    if (!value) throw unprocessable(`custom_fields: ${value_id} is not a value of custom field "${field.name}"`, 'custom_fields');
    return { field_id, value_id, value: value.value };
  });
}

/** Files and linked files list the stories they are attached to. */
export function linkFiles(t: TrackerState, story: Story): void {
  for (const [coll, field] of [
    ['files', 'file_ids'],
    ['linkedFiles', 'linked_file_ids'],
  ] as const) {
    for (const f of t[coll]) {
      const has = story[field].includes(f.id);
      const ids = f.story_ids.filter((x) => x !== story.id);
      f.story_ids = has ? [...ids, story.id] : ids;
    }
  }
}

/** A new story's files and linked files list it (no other file can: its id is new), found by id. */
function linkNewStoryFiles(t: TrackerState, story: Story): void {
  for (const id of story.file_ids) {
    const f = byId(t.files, id);
    if (f) f.story_ids = [...f.story_ids.filter((x) => x !== story.id), story.id];
  }
  for (const id of story.linked_file_ids) {
    const f = byId(t.linkedFiles, id);
    if (f) f.story_ids = [...f.story_ids.filter((x) => x !== story.id), story.id];
  }
}

/**
 * Moves a story to a workflow state: `started_at` is stamped the first time it reaches a started or done
 * state, `completed_at` while it is done (cleared when it leaves), and cycle and lead time follow.
 */
export function enterState(
  s: Pick<Story, 'workflow_state_id' | 'moved_at' | 'started_at' | 'completed_at' | 'cycle_time' | 'lead_time' | 'created_at'>,
  stateId: number,
  at: string,
): void {
  if (s.workflow_state_id !== stateId) s.moved_at = at;
  s.workflow_state_id = stateId;
  const ph = phase(s);
  if ((ph === 'started' || ph === 'done') && !s.started_at) s.started_at = at;
  s.completed_at = ph === 'done' ? (s.completed_at ?? at) : null;
  const ms = (a: string | null, b: string | null) => (a && b ? Math.max(0, Math.round((Date.parse(b) - Date.parse(a)) / 1000)) : null);
  s.cycle_time = ms(s.started_at, s.completed_at);
  s.lead_time = ms(s.created_at, s.completed_at);
}

/** One history entry (GET /stories/{id}/history), most recent last in the store. */
export function recordHistory(t: TrackerState, s: Story, action: 'create' | 'update' | 'delete', at: string, changes?: StoryChanges): void {
  const { id, name, story_type, app_url } = s;
  const act: HistoryAction =
    action === 'delete'
      ? { id, entity_type: 'story', action, name, story_type }
      : action === 'create'
        ? { id, entity_type: 'story', action, name, story_type, app_url }
        : { id, entity_type: 'story', action, name, story_type, app_url, ...(changes && Object.keys(changes).length > 0 ? { changes } : {}) };
  t.storyHistory.push({
    id: randomUUID(),
    story_id: s.id,
    changed_at: at,
    version: 'v1',
    primary_id: s.id,
    member_id: t.ownerId,
    actions: [act],
    references: [],
  });
}

/** The new story record from a validated create body (also used by bulk create and templates). */
export function makeStory(t: TrackerState, body: StoryBody, at: string): NewStory {
  checkStoryRefs(t, body);
  const story: NewStory = {
    name: body.name,
    description: body.description ?? '',
    story_type: body.story_type ?? 'feature',
    archived: body.archived ?? false,
    workflow_id: STORY_WORKFLOW_ID,
    workflow_state_id: DEFAULT_STORY_STATE,
    estimate: body.estimate ?? null,
    epic_id: body.epic_id ?? null,
    iteration_id: body.iteration_id ?? null,
    project_id: body.project_id ?? null,
    group_id: body.group_id ?? null,
    label_ids: ensureLabels(t, body.labels ?? [], at),
    owner_ids: body.owner_ids ?? [],
    follower_ids: body.follower_ids ?? [],
    requested_by_id: body.requested_by_id ?? t.ownerId,
    external_id: body.external_id ?? null,
    external_links: body.external_links ?? [],
    file_ids: body.file_ids ?? [],
    linked_file_ids: body.linked_file_ids ?? [],
    deadline: body.deadline ?? null,
    custom_fields: customValues(t, body.custom_fields ?? []),
    previous_iteration_ids: [],
    mention_ids: [],
    member_mention_ids: [],
    group_mention_ids: [],
    position: lastPosition(t),
    moved_at: at,
    started_at: null,
    completed_at: null,
    started_at_override: body.started_at_override ?? null,
    completed_at_override: body.completed_at_override ?? null,
    cycle_time: null,
    lead_time: null,
    story_template_id: body.story_template_id ?? null,
    parent_story_id: body.parent_story_id ?? null,
    created_at: body.created_at ?? at,
    updated_at: body.updated_at ?? at,
  };
  if (body.move_to === 'first') story.position = firstPosition(t);
  enterState(story, body.workflow_state_id ?? DEFAULT_STORY_STATE, story.created_at);
  story.moved_at = story.created_at;
  return story;
}

/** Tasks given inline on create (`tasks: [{description, complete, …}]`). */
export function addInlineTasks(t: TrackerState, story: Story, tasks: readonly TaskParam[], at: string): void {
  tasks.forEach((k, i) => {
    t.tasks.push({
      id: nextId(t),
      story_id: story.id,
      description: k.description,
      complete: k.complete ?? false,
      completed_at: k.complete ? at : null,
      owner_ids: k.owner_ids ?? [],
      external_id: k.external_id ?? null,
      position: i + 1,
      entity_type: 'task',
      mention_ids: [],
      member_mention_ids: [],
      group_mention_ids: [],
      created_at: at,
      updated_at: at,
    });
  });
}

/** Creates one story from a validated body inside a store transaction: record, inline tasks, history. */
export function createStory(t: TrackerState, body: StoryBody, at: string): Story {
  for (const sub of body.sub_tasks ?? [])
    if ('story_id' in sub && !byId(t.stories, sub.story_id)) throw unprocessable(`sub_tasks: story ${sub.story_id} does not exist`, 'sub_tasks');
  const { comments, sub_tasks: subTasks, source_task_id: _source, ...rest } = body;
  const own = makeStory(t, rest, at);
  const id = nextId(t);
  const story: Story = { id, entity_type: 'story', app_url: `${APP_URL}/story/${id}`, ...own };
  t.stories.push(story);
  addInlineTasks(t, story, body.tasks ?? [], at);
  for (const c of comments ?? []) addComment(t, id, { ...c, parent_id: null }, at);
  for (const sub of subTasks ?? []) {
    if ('story_id' in sub) {
      const child = byId(t.stories, sub.story_id);
      if (child) child.parent_story_id = id;
    } else createStory(t, { name: sub.name, owner_ids: sub.owner_ids, workflow_state_id: sub.workflow_state_id, parent_story_id: id }, at);
  }
  for (const l of body.story_links ?? []) addLink(t, { verb: l.verb, subject_id: l.subject_id ?? id, object_id: l.object_id ?? id }, at);
  linkNewStoryFiles(t, story);
  recordHistory(t, story, 'create', story.created_at);
  return story;
}

/** A story link: both ends exist and differ, and the same link is not made twice (422 otherwise). */
export function addLink(t: TrackerState, body: { verb: string; subject_id: number; object_id: number }, at: string): StoryLink {
  for (const f of ['subject_id', 'object_id'] as const) {
    if (!byId(t.stories, body[f])) throw unprocessable(`${f}: story ${body[f]} does not exist`, f);
  }
  if (body.subject_id === body.object_id) throw unprocessable('object_id: a story cannot be linked to itself', 'object_id');
  const dup = findLink(t, body.subject_id, body.object_id, body.verb);
  if (dup) throw unprocessable(`story ${body.subject_id} already ${body.verb} story ${body.object_id} (link ${dup.id})`, 'verb');
  const link = {
    id: nextId(t),
    entity_type: 'story-link',
    verb: body.verb,
    subject_id: body.subject_id,
    object_id: body.object_id,
    created_at: at,
    updated_at: at,
  };
  t.storyLinks.push(link);
  return link;
}

/** Applies an update body (the single-story PUT and, field by field, the bulk update). */
export function changeStory(t: TrackerState, item: Story, body: Partial<StoryBody>, at: string): void {
  checkStoryRefs(t, body, item.id);
  const before = {
    workflow_state_id: item.workflow_state_id,
    name: item.name,
    estimate: item.estimate,
    epic_id: item.epic_id,
    iteration_id: item.iteration_id,
    project_id: item.project_id,
  };
  assign(item, body, [...SIMPLE, 'epic_id', 'project_id', 'group_id']);
  if (body.iteration_id !== undefined && body.iteration_id !== item.iteration_id) {
    if (item.iteration_id !== null) item.previous_iteration_ids = [...item.previous_iteration_ids.filter((x) => x !== item.iteration_id), item.iteration_id];
    item.iteration_id = body.iteration_id;
  }
  if (body.labels !== undefined) item.label_ids = ensureLabels(t, body.labels, at);
  if (body.custom_fields !== undefined) item.custom_fields = customValues(t, body.custom_fields);
  if (body.workflow_state_id !== undefined) enterState(item, body.workflow_state_id, at);
  // sub_tasks on update is the final list: the stories named become (in that order) the sub-tasks, the others are unlinked
  if (body.sub_tasks !== undefined) {
    const want = body.sub_tasks.map((x) => ('story_id' in x ? x.story_id : -1));
    for (const sid of want) if (!byId(t.stories, sid)) throw unprocessable(`sub_tasks: story ${sid} does not exist`, 'sub_tasks');
    for (const x of t.stories) {
      if (x.parent_story_id === item.id && !want.includes(x.id)) x.parent_story_id = null;
      if (want.includes(x.id)) x.parent_story_id = item.id;
    }
  }
  if (body.before_id !== undefined || body.after_id !== undefined) move(t.stories, item, { before_id: body.before_id, after_id: body.after_id }, 'story');
  if (body.move_to === 'first') item.position = firstPosition(t);
  if (body.move_to === 'last') item.position = lastPosition(t);
  const changes: StoryChanges = {};
  for (const k of Object.keys(before) as Array<keyof typeof before>) if (item[k] !== before[k]) changes[k] = { old: before[k], new: item[k] };
  recordHistory(t, item, 'update', at, changes);
}

/** Removes a story and what hangs off it (its comments, tasks, links; files forget it). */
export function removeStory(t: TrackerState, story: Story, at: string): void {
  for (const coll of ['files', 'linkedFiles'] as const) for (const f of t[coll]) f.story_ids = f.story_ids.filter((x) => x !== story.id);
  t.storyComments = t.storyComments.filter((c) => c.story_id !== story.id);
  t.tasks = t.tasks.filter((k) => k.story_id !== story.id);
  t.storyLinks = t.storyLinks.filter((l) => l.subject_id !== story.id && l.object_id !== story.id);
  for (const s of t.stories) if (s.parent_story_id === story.id) s.parent_story_id = null;
  recordHistory(t, story, 'delete', at);
  t.stories = t.stories.filter((s) => s !== story);
}

export function storyRoutes(ctx: ServiceContext): Route[] {
  const routes = crudRoutes<'stories', StoryBody>(ctx, {
    spec,
    coll: 'stories',
    entityType: 'story',
    routes: ['get', 'update'],
    change: (item, body, t, at) => changeStory(t, item, body, at),
    present: (t, s) => presentStory(t, s, true, true),
    after: linkFiles,
  });
  routes.push(
    {
      method: 'DELETE',
      path: `${API}/stories/:id`,
      handler: async (req) => {
        const id = intParam(req, 'id');
        await ctx.store.write((s) => {
          const t = tracker(s);
          removeStory(t, find(t.stories, id, spec), nowIso(ctx.now()));
        });
        return reply.noContent();
      },
    },
    {
      method: 'GET',
      path: `${API}/external-link/stories`,
      handler: async (req) => {
        const link = req.query.get('external_link');
        if (!link) throw new MockError(400, 'schema_mismatch', 'schema mismatch: query parameter external_link is required');
        if (link.length > 2048)
          throw new MockError(413, 'string_too_long', 'a string exceeded its length limit: external_link must be at most 2048 characters');
        return reply.ok(await ctx.store.read((s) => storyList(tracker(s), req, (st) => st.external_links.includes(link))));
      },
    },
  );
  return routes;
}

/** A comment (or a reply, with `parent_id`) on story `id`, added at the end. */
export function addComment(t: TrackerState, id: number, b: StoryCommentBody, at: string): StoryComment {
  const cid = nextId(t);
  const c: StoryComment = {
    id: cid,
    story_id: id,
    parent_id: b.parent_id ?? null,
    app_url: `${APP_URL}/story/${id}#activity-${cid}`,
    author_id: b.author_id ?? t.ownerId,
    text: b.text,
    external_id: b.external_id ?? null,
    deleted: false,
    entity_type: 'story-comment',
    linked_to_slack: false,
    blocker: false,
    unblocks_parent: false,
    position: commentCount(t, id) + 1,
    reactions: [],
    group_mention_ids: [],
    member_mention_ids: [],
    mention_ids: [],
    created_at: b.created_at ?? at,
    updated_at: b.updated_at ?? at,
  };
  t.storyComments.push(c);
  const story = byId(t.stories, id);
  if (story) story.updated_at = at;
  return c;
}
