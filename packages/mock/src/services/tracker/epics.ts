import { epics as spec } from '@opsctl/shared/tracker/resources/epics.js';
import { reply } from '../../http.js';
import type { Route, ServiceContext } from '../../service.js';
import { API, assign, boolQuery, ensureLabels, find, intParam, intQuery, move, tracker, unprocessable, type TrackerState } from './common.js';
import type { EpicBody } from './bodies.js';
import { crudRoutes } from './crud.js';
import { commentTree, type CommentView } from './epic-comments.js';
import type { Epic, Health, Label, NoHealth, Story } from './records.js';
import { associatedGroups, currentHealth, storyCounts } from './stats.js';
import { EPIC_STATES, EPIC_WORKFLOW_ID } from './state.js';
import { storyList } from './stories.js';
import { byId, extreme, group } from '../../indexes.js';

const SIMPLE = [
  'name',
  'description',
  'external_id',
  'owner_ids',
  'follower_ids',
  'requested_by_id',
  'deadline',
  'planned_start_date',
  'started_at_override',
  'completed_at_override',
  'archived',
] as const;

/** The epic workflow (GET /epic-workflow). */
export function epicWorkflow() {
  const at = '2026-01-01T00:00:00.000Z';
  return {
    id: EPIC_WORKFLOW_ID,
    entity_type: 'epic-workflow',
    created_at: at,
    updated_at: at,
    default_epic_state_id: EPIC_STATES[0].id,
    epic_states: EPIC_STATES.map((s, i) => ({
      id: s.id,
      name: s.name,
      description: '',
      color: s.color,
      type: s.type,
      position: i + 1,
      entity_type: 'epic-state',
      created_at: at,
      updated_at: at,
    })),
  };
}

/** Applies the state rules: epic_state_id wins; the deprecated `state` counts only without it. */
function setState(epic: Pick<Epic, 'epic_state_id' | 'started_at' | 'completed_at'>, body: Partial<EpicBody>, at: string): void {
  let next: (typeof EPIC_STATES)[number] | undefined;
  if (body.epic_state_id !== undefined) {
    next = EPIC_STATES.find((s) => s.id === body.epic_state_id);
    if (!next)
      throw unprocessable(
        `epic_state_id: ${body.epic_state_id} is not a state of the epic workflow (${EPIC_STATES.map((s) => `${s.id} ${s.name}`).join(', ')})`,
        'epic_state_id',
      );
  } else if (body.state !== undefined) {
    next = EPIC_STATES.find((s) => s.state === body.state);
  }
  if (!next) return;
  epic.epic_state_id = next.id;
  if ((next.type === 'started' || next.type === 'done') && !epic.started_at) epic.started_at = at;
  epic.completed_at = next.type === 'done' ? (epic.completed_at ?? at) : null;
}

function checkRefs(t: TrackerState, body: Partial<EpicBody>): void {
  for (const id of body.objective_ids ?? [])
    if (!t.objectives.some((o) => o.id === id)) throw unprocessable(`objective_ids: objective ${id} does not exist`, 'objective_ids');
  if (typeof body.milestone_id === 'number' && !t.objectives.some((o) => o.id === body.milestone_id))
    throw unprocessable(`milestone_id: milestone ${body.milestone_id} does not exist`, 'milestone_id');
  for (const id of [...(body.group_ids ?? []), ...(body.group_id ? [body.group_id] : [])]) {
    if (!t.groups.some((g) => g.id === id)) throw unprocessable(`group_ids: group ${id} does not exist`, 'group_ids');
  }
}

/** Objectives and groups, and their deprecated single-value forms, kept in step. */
function setLinks(epic: Pick<Epic, 'objective_ids' | 'milestone_id' | 'group_ids' | 'group_id'>, body: Partial<EpicBody>): void {
  if (body.objective_ids !== undefined) {
    epic.objective_ids = body.objective_ids;
    epic.milestone_id = body.objective_ids[0] ?? null;
  } else if (body.milestone_id !== undefined) {
    epic.milestone_id = body.milestone_id;
    epic.objective_ids = body.milestone_id === null ? [] : [body.milestone_id];
  }
  if (body.group_ids !== undefined) {
    epic.group_ids = body.group_ids;
    epic.group_id = body.group_ids[0] ?? null;
  } else if (body.group_id !== undefined) {
    epic.group_id = body.group_id;
    epic.group_ids = body.group_id === null ? [] : [body.group_id];
  }
}

/** An epic as the API shows it; `description`, `comments` and `health` depend on slim or full (presentEpic). */
export interface EpicView extends Omit<Epic, 'description' | 'started' | 'completed'> {
  description?: string;
  state: string;
  started: boolean;
  completed: boolean;
  labels: Label[];
  associated_groups: Array<{ group_id: string; associated_stories_count: number }>;
  project_ids: number[];
  stories_without_projects: number;
  stats: Record<string, number | string | null>;
  comments?: CommentView[];
  health?: Health | NoHealth;
}

/** An epic as the API shows it: full (comments, health) or slim (list results), with computed stats. */
export function presentEpic(t: TrackerState, e: Epic, slim: boolean, includeDescription = true): EpicView {
  const stories = group(t.stories, 'epic_id', (s: Story) => s.epic_id, e.id);
  const type = EPIC_STATES.find((s) => s.id === e.epic_state_id)?.type ?? 'unstarted';
  const out: EpicView = {
    ...e,
    state: EPIC_STATES.find((s) => s.id === e.epic_state_id)?.state ?? 'to do',
    started: type === 'started' || type === 'done',
    completed: type === 'done',
    labels: e.label_ids
      .map((id) => byId(t.labels, id))
      .filter((l) => l !== undefined)
      .map((l) => ({ ...l })),
    associated_groups: associatedGroups(stories),
    project_ids: [...new Set(stories.map((s) => s.project_id).filter((x) => typeof x === 'number'))],
    stories_without_projects: stories.filter((s) => s.project_id === null).length,
    stats: {
      ...storyCounts(stories),
      num_related_documents: t.documents.filter((d) => (d.epic_ids ?? []).includes(e.id)).length,
      last_story_update: stories.reduce<string | null>((m, s) => (m && (!s.updated_at || m > s.updated_at) ? m : s.updated_at), null),
    },
  };
  delete out.num_points;
  if (!includeDescription) delete out.description;
  if (!slim) {
    out.comments = commentTree(t, e.id, null);
    out.health = currentHealth(t, e.id);
  }
  return out;
}

export function epicRoutes(ctx: ServiceContext): Route[] {
  const { store } = ctx;
  const routes = crudRoutes<'epics', EpicBody>(ctx, {
    spec,
    coll: 'epics',
    entityType: 'epic',
    make(body, t, at) {
      checkRefs(t, body);
      const epic: Partial<Epic> & Omit<Epic, 'id' | 'entity_type' | 'app_url' | 'created_at' | 'updated_at'> = {
        name: body.name,
        description: body.description ?? '',
        archived: false,
        epic_state_id: EPIC_STATES[0].id,
        external_id: body.external_id ?? null,
        owner_ids: body.owner_ids ?? [],
        follower_ids: body.follower_ids ?? [],
        requested_by_id: body.requested_by_id ?? t.ownerId,
        label_ids: ensureLabels(t, body.labels ?? [], at),
        objective_ids: [],
        milestone_id: null,
        group_ids: [],
        group_id: null,
        group_mention_ids: [],
        member_mention_ids: [],
        mention_ids: [],
        deadline: body.deadline ?? null,
        planned_start_date: body.planned_start_date ?? null,
        started_at: null,
        completed_at: null,
        started_at_override: body.started_at_override ?? null,
        completed_at_override: body.completed_at_override ?? null,
        converted_from_story_id: body.converted_from_story_id ?? null,
        position: Math.max(0, extreme(t.epics, 'position', (x: Epic) => x.position, 'max') ?? 0) + 1,
        planningtool_id: null,
        planningtool_name: null,
        planningtool_plugin_id: null,
        planningtool_url: null,
      };
      setLinks(epic, body);
      setState(epic, body, body.created_at ?? at);
      if (body.created_at) epic.created_at = body.created_at;
      if (body.updated_at) epic.updated_at = body.updated_at;
      return epic;
    },
    change(epic, body, t, at) {
      checkRefs(t, body);
      assign(epic, body, SIMPLE);
      setLinks(epic, body);
      setState(epic, body, at);
      if (body.labels !== undefined) epic.label_ids = ensureLabels(t, body.labels, at);
      move(t.epics, epic, body, 'epic');
    },
    present: (t, e, list, req) => presentEpic(t, e, list, list && req ? (boolQuery(req, 'includes_description') ?? false) : true),
    beforeDelete(t, epic) {
      for (const s of t.stories) if (s.epic_id === epic.id) s.epic_id = null;
      t.epicComments = t.epicComments.filter((c) => c.epic_id !== epic.id);
      t.health = t.health.filter((h) => h.epic_id !== epic.id);
      for (const d of t.documents) if (d.epic_ids) d.epic_ids = d.epic_ids.filter((x) => x !== epic.id);
    },
  });
  routes.unshift({
    method: 'GET',
    path: `${API}/epics/paginated`,
    handler: async (req) => {
      const page = intQuery(req, 'page', 1, 1, Number.MAX_SAFE_INTEGER);
      const size = intQuery(req, 'page_size', 10, 1, 250);
      const withDescription = boolQuery(req, 'includes_description') ?? false;
      return reply.ok(
        await store.read((s) => {
          const t = tracker(s);
          const all = [...t.epics].sort((a, b) => a.id - b.id);
          const data = all.slice((page - 1) * size, page * size).map((e) => presentEpic(t, e, true, withDescription));
          return { data, next: page * size < all.length ? page + 1 : null, total: all.length };
        }),
      );
    },
  });
  routes.push(
    { method: 'GET', path: `${API}/epic-workflow`, handler: () => reply.ok(epicWorkflow()) },
    {
      method: 'GET',
      path: `${API}/epics/:id/stories`,
      handler: async (req) => {
        const id = intParam(req, 'id');
        return reply.ok(
          await store.read((s) => {
            const t = tracker(s);
            find(t.epics, id, spec);
            return storyList(t, req, (st) => st.epic_id === id);
          }),
        );
      },
    },
    {
      method: 'POST',
      path: `${API}/epics/:id/unlink-planningtool`,
      handler: async (req) => {
        const id = intParam(req, 'id');
        await store.write((s) => {
          const epic = find(tracker(s).epics, id, spec);
          Object.assign(epic, { planningtool_id: null, planningtool_name: null, planningtool_plugin_id: null, planningtool_url: null });
        });
        return reply.noContent();
      },
    },
  );
  return routes;
}
