import { iterations } from '@opsctl/shared/tracker/resources/iterations.js';
import { projects } from '@opsctl/shared/tracker/resources/projects.js';
import { MockError, reply } from '../../http.js';
import type { Route, ServiceContext } from '../../service.js';
import { API, assertFeature, assign, ensureLabels, find, intParam, tracker, unprocessable, type TrackerState } from './common.js';
import type { IterationBody, ProjectBody } from './bodies.js';
import { crudRoutes } from './crud.js';
import { adviceFor } from '@opsctl/shared/tracker/advice.js';

/** `mock serve --tracker-strict`: what the contract advises against is refused (the real service takes it). */
function refuseAdvisedAgainst(ctx: ServiceContext, body: unknown): void {
  const [advice] = ctx.options.tracker?.strict ? adviceFor('projects', body) : [];
  if (advice) throw unprocessable(advice.message, advice.field);
}
import { labelStatsOf, presentLabel } from './labels.js';
import type { Iteration, Project } from './records.js';
import { associatedGroups, storyCounts } from './stats.js';
import { storyList } from './stories.js';

function checkDates(body: Partial<IterationBody>, current?: Iteration): void {
  const start = body.start_date ?? current?.start_date;
  const end = body.end_date ?? current?.end_date;
  if (start && end && end.slice(0, 10) < start.slice(0, 10)) throw unprocessable(`end_date ${end} is before start_date ${start}`, 'end_date');
}

/** An iteration as the API shows it (the slim form without its description). */
export interface IterationView extends Omit<Iteration, 'description'> {
  description?: string;
  status: 'unstarted' | 'started' | 'done';
  associated_groups: Array<{ group_id: string; associated_stories_count: number }>;
  labels: Array<ReturnType<typeof presentLabel>>;
  stats: Record<string, number>;
}

export function presentIteration(t: TrackerState, it: Iteration, slim: boolean, now: number): IterationView {
  const stories = t.stories.filter((s) => s.iteration_id === it.id);
  const today = new Date(now).toISOString().slice(0, 10);
  // the stats of all the iteration's labels from one pass over the stories
  const labelStats = labelStatsOf(t, it.label_ids);
  const out: IterationView = {
    ...it,
    status: today < it.start_date.slice(0, 10) ? 'unstarted' : today > it.end_date.slice(0, 10) ? 'done' : 'started',
    associated_groups: associatedGroups(stories),
    labels: it.label_ids
      .map((id) => t.labels.find((l) => l.id === id))
      .filter((l) => l !== undefined)
      .map((l) => presentLabel(t, l, true, labelStats.get(l.id))),
    stats: { ...storyCounts(stories), average_cycle_time: 0, average_lead_time: 0, num_related_documents: 0 },
  };
  delete out.stats.num_stories_total;
  if (slim) delete out.description;
  return out;
}

function presentProject(t: TrackerState, p: Project) {
  const stories = t.stories.filter((s) => s.project_id === p.id);
  return {
    ...p,
    start_time: p.start_time ?? p.created_at,
    stats: { num_points: storyCounts(stories).num_points, num_stories: stories.length, num_related_documents: 0 },
  };
}

export function iterationProjectRoutes(ctx: ServiceContext): Route[] {
  const { store } = ctx;
  const its = crudRoutes<'iterations', IterationBody>(ctx, {
    spec: iterations,
    coll: 'iterations',
    entityType: 'iteration',
    make(body, t, at) {
      assertFeature(t, 'iterations');
      checkDates(body);
      return {
        name: body.name,
        description: body.description ?? '',
        start_date: body.start_date,
        end_date: body.end_date,
        follower_ids: body.follower_ids ?? [],
        group_ids: body.group_ids ?? [],
        label_ids: ensureLabels(t, body.labels ?? [], at),
        group_mention_ids: [],
        member_mention_ids: [],
        mention_ids: [],
      };
    },
    change(it, body, t, at) {
      assertFeature(t, 'iterations');
      checkDates(body, it);
      assign(it, body, ['name', 'description', 'start_date', 'end_date', 'follower_ids', 'group_ids']);
      if (body.labels !== undefined) it.label_ids = ensureLabels(t, body.labels, at);
    },
    present: (t, it, list) => presentIteration(t, it, list, ctx.now()),
    beforeDelete(t, it) {
      for (const s of t.stories) if (s.iteration_id === it.id) s.iteration_id = null;
    },
  });
  const feature = (name: 'iterations' | 'story_templates', on: boolean, path: string): Route => ({
    method: 'PUT',
    path,
    handler: async () => {
      await store.write((s) => void (tracker(s).features[name] = on));
      return reply.noContent();
    },
  });
  const prjs = crudRoutes<'projects', ProjectBody>(ctx, {
    spec: projects,
    coll: 'projects',
    entityType: 'project',
    make(body) {
      refuseAdvisedAgainst(ctx, body);
      return {
        name: body.name,
        team_id: body.team_id,
        abbreviation: body.abbreviation ?? null,
        color: body.color ?? null,
        description: body.description ?? '',
        external_id: body.external_id ?? null,
        follower_ids: body.follower_ids ?? [],
        iteration_length: body.iteration_length ?? 2,
        start_time: body.start_time ?? null,
        archived: false,
        days_to_thermometer: 5,
        show_thermometer: true,
        workflow_id: 500000000,
        ...(body.created_at ? { created_at: body.created_at } : {}),
        ...(body.updated_at ? { updated_at: body.updated_at } : {}),
      };
    },
    change(p, body) {
      refuseAdvisedAgainst(ctx, body);
      assign(p, body, ['name', 'team_id', 'abbreviation', 'color', 'description', 'follower_ids', 'archived', 'days_to_thermometer', 'show_thermometer']);
    },
    present: (t, p) => presentProject(t, p),
    beforeDelete(t, p) {
      const n = t.stories.filter((s) => s.project_id === p.id).length;
      if (n > 0) throw new MockError(422, 'unprocessable', `project ${p.id} still has ${n} stor${n === 1 ? 'y' : 'ies'}; move or delete them first`);
    },
  });
  const storiesOf = (kind: 'iterations' | 'projects', field: 'iteration_id' | 'project_id', spec: typeof iterations): Route => ({
    method: 'GET',
    path: `${API}/${kind}/:id/stories`,
    handler: async (req) => {
      const id = intParam(req, 'id');
      return reply.ok(
        await store.read((s) => {
          const t = tracker(s);
          find<{ id: number }>(t[kind], id, spec);
          return storyList(t, req, (st) => st[field] === id);
        }),
      );
    },
  });
  return [
    feature('iterations', true, `${API}/iterations/enable`),
    feature('iterations', false, `${API}/iterations/disable`),
    feature('story_templates', true, `${API}/entity-templates/enable`),
    feature('story_templates', false, `${API}/entity-templates/disable`),
    ...its,
    ...prjs,
    storiesOf('iterations', 'iteration_id', iterations),
    storiesOf('projects', 'project_id', projects),
  ];
}
