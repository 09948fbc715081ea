import { labels as spec } from './resources.js';
import { MockError, reply } from '../../http.js';
import { hasDuplicates, lookup } from '../../indexes.js';
import type { Route, ServiceContext } from '../../service.js';
import { presentEpic } from './epics.js';
import { phase as storyPhase } from './stats.js';
import { EPIC_STATES } from './state.js';
import { storyList } from './stories.js';
import type { LabelBody } from './bodies.js';
import type { Label } from './records.js';
import { API, assign, boolQuery, find, intParam, newLabel, nowIso, tracker, validate, type TrackerState } from './common.js';

const STAT_KEYS = [
  'num_epics',
  'num_epics_completed',
  'num_epics_in_progress',
  'num_epics_total',
  'num_epics_unstarted',
  'num_points_backlog',
  'num_points_completed',
  'num_points_in_progress',
  'num_points_total',
  'num_points_unstarted',
  'num_related_documents',
  'num_stories_backlog',
  'num_stories_completed',
  'num_stories_in_progress',
  'num_stories_total',
  'num_stories_unestimated',
  'num_stories_unstarted',
] as const;

/**
 * Label stats computed from the stories and epics in the store (collections that later features fill);
 * a story's state is one of unstarted, started (in progress), done, or backlog.
 */
export function labelStats(t: TrackerState, labelId: number): Record<(typeof STAT_KEYS)[number], number> {
  const stats = Object.fromEntries(STAT_KEYS.map((k) => [k, 0])) as Record<(typeof STAT_KEYS)[number], number>;
  const stories = (t.stories ?? []).filter((s) => s.label_ids?.includes(labelId));
  for (const s of stories) {
    const points = typeof s.estimate === 'number' ? s.estimate : 0;
    const phase: string = storyPhase(s);
    stats.num_stories_total++;
    stats.num_points_total += points;
    if (s.estimate === null || s.estimate === undefined) stats.num_stories_unestimated++;
    if (phase === 'done') {
      stats.num_stories_completed++;
      stats.num_points_completed += points;
    } else if (phase === 'started') {
      stats.num_stories_in_progress++;
      stats.num_points_in_progress += points;
    } else if (phase === 'backlog') {
      stats.num_stories_backlog++;
      stats.num_points_backlog += points;
    } else {
      stats.num_stories_unstarted++;
      stats.num_points_unstarted += points;
    }
  }
  const epics = (t.epics ?? []).filter((e) => e.label_ids?.includes(labelId));
  for (const e of epics) {
    stats.num_epics++;
    stats.num_epics_total++;
    // an epic's phase is its workflow state's type (as presented: started/completed are not stored)
    const type = EPIC_STATES.find((x) => x.id === e.epic_state_id)?.type ?? 'unstarted';
    if (type === 'done') stats.num_epics_completed++;
    else if (type === 'started') stats.num_epics_in_progress++;
    else stats.num_epics_unstarted++;
  }
  stats.num_related_documents = (t.documents ?? []).filter((d) => d.label_ids?.includes(labelId)).length;
  return stats;
}

/** A label as an API response: full (with stats) or slim. */
export function presentLabel(t: TrackerState, label: Label, withStats: boolean): Label & { stats?: ReturnType<typeof labelStats> } {
  return withStats ? { ...label, stats: labelStats(t, label.id) } : { ...label };
}

const lowerName = (l: Label) => String(l.name).toLowerCase();

/** 422 when another label has this name (any case): an index of the lower-cased names, O(1) in the number of labels. */
function assertUniqueName(t: TrackerState, name: string, exceptId?: number): void {
  const first = lookup(t.labels, 'name', lowerName, name.toLowerCase());
  const clash =
    first && first.id === exceptId && hasDuplicates(t.labels, 'name', lowerName)
      ? t.labels.find((l) => l.id !== exceptId && lowerName(l) === name.toLowerCase())
      : first?.id === exceptId
        ? undefined
        : first;
  if (clash) throw new MockError(422, 'unprocessable', `a label named "${name}" already exists (id ${clash.id})`, { errors: { name: 'is already used' } });
}

export function labelRoutes(ctx: ServiceContext): Route[] {
  const { store } = ctx;
  return [
    {
      method: 'GET',
      path: `${API}/labels/:id/epics`,
      handler: async (req) => {
        const id = intParam(req, 'id');
        return reply.ok(
          await store.read((s) => {
            const t = tracker(s);
            find(t.labels, id, spec);
            return t.epics.filter((e) => e.label_ids.includes(id)).map((e) => presentEpic(t, e, true));
          }),
        );
      },
    },
    {
      method: 'GET',
      path: `${API}/labels/:id/stories`,
      handler: async (req) => {
        const id = intParam(req, 'id');
        return reply.ok(
          await store.read((s) => {
            const t = tracker(s);
            find(t.labels, id, spec);
            return storyList(t, req, (st) => st.label_ids.includes(id));
          }),
        );
      },
    },
    {
      method: 'GET',
      path: `${API}/labels`,
      handler: async (req) => {
        const slim = boolQuery(req, 'slim') ?? false;
        return reply.ok(await store.read((s) => tracker(s).labels.map((l) => presentLabel(tracker(s), l, !slim))));
      },
    },
    {
      method: 'POST',
      path: `${API}/labels`,
      handler: async (req) => {
        const body = await validate<LabelBody>(req);
        const label = await store.write((s) => {
          const t = tracker(s);
          assertUniqueName(t, body.name);
          const created = newLabel(t, body, nowIso(ctx.now()));
          t.labels.push(created);
          return presentLabel(t, created, true);
        });
        return reply.created(label);
      },
    },
    {
      method: 'GET',
      path: `${API}/labels/:id`,
      handler: async (req) => {
        const id = intParam(req, 'id');
        return reply.ok(await store.read((s) => presentLabel(tracker(s), find(tracker(s).labels, id, spec), true)));
      },
    },
    {
      method: 'PUT',
      path: `${API}/labels/:id`,
      handler: async (req) => {
        const id = intParam(req, 'id');
        const body = await validate<Partial<LabelBody>>(req);
        return reply.ok(
          await store.write((s) => {
            const t = tracker(s);
            const label = find(t.labels, id, spec);
            if (body.name !== undefined) assertUniqueName(t, body.name, id);
            assign(label, body, ['name', 'description', 'color', 'archived']);
            label.updated_at = nowIso(ctx.now());
            return presentLabel(t, label, true);
          }),
        );
      },
    },
    {
      method: 'DELETE',
      path: `${API}/labels/:id`,
      handler: async (req) => {
        const id = intParam(req, 'id');
        await store.write((s) => {
          const t = tracker(s);
          find(t.labels, id, spec);
          t.labels = t.labels.filter((l) => l.id !== id);
          for (const coll of ['stories', 'epics', 'iterations'] as const) {
            for (const item of t[coll] ?? []) {
              if (Array.isArray(item.label_ids)) item.label_ids = item.label_ids.filter((x) => x !== id);
            }
          }
        });
        return reply.noContent();
      },
    },
  ];
}
