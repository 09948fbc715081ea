import { stories as spec } from '@opsctl/shared/tracker/resources/stories.js';
import { MockError, reply, type MockRequest } from '../../http.js';
import type { Route, ServiceContext } from '../../service.js';
import { API, assign, ensureLabels, find, intParam, nowIso, tracker, unprocessable, validate, validateAs, type TrackerState } from './common.js';
import type { BulkCreateBody, BulkDeleteBody, BulkUpdateBody, FromTemplateBody, StoryBody, StorySearchBody } from './bodies.js';
import type { Story } from './records.js';
import { phase } from './stats.js';
import { STORY_STATES } from './state.js';
import { changeStory, createStory, customValues, presentStory, removeStory } from './stories.js';
import { clone } from '../../tx.js';
import { byId } from '../../indexes.js';

/** The most stories one bulk request may carry (the reference's bulk endpoints take up to 100). */
export const BULK_MAX = 100;

/** Validates each story of a bulk body against the stories fields; the first problem names stories[i]. */
async function validateEach(items: unknown[], mode: 'create'): Promise<StoryBody[]> {
  const out: StoryBody[] = [];
  for (let i = 0; i < items.length; i++) {
    try {
      out.push(await validateAs<StoryBody>('CreateStoryParams', mode, items[i]));
    } catch (err) {
      if (err instanceof MockError) throw new MockError(err.status, err.code, `stories[${i}]: ${err.message}`, err.extra);
      throw err;
    }
  }
  return out;
}

function storyIds(t: TrackerState, ids: number[]): Story[] {
  if (ids.length > BULK_MAX)
    throw new MockError(400, 'schema_mismatch', `schema mismatch: story_ids: at most ${BULK_MAX} stories per request (got ${ids.length})`);
  return ids.map((id) => {
    const s = byId(t.stories, id);
    if (!s) throw unprocessable(`story_ids: story ${id} does not exist`, 'story_ids');
    return s;
  });
}

/** POST /stories/search: every given attribute must match (lists: any of them). */
function matches(t: TrackerState, q: StorySearchBody): (s: Story) => boolean {
  const inRange = (v: string | null, start?: string, end?: string) =>
    (start === undefined || (v !== null && v >= start)) && (end === undefined || (v !== null && v <= end));
  const anyOf = (list: readonly unknown[], v: unknown) => list.includes(v);
  const labelId = q.label_name !== undefined ? (t.labels.find((l) => l.name.toLowerCase() === String(q.label_name).toLowerCase())?.id ?? -1) : undefined;
  return (s) =>
    (q.archived === undefined || s.archived === q.archived) &&
    (q.story_type === undefined || s.story_type === q.story_type) &&
    (q.workflow_state_id === undefined || s.workflow_state_id === q.workflow_state_id) &&
    (q.workflow_state_types === undefined || q.workflow_state_types.includes(phase(s))) &&
    (q.epic_id === undefined || s.epic_id === q.epic_id) &&
    (q.epic_ids === undefined || anyOf(q.epic_ids, s.epic_id)) &&
    (q.iteration_id === undefined || s.iteration_id === q.iteration_id) &&
    (q.iteration_ids === undefined || anyOf(q.iteration_ids, s.iteration_id)) &&
    (q.project_id === undefined || s.project_id === q.project_id) &&
    (q.project_ids === undefined || anyOf(q.project_ids, s.project_id)) &&
    (q.group_id === undefined || s.group_id === q.group_id) &&
    (q.group_ids === undefined || anyOf(q.group_ids, s.group_id)) &&
    (q.label_ids === undefined || q.label_ids.some((id) => s.label_ids.includes(id))) &&
    (labelId === undefined || s.label_ids.includes(labelId)) &&
    (q.owner_id === undefined || (q.owner_id === null ? s.owner_ids.length === 0 : s.owner_ids.includes(q.owner_id))) &&
    (q.owner_ids === undefined || q.owner_ids.some((id) => s.owner_ids.includes(id))) &&
    (q.requested_by_id === undefined || s.requested_by_id === q.requested_by_id) &&
    (q.external_id === undefined || s.external_id === q.external_id) &&
    (q.estimate === undefined || s.estimate === q.estimate) &&
    inRange(s.created_at, q.created_at_start, q.created_at_end) &&
    inRange(s.updated_at, q.updated_at_start, q.updated_at_end) &&
    inRange(s.completed_at, q.completed_at_start, q.completed_at_end) &&
    inRange(s.deadline, q.deadline_start, q.deadline_end);
}

const STATE_TYPES = new Set(STORY_STATES.map((s) => s.type as string));

/** One story of a bulk update: the shared fields set, the *_add / *_remove lists applied to its own. */
function bulkChange(t: TrackerState, story: Story, b: BulkUpdateBody, at: string): void {
  const single: Partial<StoryBody> = {};
  assign(single, b, [
    'archived',
    'story_type',
    'workflow_state_id',
    'epic_id',
    'iteration_id',
    'project_id',
    'group_id',
    'estimate',
    'requested_by_id',
    'deadline',
    'external_links',
    'move_to',
  ]);
  if (b.owner_ids_add || b.owner_ids_remove)
    single.owner_ids = [...new Set([...story.owner_ids, ...(b.owner_ids_add ?? [])])].filter((x) => !(b.owner_ids_remove ?? []).includes(x));
  if (b.follower_ids_add || b.follower_ids_remove)
    single.follower_ids = [...new Set([...story.follower_ids, ...(b.follower_ids_add ?? [])])].filter((x) => !(b.follower_ids_remove ?? []).includes(x));
  changeStory(t, story, single, at);
  if (b.labels_add || b.labels_remove) {
    const add = ensureLabels(t, b.labels_add ?? [], at);
    const drop = new Set((b.labels_remove ?? []).map((l) => String(l.name).toLowerCase()));
    story.label_ids = [...new Set([...story.label_ids, ...add])].filter((id) => !drop.has(String(byId(t.labels, id)?.name).toLowerCase()));
  }
  if (b.custom_fields_add || b.custom_fields_remove) {
    const drop = new Set((b.custom_fields_remove ?? []).map((c) => c.field_id));
    const add = customValues(t, b.custom_fields_add ?? []);
    story.custom_fields = [...story.custom_fields.filter((c) => !drop.has(c.field_id) && !add.some((a) => a.field_id === c.field_id)), ...add];
  }
  story.updated_at = at;
}

/** Story writes beyond one story's CRUD (create, bulk create, update and delete, from a template) and reads over many. */
export function storyBulkRoutes(ctx: ServiceContext): Route[] {
  return [...storyWriteRoutes(ctx), ...storyReadRoutes(ctx)];
}

/** Create one or many stories, bulk update and delete, and create from a template. */
function storyWriteRoutes(ctx: ServiceContext): Route[] {
  const { store } = ctx;
  const createOne = async (req: MockRequest) => {
    const b = await validate<StoryBody>(req);
    return reply.created(
      await store.write((s) => {
        const t = tracker(s);
        return presentStory(t, createStory(t, b, nowIso(ctx.now())), true, true);
      }),
    );
  };
  return [
    { method: 'POST', path: `${API}/stories`, handler: createOne },
    {
      method: 'POST',
      path: `${API}/stories/bulk`,
      handler: async (req) => {
        const env = await validate<BulkCreateBody>(req);
        // the service's own bound (the document gives none): 1 to BULK_MAX stories per request
        if (env.stories.length < 1 || env.stories.length > BULK_MAX)
          throw new MockError(400, 'schema_mismatch', `schema mismatch: stories must hold 1 to ${BULK_MAX} stories (got ${env.stories.length})`, {
            errors: { stories: `1 to ${BULK_MAX} stories per request` },
          });
        const items = await validateEach(env.stories, 'create');
        // all or nothing: the transaction throws before anything is kept when one story is unprocessable
        return reply.created(
          await store.write((s) => {
            const t = tracker(s);
            const at = nowIso(ctx.now());
            return items.map((b, i) => {
              try {
                return presentStory(t, createStory(t, b, at));
              } catch (err) {
                if (err instanceof MockError) throw new MockError(err.status, err.code, `stories[${i}]: ${err.message}`, err.extra);
                throw err;
              }
            });
          }),
        );
      },
    },
    {
      method: 'PUT',
      path: `${API}/stories/bulk`,
      handler: async (req) => {
        const b = await validate<BulkUpdateBody>(req);
        return reply.ok(
          await store.write((s) => {
            const t = tracker(s);
            const at = nowIso(ctx.now());
            const list = storyIds(t, b.story_ids);
            for (const story of list) bulkChange(t, story, b, at);
            return list.map((story) => presentStory(t, story));
          }),
        );
      },
    },
    {
      method: 'DELETE',
      path: `${API}/stories/bulk`,
      handler: async (req) => {
        const b = await validate<BulkDeleteBody>(req);
        await store.write((s) => {
          const t = tracker(s);
          const at = nowIso(ctx.now());
          for (const story of storyIds(t, b.story_ids)) removeStory(t, story, at);
        });
        return reply.noContent();
      },
    },
    {
      method: 'POST',
      path: `${API}/stories/from-template`,
      handler: async (req) => {
        const b = await validate<FromTemplateBody>(req);
        return reply.created(
          await store.write((s) => {
            const t = tracker(s);
            const at = nowIso(ctx.now());
            const tpl = t.entityTemplates.find((x) => x.id === b.story_template_id);
            if (!tpl) throw unprocessable(`story_template_id: entity template ${b.story_template_id} does not exist`, 'story_template_id');
            if (!t.features.story_templates)
              throw new MockError(403, 'DisabledFeatureError', 'story templates are turned off for this workspace (opsctl tracker entity-templates enable)', {
                feature_tag: 'story-templates',
              });
            const { entity_type: _e, labels, tasks, custom_fields, ...contents } = tpl.story_contents;
            const { story_template_id: _tplId, ...given } = b;
            // the template's contents under the body's fields (the document types a template's story_type as any string)
            const merged = { ...contents, ...given, story_template_id: b.story_template_id } as Partial<StoryBody> & Record<string, unknown>;
            if (b.labels === undefined && labels) merged.labels = labels.map((l) => ({ name: l.name }));
            if (b.tasks === undefined && tasks) merged.tasks = tasks.map((k) => ({ description: k.description, complete: k.complete ?? false }));
            if (b.custom_fields === undefined && custom_fields)
              merged.custom_fields = custom_fields.map((c) => ({ field_id: c.field_id, value_id: c.value_id }));
            applyAddRemove(merged, b);
            if (!merged.name) throw unprocessable('name: neither the body nor the template gives the story a name', 'name');
            const story = createStory(t, { ...merged, name: merged.name }, at);
            tpl.last_used_at = at;
            return presentStory(t, story, true, true);
          }),
        );
      },
    },
  ];
}

/** Reads over many stories: search, a story's history, its sub-tasks. */
function storyReadRoutes(ctx: ServiceContext): Route[] {
  const { store } = ctx;
  return [
    {
      method: 'POST',
      path: `${API}/stories/search`,
      handler: async (req) => {
        const q = await validate<StorySearchBody>(req);
        for (const ty of q.workflow_state_types ?? []) {
          if (!STATE_TYPES.has(ty))
            throw new MockError(400, 'schema_mismatch', `schema mismatch: workflow_state_types: "${ty}" is not one of ${[...STATE_TYPES].join(', ')}`, {
              errors: { workflow_state_types: 'unknown state type' },
            });
        }
        return {
          status: 201,
          json: await store.read((s) => {
            const t = tracker(s);
            return t.stories.filter(matches(t, q)).map((st) => presentStory(t, st, q.includes_description ?? false));
          }),
        };
      },
    },
    {
      method: 'GET',
      path: `${API}/stories/:id/history`,
      handler: async (req) => {
        const id = intParam(req, 'id');
        return reply.ok(
          await store.read((s) => {
            const t = tracker(s);
            find(t.stories, id, spec);
            return t.storyHistory.filter((h) => h.story_id === id).map(({ story_id: _s, ...h }) => clone(h));
          }),
        );
      },
    },
    {
      method: 'GET',
      path: `${API}/stories/:id/sub-tasks`,
      handler: async (req) => {
        const id = intParam(req, 'id');
        return reply.ok(
          await store.read((s) => {
            const t = tracker(s);
            find(t.stories, id, spec);
            return t.stories.filter((x) => x.parent_story_id === id).map((x) => presentStory(t, x));
          }),
        );
      },
    },
  ];
}

/** The `*_add` / `*_remove` lists of a create-from-template: each adds to, or takes from, what the template (or the body) gives. */
function applyAddRemove(merged: Partial<StoryBody> & Record<string, unknown>, b: FromTemplateBody): void {
  const lists = ['external_links', 'file_ids', 'linked_file_ids', 'follower_ids', 'owner_ids'] as const;
  for (const key of lists) {
    const add = b[`${key}_add`] as Array<string | number> | undefined;
    const remove = b[`${key}_remove`] as Array<string | number> | undefined;
    delete merged[`${key}_add`];
    delete merged[`${key}_remove`];
    if (!add && !remove) continue;
    const now = (merged[key] as Array<string | number> | undefined) ?? [];
    (merged as Record<string, unknown>)[key] = [...now, ...(add ?? []).filter((x) => !now.includes(x))].filter((x) => !(remove ?? []).includes(x));
  }
  delete merged.labels_add;
  delete merged.labels_remove;
  if (b.labels_add || b.labels_remove) {
    const gone = new Set((b.labels_remove ?? []).map((l) => l.name.toLowerCase()));
    const now = merged.labels ?? [];
    const added = (b.labels_add ?? []).filter((l) => !now.some((x) => x.name.toLowerCase() === l.name.toLowerCase()));
    merged.labels = [...now, ...added].filter((l) => !gone.has(l.name.toLowerCase()));
  }
  delete merged.custom_fields_add;
  delete merged.custom_fields_remove;
  if (b.custom_fields_add || b.custom_fields_remove) {
    const gone = new Set((b.custom_fields_remove ?? []).map((c) => c.field_id));
    const added = b.custom_fields_add ?? [];
    const now = (merged.custom_fields ?? []).filter((c) => !added.some((a) => a.field_id === c.field_id));
    merged.custom_fields = [...now, ...added].filter((c) => !gone.has(c.field_id));
  }
}
