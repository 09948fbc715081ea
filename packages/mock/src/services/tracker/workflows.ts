import { workflows as spec } from '@opsctl/shared/tracker/resources/workflows.js';
import { reply } from '../../http.js';
import type { Route, ServiceContext } from '../../service.js';
import { API, intParam, notFound, tracker, type TrackerState } from './common.js';
import { DEFAULT_STORY_STATE, STORY_STATE_VERBS, STORY_STATES, STORY_WORKFLOW_ID } from './state.js';

const AT = '2026-01-01T00:00:00.000Z';
const COLORS = ['#e6e6e6', '#9ba7b0', '#3e8ed0', '#48c774'];

/** The workspace's story workflow, with how many stories sit in each state right now. */
export function presentWorkflow(t: TrackerState): Record<string, unknown> {
  return {
    id: STORY_WORKFLOW_ID,
    name: 'Engineering',
    description: 'The default story workflow',
    entity_type: 'workflow',
    auto_assign_owner: false,
    team_id: 1,
    project_ids: t.projects.map((p) => p.id),
    default_state_id: DEFAULT_STORY_STATE,
    created_at: AT,
    updated_at: AT,
    states: STORY_STATES.map((s, i) => ({
      id: s.id,
      name: s.name,
      type: s.type,
      verb: STORY_STATE_VERBS[s.id] ?? null,
      description: '',
      color: COLORS[i],
      position: i + 1,
      num_stories: t.stories.filter((x) => x.workflow_state_id === s.id).length,
      num_story_templates: t.entityTemplates.filter((x) => x.story_contents?.workflow_state_id === s.id).length,
      entity_type: 'workflow-state',
      created_at: AT,
      updated_at: AT,
    })),
  };
}

export function workflowRoutes(ctx: ServiceContext): Route[] {
  return [
    { method: 'GET', path: `${API}/workflows`, handler: async () => reply.ok(await ctx.store.read((s) => [presentWorkflow(tracker(s))])) },
    {
      method: 'GET',
      path: `${API}/workflows/:id`,
      handler: async (req) => {
        const id = intParam(req, 'id');
        if (id !== STORY_WORKFLOW_ID) throw notFound(spec, id);
        return reply.ok(await ctx.store.read((s) => presentWorkflow(tracker(s))));
      },
    },
  ];
}
