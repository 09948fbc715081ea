import { labels as spec } from '@opsctl/shared/tracker/resources/labels.js';
import { MockError, reply } from '../../http.js';
import { hasDuplicates, lookup } from '../../indexes.js';
import type { Route, ServiceContext } from '../../service.js';
import { phase as storyPhase } from './stats.js';
import { EPIC_STATES } from './state.js';
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

type LabelStats = Record<(typeof STAT_KEYS)[number], number>;

/** A story's phase → the label stats it counts in (stories, points). */
const PHASE_KEYS = {
  done: ['num_stories_completed', 'num_points_completed'],
  started: ['num_stories_in_progress', 'num_points_in_progress'],
  backlog: ['num_stories_backlog', 'num_points_backlog'],
  unstarted: ['num_stories_unstarted', 'num_points_unstarted'],
} as const satisfies Record<ReturnType<typeof storyPhase>, readonly [keyof LabelStats, keyof LabelStats]>;

const noStats = (): LabelStats => Object.fromEntries(STAT_KEYS.map((k) => [k, 0])) as LabelStats;

/**
 * The stats of the labels `ids`, computed from the stories, epics and documents in the store in one pass
 * over each (a record's labels looked up in a Map): a list of L labels over S stories costs O(L + S), not
 * O(L × S). A story's state is one of unstarted, started (in progress), done, or backlog.
 */
export function labelStatsOf(t: TrackerState, ids: Iterable<number>): Map<number, LabelStats> {
  const all = new Map<number, LabelStats>();
  for (const id of ids) all.set(id, noStats());
  /** The stats of each label of `labelIds` that was asked for, each once however often the record names it. */
  const statsOf = (labelIds: readonly number[] | undefined): LabelStats[] =>
    (labelIds ?? []).filter((id, i) => all.has(id) && labelIds!.indexOf(id) === i).map((id) => all.get(id)!);
  for (const s of t.stories ?? []) {
    const mine = statsOf(s.label_ids);
    if (mine.length === 0) continue;
    const points = typeof s.estimate === 'number' ? s.estimate : 0;
    const [stories, pointsKey] = PHASE_KEYS[storyPhase(s)];
    for (const stats of mine) {
      stats.num_stories_total++;
      stats.num_points_total += points;
      if (s.estimate === null || s.estimate === undefined) stats.num_stories_unestimated++;
      stats[stories]++;
      stats[pointsKey] += points;
    }
  }
  for (const e of t.epics ?? []) {
    const mine = statsOf(e.label_ids);
    if (mine.length === 0) continue;
    // an epic's phase is its workflow state's type (as presented: started/completed are not stored)
    const type = EPIC_STATES.find((x) => x.id === e.epic_state_id)?.type ?? 'unstarted';
    const key = type === 'done' ? 'num_epics_completed' : type === 'started' ? 'num_epics_in_progress' : 'num_epics_unstarted';
    for (const stats of mine) {
      stats.num_epics++;
      stats.num_epics_total++;
      stats[key]++;
    }
  }
  for (const d of t.documents ?? []) for (const stats of statsOf(d.label_ids)) stats.num_related_documents++;
  return all;
}

/** One label's stats (labelStatsOf for one id). */
export function labelStats(t: TrackerState, labelId: number): LabelStats {
  return labelStatsOf(t, [labelId]).get(labelId)!;
}

/** A label as an API response: full (with stats: given, when computed for a whole list, or computed here) or slim. */
export function presentLabel(t: TrackerState, label: Label, withStats: boolean, stats?: LabelStats): Label & { stats?: LabelStats } {
  return withStats ? { ...label, stats: stats ?? labelStats(t, label.id) } : { ...label };
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
        // the epics' and the stories' code loads with the first request that needs it, not with a label list
        const { presentEpic } = await import('./epics.js');
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
        const { storyList } = await import('./stories.js');
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
        return reply.ok(
          await store.read((s) => {
            const t = tracker(s);
            // every label's stats from one pass over the stories (O(labels + stories)), not one scan per label
            const stats = slim
              ? undefined
              : labelStatsOf(
                  t,
                  t.labels.map((l) => l.id),
                );
            return t.labels.map((l) => presentLabel(t, l, !slim, stats?.get(l.id)));
          }),
        );
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
          // a label just made has a new id: no story, epic or document names it yet (no scan needed to say so)
          return presentLabel(t, created, true, noStats());
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
