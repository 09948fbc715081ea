import { categories } from '@opsctl/shared/tracker/resources/categories.js';
import { keyResults } from '@opsctl/shared/tracker/resources/key-results.js';
import { milestones } from '@opsctl/shared/tracker/resources/milestones.js';
import { objectives } from '@opsctl/shared/tracker/resources/objectives.js';
import { MockError, reply } from '../../http.js';
import type { Route, ServiceContext } from '../../service.js';
import { API, APP_URL, assign, find, intParam, move, nextId, tracker, unprocessable, type TrackerState } from './common.js';
import type { CategoryBody, CategoryParam, KeyResultBody, ObjectiveBody } from './bodies.js';
import { crudRoutes } from './crud.js';
import type { Category, ObservedValue, Objective } from './records.js';
import { presentEpic } from './epics.js';

function assertUniqueCategory(t: TrackerState, name: string, exceptId?: number): void {
  const clash = t.categories.find((c) => c.id !== exceptId && c.name.toLowerCase() === name.toLowerCase());
  if (clash) throw new MockError(422, 'unprocessable', `a category named "${name}" already exists (id ${clash.id})`, { errors: { name: 'is already used' } });
}

/** Category ids for `categories: [{name, color, external_id}]`: existing ones by name, new ones created. */
function ensureCategories(t: TrackerState, params: readonly CategoryParam[], at: string): number[] {
  return params.map((p) => {
    let c = t.categories.find((x) => x.name.toLowerCase() === String(p.name).toLowerCase());
    if (!c) {
      const id = nextId(t);
      c = {
        id,
        name: p.name,
        color: p.color ?? null,
        external_id: p.external_id ?? null,
        archived: false,
        entity_type: 'category',
        type: 'milestone',
        app_url: `${APP_URL}/category/${id}`,
        created_at: at,
        updated_at: at,
      };
      t.categories.push(c);
    }
    return c.id;
  });
}

/** An objective (or deprecated milestone: the same shape) as the API shows it: with its categories and computed stats. */
export interface ObjectiveView extends Omit<Objective, 'category_ids'> {
  categories: Category[];
  key_result_ids: string[];
  started: boolean;
  completed: boolean;
  stats: { average_cycle_time: number; average_lead_time: number; num_related_documents: number };
}

export function presentObjective(t: TrackerState, o: Objective): ObjectiveView {
  const { category_ids, ...rest } = o;
  return {
    ...rest,
    categories: category_ids
      .map((id) => t.categories.find((c) => c.id === id))
      .filter((c) => c !== undefined)
      .map((c) => ({ ...c })),
    key_result_ids: t.keyResults.filter((k) => k.objective_id === o.id).map((k) => k.id),
    started: o.state !== 'to do',
    completed: o.state === 'done',
    stats: { average_cycle_time: 0, average_lead_time: 0, num_related_documents: 0 },
  };
}

function objectiveRoutes(ctx: ServiceContext, spec: typeof objectives): Route[] {
  const routes = crudRoutes<'objectives', ObjectiveBody>(ctx, {
    spec,
    coll: 'objectives',
    entityType: 'objective',
    make(body, t, at) {
      if (t.objectives.length >= t.entitlements.objectives) {
        throw new MockError(
          403,
          'UnusableEntitlementError',
          `the workspace's objective entitlement (${t.entitlements.objectives}) is used up; archive or delete objectives, or upgrade the plan`,
          { entitlement_tag: 'objectives' },
        );
      }
      const state = body.state ?? 'to do';
      return {
        name: body.name,
        description: body.description ?? '',
        archived: false,
        state,
        category_ids: ensureCategories(t, body.categories ?? [], at),
        started_at: state === 'to do' ? null : at,
        completed_at: state === 'done' ? at : null,
        started_at_override: body.started_at_override ?? null,
        completed_at_override: body.completed_at_override ?? null,
        position: Math.max(0, ...t.objectives.map((x) => x.position)) + 1,
      };
    },
    change(o, body, t, at) {
      assign(o, body, ['name', 'description', 'archived', 'started_at_override', 'completed_at_override']);
      if (body.state !== undefined && body.state !== o.state) {
        o.state = body.state;
        if (body.state !== 'to do') o.started_at ??= at;
        o.completed_at = body.state === 'done' ? at : null;
      }
      if (body.categories !== undefined) o.category_ids = ensureCategories(t, body.categories, at);
      move(t.objectives, o, body, spec.singular);
    },
    present: (t, o) => presentObjective(t, o),
    beforeDelete(t, o) {
      for (const e of t.epics) {
        e.objective_ids = e.objective_ids.filter((x) => x !== o.id);
        if (e.milestone_id === o.id) e.milestone_id = e.objective_ids[0] ?? null;
      }
    },
    path: spec.path,
  });
  routes.push({
    method: 'GET',
    path: `${API}${spec.path}/:id/epics`,
    handler: async (req) => {
      const id = intParam(req, 'id');
      return reply.ok(
        await ctx.store.read((s) => {
          const t = tracker(s);
          find(t.objectives, id, spec);
          return t.epics.filter((e) => e.objective_ids.includes(id)).map((e) => presentEpic(t, e, true));
        }),
      );
    },
  });
  return routes;
}

export function planningRoutes(ctx: ServiceContext): Route[] {
  const cats = crudRoutes<'categories', CategoryBody>(ctx, {
    spec: categories,
    coll: 'categories',
    entityType: 'category',
    make(body, t) {
      assertUniqueCategory(t, body.name);
      return { name: body.name, color: body.color ?? null, external_id: body.external_id ?? null, archived: false, type: 'milestone' };
    },
    change(c, body, t) {
      if (body.name !== undefined) assertUniqueCategory(t, body.name, c.id);
      assign(c, body, ['name', 'color', 'archived']);
    },
    beforeDelete(t, c) {
      for (const o of t.objectives) o.category_ids = o.category_ids.filter((x) => x !== c.id);
    },
  });
  for (const kind of ['milestones', 'objectives']) {
    cats.push({
      method: 'GET',
      path: `${API}/categories/:id/${kind}`,
      handler: async (req) => {
        const id = intParam(req, 'id');
        return reply.ok(
          await ctx.store.read((s) => {
            const t = tracker(s);
            find(t.categories, id, categories);
            return t.objectives.filter((o) => o.category_ids.includes(id)).map((o) => presentObjective(t, o));
          }),
        );
      },
    });
  }
  const krs = crudRoutes<'keyResults', KeyResultBody>(ctx, {
    spec: keyResults,
    coll: 'keyResults',
    entityType: 'key-result',
    change(k, body) {
      if (body.name !== undefined) k.name = body.name;
      if (body.initial_observed_value !== undefined) k.initial_observed_value = body.initial_observed_value;
      if (body.observed_value !== undefined) k.current_observed_value = body.observed_value;
      if (body.target_value !== undefined) k.current_target_value = body.target_value;
      const kind = k.type === 'boolean' ? 'boolean_value' : 'numeric_value';
      for (const v of [body.initial_observed_value, body.observed_value, body.target_value]) {
        if (v && Object.keys(v).some((key) => key !== kind)) throw unprocessable(`a ${k.type} key result takes ${kind} values`, 'observed_value');
      }
      if (k.type === 'boolean') k.progress = k.current_observed_value.boolean_value ? 100 : 0;
      else {
        const numeric = (v: ObservedValue | undefined) => Number(v?.numeric_value ?? 0);
        const init = numeric(k.initial_observed_value);
        const cur = numeric(k.current_observed_value);
        const target = numeric(k.current_target_value);
        k.progress = target === init ? 0 : Math.max(0, Math.min(100, Math.round(((cur - init) / (target - init)) * 100)));
      }
    },
    present: (_t, k) => {
      const { updated_at: _u, ...rest } = k;
      return rest;
    },
  });
  return [...cats, ...objectiveRoutes(ctx, objectives), ...objectiveRoutes(ctx, milestones), ...krs];
}
