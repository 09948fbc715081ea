import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMock, type TestState } from '../helpers/mock.js';

type Mock = Awaited<ReturnType<typeof startMock>>;

const BACKLOG = 500000001;
const TODO = 500000002;
const IN_PROGRESS = 500000003;
const DONE = 500000004;
const EPIC_TODO = 500000011;
const EPIC_STARTED = 500000012;
const EPIC_DONE = 500000013;

const LABELS = 50;
const FILLER_STORIES = 195;

/**
 * GET /labels counts each label's stories, points, epics and documents. 50 labels (alpha, beta, gamma and
 * 47 fillers) over 200 stories: five hand-made ones, each filler story on one filler label.
 */
describe('label stats of a list', () => {
  let mock: Mock;

  beforeAll(async () => {
    mock = await startMock({ services: ['tracker'] });
    await mock.store.write((s: TestState) => {
      const t = s.tracker;
      const at = '2026-01-01T00:00:00.000Z';
      for (let id = 1; id <= LABELS; id++) {
        const name = ['alpha', 'beta', 'gamma'][id - 1] ?? `filler-${id}`;
        t.labels.push({
          id,
          name,
          description: null,
          color: null,
          external_id: null,
          archived: false,
          app_url: 'u',
          entity_type: 'label',
          global_id: `g${id}`,
          created_at: at,
          updated_at: at,
        });
      }
      const story = (id: number, label_ids: number[], estimate: number | null, workflow_state_id: number) =>
        t.stories.push({ id, entity_type: 'story', name: `s${id}`, label_ids, estimate, workflow_state_id, created_at: at, updated_at: at });
      story(101, [1, 2], 3, DONE);
      story(102, [1], null, IN_PROGRESS);
      // a label named twice counts the story once
      story(103, [1, 1], 2, BACKLOG);
      story(104, [2], 5, TODO);
      story(105, [], 8, TODO);
      for (let i = 0; i < FILLER_STORIES; i++) story(1000 + i, [4 + (i % 47)], 1, TODO);
      const epic = (id: number, label_ids: number[], epic_state_id: number) =>
        t.epics.push({ id, entity_type: 'epic', name: `e${id}`, label_ids, epic_state_id });
      epic(201, [1], EPIC_DONE);
      epic(202, [1, 3], EPIC_STARTED);
      epic(203, [2], EPIC_TODO);
      t.documents.push({ id: 'd1', title: 'd1', label_ids: [3] }, { id: 'd2', title: 'd2', label_ids: [1, 3] });
      t.seq = 10_000;
    });
  });
  afterAll(async () => mock?.close());

  const list = async (): Promise<Array<{ id: number; name: string; stats: Record<string, number> }>> => {
    const r = await fetch(`${mock.url}/api/v3/labels`, { headers: { 'Tracker-Token': mock.trackerToken } });
    expect(r.status).toBe(200);
    return (await r.json()) as Array<{ id: number; name: string; stats: Record<string, number> }>;
  };

  it('gives each label the figures counted by hand: stories and points by phase, epics by state, documents', async () => {
    const labels = await list();
    expect(labels).toHaveLength(LABELS);
    const stats = (name: string) => labels.find((l) => l.name === name)!.stats;
    const none = Object.fromEntries(Object.keys(stats('alpha')).map((k) => [k, 0]));
    expect(Object.keys(none)).toHaveLength(17);
    expect(stats('alpha')).toEqual({
      ...none,
      num_stories_total: 3,
      num_points_total: 5,
      num_stories_unestimated: 1,
      num_stories_completed: 1,
      num_points_completed: 3,
      num_stories_in_progress: 1,
      num_stories_backlog: 1,
      num_points_backlog: 2,
      num_epics: 2,
      num_epics_total: 2,
      num_epics_completed: 1,
      num_epics_in_progress: 1,
      num_related_documents: 1,
    });
    expect(stats('beta')).toEqual({
      ...none,
      num_stories_total: 2,
      num_points_total: 8,
      num_stories_completed: 1,
      num_points_completed: 3,
      num_stories_unstarted: 1,
      num_points_unstarted: 5,
      num_epics: 1,
      num_epics_total: 1,
      num_epics_unstarted: 1,
    });
    expect(stats('gamma')).toEqual({ ...none, num_epics: 1, num_epics_total: 1, num_epics_in_progress: 1, num_related_documents: 2 });
    // filler-4 has the filler stories 0, 47, 94, 141 and 188
    expect(stats('filler-4')).toEqual({ ...none, num_stories_total: 5, num_points_total: 5, num_stories_unstarted: 5, num_points_unstarted: 5 });
    // every filler story is counted once, on its one label
    expect(labels.slice(3).reduce((n, l) => n + (l.stats.num_stories_total ?? 0), 0)).toBe(FILLER_STORIES);
  });

  it("reads each story's labels once per list, not once per label (O(labels + stories))", async () => {
    const reads = await mock.store.read((s: TestState) => {
      const counter = { n: 0 };
      for (const st of s.tracker.stories) {
        const ids = st.label_ids as number[];
        Object.defineProperty(st, 'label_ids', { enumerable: true, configurable: true, get: () => (counter.n++, ids) });
      }
      return counter;
    });
    const stories = FILLER_STORIES + 5;
    await list();
    // one scan per label read them 50 × 200 = 10,000 times
    expect(reads.n).toBeGreaterThanOrEqual(stories);
    expect(reads.n).toBeLessThanOrEqual(2 * stories);
  });
});
