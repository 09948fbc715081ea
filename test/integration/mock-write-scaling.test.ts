import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexStats } from '@opsctl/mock/indexes.js';
import { txStats } from '@opsctl/mock/tx.js';
import { labelsApi, mintToken, type Api } from '../helpers/labels.js';
import { startMock, type TestState } from '../helpers/mock.js';

/**
 * Every write of the tracker and the label service costs the records it touches, not the size of the
 * store: each write below is made once at a small store and once at a store ten times as big, and the
 * work it does is counted (objects the write reached through the store's transaction, values it changed,
 * indexes it had to build). The counts must be the same at both sizes. Counting is exact, not timed.
 */
const SMALL = 200;
const LARGE = 2_000;

interface Work {
  proxied: number;
  changed: number;
  builds: number;
}

let mock: Awaited<ReturnType<typeof startMock>>;
let labels: Api;
let epicId: number;

const tracker = async (method: string, path: string, body?: unknown): Promise<any> => {
  const res = await fetch(`${mock.url}/api/v3${path}`, {
    method,
    headers: { 'content-type': 'application/json', 'shortcut-token': mock.trackerToken },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
};

/** Stories as an import makes them: each with a label of its own, a task, a comment, half of them in the epic, a sub-task and a link now and then. */
async function growStoriesTo(n: number): Promise<void> {
  let have = await mock.store.read((s: TestState) => (s.tracker.stories as unknown[]).length);
  while (have < n) {
    const batch = Array.from({ length: Math.min(100, n - have) }, (_, i) => {
      const k = have + i;
      return {
        name: `seed ${k}`,
        external_id: `seed-${k}`,
        labels: [{ name: `seed-label-${k}` }],
        tasks: [{ description: 'a task' }],
        comments: [{ text: 'a comment' }],
        ...(k % 2 === 0 ? { epic_id: epicId } : {}),
      };
    });
    const made = (await tracker('POST', '/stories/bulk', { stories: batch })) as Array<{ id: number }>;
    await tracker('POST', '/story-links', { verb: 'blocks', subject_id: made[0]!.id, object_id: made[1]!.id });
    have += batch.length;
  }
}

/** Label-service labels: one made through the API, copied (with new ids) straight into the store. */
async function growLabelsTo(n: number): Promise<string> {
  const first = await labels('POST', '/v2/labels', { labelType: 'SHARED', properties: { title: 'Scaling' } });
  expect(first.status).toBe(200);
  await mock.store.write((s: TestState) => {
    const list = s.labels.labels as Array<Record<string, unknown>>;
    const model = JSON.stringify(list.find((l) => l.id === first.body.id));
    while (list.length < n) {
      const id = `seed${list.length}`;
      list.push({ ...JSON.parse(model), id, name: `labels/${id}` });
    }
  });
  return first.body.id as string;
}

/** The work of one call of `write`, after a first call has built what it builds once. */
async function workOf(write: () => Promise<unknown>): Promise<Work> {
  await write();
  const builds = indexStats.builds;
  await write();
  return { proxied: txStats.proxied, changed: txStats.changed, builds: indexStats.builds - builds };
}

beforeAll(async () => {
  mock = await startMock({ services: ['tracker', 'labels'], options: { tracker: { rateLimit: { limit: 1_000_000, windowMs: 60_000 } } } });
  await mock.service('labels');
  labels = labelsApi(mock, await mintToken(mock));
  epicId = ((await tracker('POST', '/epics', { name: 'the epic' })) as { id: number }).id;
}, 120_000);
afterAll(async () => {
  await mock.close();
});

describe(`a write does the same work with ${SMALL} or ${LARGE} stories (and labels) in the store`, () => {
  let n = 0;
  let ids: number[] = [];
  const writes: Array<[string, () => Promise<unknown>]> = [
    [
      'story create (labels, a task, a comment, in the epic)',
      () =>
        tracker('POST', '/stories', {
          name: `one ${n++}`,
          epic_id: epicId,
          labels: [{ name: 'ui' }],
          tasks: [{ description: 't' }],
          comments: [{ text: 'c' }],
        }),
    ],
    [
      'bulk story create (10 stories)',
      () => tracker('POST', '/stories/bulk', { stories: Array.from({ length: 10 }, (_, i) => ({ name: `bulk ${n++} ${i}`, labels: [{ name: 'ui' }] })) }),
    ],
    [
      'story update (renamed, moved last, a label)',
      () => tracker('PUT', `/stories/${ids[0]}`, { name: `renamed ${n++}`, move_to: 'last', labels: [{ name: 'ux' }] }),
    ],
    [
      'bulk story update (3 stories, a label added)',
      () => tracker('PUT', '/stories/bulk', { story_ids: ids.slice(0, 3), labels_add: [{ name: 'bulk-label' }] }),
    ],
    ['label create', () => tracker('POST', '/labels', { name: `label ${n++}` })],
    ['epic create', () => tracker('POST', '/epics', { name: `epic ${n++}`, labels: [{ name: 'ui' }] })],
    ['comment create', () => tracker('POST', `/stories/${ids[3]}/comments`, { text: `comment ${n++}` })],
  ];
  const small = new Map<string, Work>();
  let labelId = '';
  const delta = () =>
    labels('POST', `/v2/labels/${labelId}:delta`, { requests: [{ updateLabel: { properties: { title: `Scaling ${n++}` }, updateMask: 'title' } }] }).then(
      (r) => {
        if (r.status !== 200) throw new Error(`delta: ${r.status} ${JSON.stringify(r.body)}`);
      },
    );

  it(`at ${SMALL}: every write counted`, async () => {
    await growStoriesTo(SMALL);
    ids = await mock.store.read((s: TestState) => (s.tracker.stories as Array<{ id: number }>).slice(0, 4).map((x) => x.id));
    labelId = await growLabelsTo(SMALL);
    for (const [name, write] of writes) small.set(name, await workOf(write));
    small.set('label service delta', await workOf(delta));
    // the counts are real: each write reached and changed something
    for (const [name, w] of small) {
      expect(w.proxied, name).toBeGreaterThan(0);
      expect(w.changed, name).toBeGreaterThan(0);
    }
  }, 300_000);

  it(`at ${LARGE}: each write's work is what it was at ${SMALL}, and no index is rebuilt`, async () => {
    expect(small.size).toBe(writes.length + 1);
    await growStoriesTo(LARGE);
    labelId = await growLabelsTo(LARGE);
    const large = new Map<string, Work>();
    for (const [name, write] of writes) large.set(name, await workOf(write));
    large.set('label service delta', await workOf(delta));
    const counts = (m: Map<string, Work>) => Object.fromEntries([...m].map(([name, w]) => [name, { proxied: w.proxied, changed: w.changed }]));
    expect(counts(large)).toEqual(counts(small));
    // the indexes were kept current through the growth: none is rebuilt by a write at the larger size
    for (const [name, w] of large) expect(w.builds, name).toBe(0);
  }, 300_000);
});
