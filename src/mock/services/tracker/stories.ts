import { stories as spec } from '../../../tracker/resources.js';
import { MockError, reply, type MockRequest } from '../../http.js';
import type { Route, ServiceContext } from '../../service.js';
import { API, boolQuery, tracker, unprocessable, type TrackerState } from './common.js';
import { crudRoutes } from './crud.js';
import { ensureLabels } from './labels.js';
import { phase } from './stats.js';
import { DEFAULT_STORY_STATE, STORY_STATES, STORY_WORKFLOW_ID } from './state.js';

const SIMPLE = ['name', 'description', 'story_type', 'estimate', 'owner_ids', 'follower_ids', 'requested_by_id', 'external_links', 'deadline', 'archived', 'file_ids', 'linked_file_ids'] as const;

/** A story as StorySlim: labels embedded (without stats), state flags from its workflow state. */
export function presentStory(t: TrackerState, s: any, includeDescription = true): any {
  const ph = phase(s);
  const out: any = {
    ...s,
    labels: (s.label_ids as number[]).map((id) => t.labels.find((l: any) => l.id === id)).filter(Boolean).map((l: any) => ({ ...l })),
    started: ph === 'started' || ph === 'done',
    completed: ph === 'done',
    blocked: false,
    blocker: false,
    stats: { num_related_documents: 0 },
  };
  if (!includeDescription) delete out.description;
  return out;
}

/** Stories matching `pred`, presented, honouring `includes_description`. */
export function storyList(t: TrackerState, req: MockRequest, pred: (s: any) => boolean): any[] {
  const withDescription = boolQuery(req, 'includes_description') ?? false;
  return t.stories.filter(pred).map((s: any) => presentStory(t, s, withDescription));
}

/** Checks that the records a story body points at exist (422 naming the field otherwise). */
function checkRefs(t: TrackerState, body: Record<string, any>): void {
  const refs: Array<[string, string]> = [['epic_id', 'epics'], ['iteration_id', 'iterations'], ['project_id', 'projects'], ['group_id', 'groups']];
  for (const [field, coll] of refs) {
    const v = body[field];
    if (v !== undefined && v !== null && !t[coll].some((x: any) => x.id === v)) throw unprocessable(`${field}: ${coll.slice(0, -1)} ${v} does not exist`, field);
  }
  if (body.workflow_state_id !== undefined && !STORY_STATES.some((s) => s.id === body.workflow_state_id)) {
    throw unprocessable(`workflow_state_id: ${body.workflow_state_id} is not a state of the workflow (${STORY_STATES.map((s) => `${s.id} ${s.name}`).join(', ')})`, 'workflow_state_id');
  }
  for (const field of ['file_ids', 'linked_file_ids'] as const) {
    const coll = field === 'file_ids' ? 'files' : 'linkedFiles';
    for (const id of body[field] ?? []) if (!t[coll].some((x: any) => x.id === id)) throw unprocessable(`${field}: ${id} does not exist`, field);
  }
}

/**
 * A story's custom field values: each names a field of the workspace and one of its values, and only
 * enabled fields can be applied to stories (the seed's rule); anything else is unprocessable.
 */
function customValues(t: TrackerState, items: Array<{ field_id: string; value_id: string }>): Array<Record<string, unknown>> {
  const seen = new Set<string>();
  return items.map(({ field_id, value_id }) => {
    const field = t.customFields.find((f: any) => f.id === field_id);
    if (!field) throw unprocessable(`custom_fields: custom field ${field_id} does not exist`, 'custom_fields');
    if (!field.enabled) throw unprocessable(`custom_fields: custom field "${field.name}" is disabled; only enabled fields can be applied to stories (enable it first)`, 'custom_fields');
    if (seen.has(field_id)) throw unprocessable(`custom_fields: custom field "${field.name}" is given twice`, 'custom_fields');
    seen.add(field_id);
    const value = field.values.find((v: any) => v.id === value_id);
    if (!value) throw unprocessable(`custom_fields: ${value_id} is not a value of custom field "${field.name}"`, 'custom_fields');
    return { field_id, value_id, value: value.value };
  });
}

/** Files and linked files list the stories they are attached to. */
function linkFiles(t: TrackerState, story: any): void {
  for (const [coll, field] of [['files', 'file_ids'], ['linkedFiles', 'linked_file_ids']] as const) {
    for (const f of t[coll]) {
      const has = story[field].includes(f.id);
      const ids: number[] = f.story_ids.filter((x: number) => x !== story.id);
      f.story_ids = has ? [...ids, story.id] : ids;
    }
  }
}

export function storyRoutes(ctx: ServiceContext): Route[] {
  const routes = crudRoutes(ctx, {
    spec,
    coll: 'stories',
    entityType: 'story',
    routes: ['create', 'get', 'update', 'delete'],
    make(body, t, at) {
      checkRefs(t, body);
      const story: Record<string, any> = {
        name: body.name, description: body.description ?? '', story_type: body.story_type ?? 'feature', archived: body.archived ?? false,
        workflow_id: STORY_WORKFLOW_ID, workflow_state_id: body.workflow_state_id ?? DEFAULT_STORY_STATE,
        estimate: body.estimate ?? null, epic_id: body.epic_id ?? null, iteration_id: body.iteration_id ?? null, project_id: body.project_id ?? null,
        group_id: body.group_id ?? null, label_ids: ensureLabels(t, body.labels ?? [], at), owner_ids: body.owner_ids ?? [], follower_ids: body.follower_ids ?? [],
        requested_by_id: body.requested_by_id ?? t.ownerId, external_id: body.external_id ?? null, external_links: body.external_links ?? [],
        file_ids: body.file_ids ?? [], linked_file_ids: body.linked_file_ids ?? [], deadline: body.deadline ?? null,
        comment_ids: [], task_ids: [], story_links: [], custom_fields: customValues(t, body.custom_fields ?? []), previous_iteration_ids: [], mention_ids: [], member_mention_ids: [], group_mention_ids: [],
        position: t.stories.length + 1, moved_at: at, started_at: null, completed_at: null, started_at_override: null, completed_at_override: null,
        cycle_time: null, lead_time: null, num_tasks_completed: 0, story_template_id: null,
      };
      return story;
    },
    change(item, body, t, at) {
      checkRefs(t, body);
      for (const k of [...SIMPLE, 'epic_id', 'iteration_id', 'project_id', 'group_id', 'workflow_state_id'] as const) if (body[k] !== undefined) item[k] = body[k];
      if (body.labels !== undefined) item.label_ids = ensureLabels(t, body.labels, at);
      if (body.custom_fields !== undefined) item.custom_fields = customValues(t, body.custom_fields);
      if (body.workflow_state_id !== undefined) item.moved_at = at;
    },
    present: (t, s) => presentStory(t, s),
    after: linkFiles,
    beforeDelete(t, story) {
      for (const coll of ['files', 'linkedFiles'] as const) for (const f of t[coll]) f.story_ids = f.story_ids.filter((x: number) => x !== story.id);
    },
  });
  routes.push({
    method: 'GET',
    path: `${API}/external-link/stories`,
    handler: async (req) => {
      const link = req.query.get('external_link');
      if (!link) throw new MockError(400, 'schema_mismatch', 'schema mismatch: query parameter external_link is required');
      if (link.length > 2048) throw new MockError(413, 'string_too_long', 'a string exceeded its length limit: external_link must be at most 2048 characters');
      return reply.ok(await ctx.store.read((s) => storyList(tracker(s), req, (st) => st.external_links.includes(link))));
    },
  });
  return routes;
}
