import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMock, type TestState } from '../helpers/mock.js';
import { trackerCall } from '../helpers/tracker.js';

/**
 * Issue 25, item 2: the tracker mock accepts what the OpenAPI document accepts (31 fields it refused
 * before, each with its behaviour where the mock has one), and answers each typed error with exactly
 * its schema.
 */
let mock: Awaited<ReturnType<typeof startMock>>;
let call: ReturnType<typeof trackerCall>;

beforeAll(async () => {
  mock = await startMock({ services: ['tracker'], options: { tracker: { entitlements: { groups: 1, objectives: 1 } } } });
  call = trackerCall(mock);
});
afterAll(async () => {
  await mock.close();
});

const ok = (r: { status: number; body: unknown }, status: number) => expect({ status: r.status, body: r.body }).toMatchObject({ status });

describe('fields the document accepts and the mock used to refuse', () => {
  it('documents take content_format, tasks created_at/updated_at, categories type', async () => {
    ok(await call('POST', '/documents', { title: 't', content: 'c', content_format: 'markdown' }), 201);
    const s = await call('POST', '/stories', { name: 'task holder' });
    const task = await call('POST', `/stories/${s.body.id}/tasks`, {
      description: 'd',
      created_at: '2026-01-01T00:00:00Z',
      updated_at: '2026-01-02T00:00:00Z',
    });
    ok(task, 201);
    expect(task.body).toMatchObject({ created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-02T00:00:00Z' });
    ok(await call('POST', '/categories', { name: 'typed', type: 'objective' }), 201);
  });

  it('a story created with comments and sub-tasks has them; source_task_id is taken', async () => {
    const existing = await call('POST', '/stories', { name: 'already there' });
    const r = await call('POST', '/stories', {
      name: 'parent',
      comments: [{ text: 'first' }, { text: 'second', external_id: 'c2' }],
      sub_tasks: [{ story_id: existing.body.id }, { name: 'made as a sub-task' }],
      source_task_id: 1,
    });
    ok(r, 201);
    expect((await call('GET', `/stories/${r.body.id}/comments`)).body.map((c: { text: string }) => c.text)).toEqual(['first', 'second']);
    const subs = (await call('GET', `/stories/${r.body.id}/sub-tasks`)).body.map((x: { name: string }) => x.name);
    expect(subs.sort()).toEqual(['already there', 'made as a sub-task']);
    expect((await call('POST', '/stories', { name: 'x', sub_tasks: [{ story_id: 999999 }] })).status).toBe(422);
  });

  it('a story update takes after_id/before_id (reorders), sub_tasks (the final list) and the version-control ids', async () => {
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map(async (n) => (await call('POST', '/stories', { name: `order-${n}` })).body));
    const pos = async () => {
      const all = await Promise.all([a, b, c].map(async (x) => (await call('GET', `/stories/${x.id}`)).body));
      return all.sort((p: { position: number }, q: { position: number }) => p.position - q.position).map((x: { name: string }) => x.name);
    };
    expect(await pos()).toEqual(['order-a', 'order-b', 'order-c']);
    ok(await call('PUT', `/stories/${c.id}`, { before_id: a.id }), 200);
    expect(await pos()).toEqual(['order-c', 'order-a', 'order-b']);
    ok(await call('PUT', `/stories/${c.id}`, { after_id: b.id }), 200);
    expect(await pos()).toEqual(['order-a', 'order-b', 'order-c']);
    ok(await call('PUT', `/stories/${a.id}`, { sub_tasks: [{ story_id: b.id }], branch_ids: [1], commit_ids: [2], pull_request_ids: [3] }), 200);
    expect((await call('GET', `/stories/${a.id}/sub-tasks`)).body.map((x: { id: number }) => x.id)).toEqual([b.id]);
    ok(await call('PUT', `/stories/${a.id}`, { sub_tasks: [] }), 200);
    expect((await call('GET', `/stories/${a.id}/sub-tasks`)).body).toEqual([]);
  });

  it('create-from-template applies the _add/_remove lists to what the template gives, and takes comments, sub_tasks, source_task_id', async () => {
    const owner = (await call('GET', '/member')).body.id as string;
    const tpl = await call('POST', '/entity-templates', {
      name: 'with lists',
      story_contents: { name: 'from tpl', external_links: ['https://a.example/1', 'https://a.example/2'], labels: [{ name: 'keep' }, { name: 'drop' }] },
    });
    ok(tpl, 201);
    const r = await call('POST', '/stories/from-template', {
      story_template_id: tpl.body.id,
      external_links_add: ['https://a.example/3'],
      external_links_remove: ['https://a.example/1'],
      labels_add: [{ name: 'added' }],
      labels_remove: [{ name: 'drop' }],
      owner_ids_add: [owner],
      owner_ids_remove: [],
      follower_ids_add: [owner],
      follower_ids_remove: [owner],
      file_ids_add: [],
      file_ids_remove: [],
      linked_file_ids_add: [],
      linked_file_ids_remove: [],
      custom_fields_add: [],
      custom_fields_remove: [],
      comments: [{ text: 'from the template call' }],
      sub_tasks: [{ name: 'tpl sub' }],
      source_task_id: 1,
    });
    ok(r, 201);
    expect(r.body.external_links).toEqual(['https://a.example/2', 'https://a.example/3']);
    expect(r.body.labels.map((l: { name: string }) => l.name).sort()).toEqual(['added', 'keep']);
    expect(r.body.owner_ids).toEqual([owner]);
    expect(r.body.follower_ids).toEqual([]);
    expect((await call('GET', `/stories/${r.body.id}/comments`)).body).toHaveLength(1);
    expect((await call('GET', `/stories/${r.body.id}/sub-tasks`)).body).toHaveLength(1);
  });

  it('still refuses what the document refuses: an unknown key, a wrong type, a nested unknown key', async () => {
    expect((await call('POST', '/stories', { name: 'x', colour: 1 })).status).toBe(400);
    expect((await call('PUT', '/stories/1', { after_id: 'first' })).status).toBe(400);
    expect((await call('POST', '/stories', { name: 'x', comments: [{ text: 't', mood: 'happy' }] })).status).toBe(400);
  });
});

describe('typed errors answer exactly their schema', () => {
  it('DisabledFeatureError {message, feature_tag}', async () => {
    await mock.store.write((s: TestState) => void (s.tracker.features.documents = false));
    try {
      const r = await call('GET', '/documents');
      expect(r.status).toBe(403);
      expect(r.body).toEqual({ message: expect.any(String), feature_tag: 'documents' });
    } finally {
      await mock.store.write((s: TestState) => void (s.tracker.features.documents = true));
    }
  });

  it('UnusableEntitlementError {reason_tag, entitlement_tag, message}', async () => {
    // the entitlement is 1: the first objective (or the seed's) uses it up
    let r = await call('POST', '/objectives', { name: 'one' });
    if (r.status === 201) r = await call('POST', '/objectives', { name: 'two' });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ reason_tag: 'entitlement-violation', entitlement_tag: 'objectives', message: expect.any(String) });
  });

  it('MaxSearchResultsExceededError: 400 past the 1,000th result', async () => {
    const next = Buffer.from('o:1000').toString('base64url');
    const r = await call('GET', `/search/stories?query=x&next=${next}`);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'maximum-results-exceeded', message: 'A maximum of 1000 search results are supported.', 'maximum-results': 1000 });
  });

  it('POST /stories/{id}/comments/{id}/unlink-from-slack answers the comment (201)', async () => {
    const s = await call('POST', '/stories', { name: 'chat' });
    const c = await call('POST', `/stories/${s.body.id}/comments`, { text: 'thread' });
    const r = await call('POST', `/stories/${s.body.id}/comments/${c.body.id}/unlink-from-slack`);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ id: c.body.id, text: 'thread', linked_to_slack: false });
    expect((await call('POST', `/stories/${s.body.id}/comments/999999/unlink-from-slack`)).status).toBe(404);
  });
});
