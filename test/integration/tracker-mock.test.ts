import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMock, type TestState } from '../helpers/mock.js';
import { trackerCall } from '../helpers/tracker.js';

let mock: Awaited<ReturnType<typeof startMock>>;
let call: ReturnType<typeof trackerCall>;

beforeAll(async () => {
  mock = await startMock({ services: ['tracker'], options: { tracker: { entitlements: { groups: 2, objectives: 3 } } } });
  call = trackerCall(mock);
});
afterAll(async () => {
  await mock.close();
});

describe('categories', () => {
  it('CRUD, duplicate name 422, milestones/objectives of a category', async () => {
    const c = await call('POST', '/categories', { name: 'Infra', color: '#112233', external_id: 'x1' });
    expect(c.status).toBe(201);
    expect(c.body).toMatchObject({ name: 'Infra', color: '#112233', archived: false, entity_type: 'category' });
    expect((await call('GET', `/categories/${c.body.id}`)).body.name).toBe('Infra');
    const other = await call('POST', '/categories', { name: 'Other' });
    const dup = await call('PUT', `/categories/${other.body.id}`, { name: 'infra' });
    expect(dup.status).toBe(422);
    expect(dup.body.message).toMatch(/already exists/);
    expect((await call('PUT', `/categories/${c.body.id}`, { archived: true, color: null })).body).toMatchObject({ archived: true, color: null });
    expect((await call('POST', '/categories', { name: 'x', color: 'blue' })).status).toBe(400);
    expect((await call('POST', '/categories', { name: 'x'.repeat(129) })).status).toBe(413);
    const o = await call('POST', '/objectives', { name: 'Grow', categories: [{ name: 'Infra' }] });
    expect(o.status).toBe(201);
    expect((await call('GET', `/categories/${c.body.id}/objectives`)).body.map((x: any) => x.id)).toEqual([o.body.id]);
    expect((await call('GET', `/categories/${c.body.id}/milestones`)).body).toHaveLength(1);
    expect((await call('GET', '/categories')).body.length).toBeGreaterThanOrEqual(2);
    expect((await call('DELETE', `/categories/${other.body.id}`)).status).toBe(204);
    expect((await call('GET', `/categories/${other.body.id}`)).status).toBe(404);
  });
});

describe('custom fields', () => {
  it('applies the values rules: order is sort order, omitted deleted, no id created; 409 on conflict', async () => {
    const list = (await call('GET', '/custom-fields')).body;
    const f = list.find((x: any) => x.name === 'Priority');
    const [highest, high] = f.values;
    const r = await call('PUT', `/custom-fields/${f.id}`, { values: [{ id: high.id }, { id: highest.id, color_key: 'blue' }, { value: 'Someday' }] });
    expect(r.status).toBe(200);
    expect(r.body.values.map((v: any) => [v.value, v.position])).toEqual([
      ['High', 1],
      ['Highest', 2],
      ['Someday', 3],
    ]);
    expect(r.body.values[1].color_key).toBe('blue');
    expect(r.body.values[2].id).toMatch(/^[0-9a-f-]{36}$/);
    const conflict = await call('PUT', `/custom-fields/${f.id}`, { values: [{ id: '00000000-0000-4000-8000-000000000000' }] });
    expect(conflict.status).toBe(409);
    expect(conflict.body).toEqual({ error: 'data-conflict-error', message: expect.any(String) });
    expect((await call('PUT', `/custom-fields/${f.id}`, { values: [{ value: 'A' }, { value: 'a' }] })).status).toBe(409);
    expect((await call('PUT', `/custom-fields/${f.id}`, { name: 'n'.repeat(64) })).status).toBe(413);
    expect((await call('PUT', `/custom-fields/${f.id}`, { enabled: false })).body.enabled).toBe(false);
    const other = list.find((x: any) => x.name === 'Severity');
    expect((await call('PUT', `/custom-fields/${other.id}`, { before_id: f.id })).body.position).toBe(1);
    expect((await call('DELETE', `/custom-fields/${other.id}`)).status).toBe(204);
    expect((await call('GET', `/custom-fields/${other.id}`)).status).toBe(404);
    expect((await call('GET', '/custom-fields/not-a-uuid')).status).toBe(400);
  });
});

describe('documents', () => {
  it('creates and lists while on, 403 DisabledFeatureError while off', async () => {
    const d = await call('POST', '/documents', { title: 'Runbook', content: '# steps' });
    expect(d.status).toBe(201);
    expect(Object.keys(d.body).sort()).toEqual(['app_url', 'id', 'title']);
    expect((await call('GET', '/documents')).body).toHaveLength(1);
    expect((await call('POST', '/documents', { title: 't'.repeat(257), content: 'x' })).status).toBe(413);
    await mock.store.write((s: TestState) => void (s.tracker.features.documents = false));
    const off = await call('GET', '/documents');
    expect(off.status).toBe(403);
    expect(off.body).toEqual({ message: expect.any(String), feature_tag: expect.any(String) });
    expect((await call('POST', '/documents', { title: 'x', content: 'y' })).status).toBe(403);
    await mock.store.write((s: TestState) => void (s.tracker.features.documents = true));
  });
});

describe('entity templates', () => {
  it('CRUD and enable/disable', async () => {
    const t = await call('POST', '/entity-templates', { name: 'Bug', story_contents: { story_type: 'bug', labels: [{ name: 'triage' }] } });
    expect(t.status).toBe(201);
    expect(t.body.story_contents).toMatchObject({ story_type: 'bug', entity_type: 'story-contents' });
    expect((await call('PUT', `/entity-templates/${t.body.id}`, { name: 'Bug report', story_contents: { estimate: 1 } })).body.story_contents).toMatchObject({
      story_type: 'bug',
      estimate: 1,
    });
    expect((await call('POST', '/entity-templates', { name: 'x' })).status).toBe(400);
    // the document types story_contents.story_type as any string (only the story bodies have the enum)
    expect((await call('POST', '/entity-templates', { name: 'x', story_contents: { story_type: 7 } })).status).toBe(400);
    expect((await call('PUT', '/entity-templates/disable')).status).toBe(204);
    expect(await mock.store.read((s: TestState) => s.tracker.features.story_templates)).toBe(false);
    expect((await call('PUT', '/entity-templates/enable')).status).toBe(204);
    expect((await call('GET', '/entity-templates')).body).toHaveLength(1);
    expect((await call('DELETE', `/entity-templates/${t.body.id}`)).status).toBe(204);
  });
});

describe('epics', () => {
  it('full bodies, epic_state_id over state, null clears overrides, moves, paginated, stats from stories', async () => {
    const wf = (await call('GET', '/epic-workflow')).body;
    const [todo, doing, done] = wf.epic_states;
    expect(todo.type).toBe('unstarted');
    const a = await call('POST', '/epics', {
      name: 'A',
      state: 'done',
      epic_state_id: doing.id,
      started_at_override: '2026-01-01T00:00:00Z',
      labels: [{ name: 'epic-label', color: '#abcdef' }],
    });
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({
      epic_state_id: doing.id,
      state: 'in progress',
      started: true,
      completed: false,
      comments: [],
      started_at_override: '2026-01-01T00:00:00Z',
    });
    expect(a.body.health.status).toBe('No Health');
    expect(a.body.labels[0]).toMatchObject({ name: 'epic-label' });
    expect(a.body.labels[0].stats).toBeUndefined();
    const b = await call('POST', '/epics', { name: 'B', state: 'done' });
    expect(b.body).toMatchObject({ epic_state_id: done.id, completed: true });
    expect((await call('POST', '/epics', { name: 'C', epic_state_id: 42 })).status).toBe(422);
    expect((await call('POST', '/epics', { name: 'C', state: 'started' })).status).toBe(400);
    expect((await call('POST', '/epics', { name: 'n'.repeat(257) })).status).toBe(413);
    const cleared = await call('PUT', `/epics/${a.body.id}`, { started_at_override: null, deadline: null });
    expect(cleared.body).toMatchObject({ started_at_override: null, deadline: null });
    expect((await call('PUT', `/epics/${b.body.id}`, { before_id: a.body.id })).body.position).toBeLessThan(
      (await call('GET', `/epics/${a.body.id}`)).body.position,
    );
    expect((await call('PUT', `/epics/${b.body.id}`, { after_id: 999999 })).status).toBe(422);

    const project = await call('POST', '/projects', { name: 'P', team_id: 1 });
    await call('POST', '/stories', { name: 's1', epic_id: a.body.id, estimate: 3, project_id: project.body.id });
    await call('POST', '/stories', { name: 's2', epic_id: a.body.id, workflow_state_id: 500000004 });
    const withStats = (await call('GET', `/epics/${a.body.id}`)).body;
    expect(withStats.stats).toMatchObject({ num_stories_total: 2, num_points: 3, num_stories_done: 1, num_stories_unestimated: 1 });
    expect(withStats.stories_without_projects).toBe(1);
    expect((await call('GET', `/epics/${a.body.id}/stories`)).body.map((s: any) => s.name)).toEqual(['s1', 's2']);

    const list = (await call('GET', '/epics')).body;
    expect(list[0].comments).toBeUndefined();
    expect(list[0].health).toBeUndefined();
    for (let i = 0; i < 3; i++) await call('POST', '/epics', { name: `E${i}` });
    const p1 = (await call('GET', '/epics/paginated?page=1&page_size=2')).body;
    expect(p1).toMatchObject({ next: 2, total: 5 });
    expect(p1.data).toHaveLength(2);
    expect((await call('GET', '/epics/paginated?page=3&page_size=2')).body).toMatchObject({ next: null });
    expect((await call('GET', '/epics/paginated?page=0')).status).toBe(400);
    expect((await call('GET', '/epics/paginated?page_size=251')).status).toBe(400);
    expect((await call('GET', '/epics/paginated?page_size=0')).status).toBe(400);

    await mock.store.write(
      (s: TestState) => void (s.tracker.epics.find((e: any) => e.id === a.body.id).planningtool_id = '11111111-1111-4111-8111-111111111111'),
    );
    expect((await call('POST', `/epics/${a.body.id}/unlink-planningtool`)).status).toBe(204);
    expect((await call('GET', `/epics/${a.body.id}`)).body.planningtool_id).toBeNull();
    expect((await call('DELETE', `/epics/${b.body.id}`)).status).toBe(204);
    expect((await call('GET', `/epics/${b.body.id}`)).status).toBe(404);
  });

  it('threaded comments with nested replies, and health most recent first', async () => {
    const e = (await call('POST', '/epics', { name: 'Talk' })).body;
    const c1 = await call('POST', `/epics/${e.id}/comments`, { text: 'first' });
    expect(c1.status).toBe(201);
    const r1 = await call('POST', `/epics/${e.id}/comments/${c1.body.id}`, { text: 'reply' });
    const r2 = await call('POST', `/epics/${e.id}/comments/${r1.body.id}`, { text: 'reply to reply' });
    expect(r2.status).toBe(201);
    const tree = (await call('GET', `/epics/${e.id}/comments`)).body;
    expect(tree).toHaveLength(1);
    expect(tree[0].comments[0].text).toBe('reply');
    expect(tree[0].comments[0].comments[0].text).toBe('reply to reply');
    expect((await call('GET', `/epics/${e.id}`)).body.comments[0].comments).toHaveLength(1);
    expect((await call('PUT', `/epics/${e.id}/comments/${r1.body.id}`, { text: 'edited' })).body.text).toBe('edited');
    expect((await call('PUT', `/epics/${e.id}/comments/${r1.body.id}`, {})).status).toBe(400);
    expect((await call('POST', `/epics/${e.id}/comments`, { text: 'x'.repeat(100_001) })).status).toBe(413);
    expect((await call('DELETE', `/epics/${e.id}/comments/${c1.body.id}`)).status).toBe(204);
    expect((await call('GET', `/epics/${e.id}/comments/${r2.body.id}`)).status).toBe(404);

    const h1 = await call('POST', `/epics/${e.id}/health`, { status: 'At Risk', text: 'slow' });
    expect(h1.status).toBe(201);
    await call('POST', `/epics/${e.id}/health`, { status: 'On Track' });
    expect((await call('GET', `/epics/${e.id}/health`)).body.status).toBe('On Track');
    expect((await call('GET', `/epics/${e.id}/health-history`)).body.map((h: any) => h.status)).toEqual(['On Track', 'At Risk']);
    expect((await call('POST', `/epics/${e.id}/health`, { status: 'Fine' })).status).toBe(400);
    expect((await call('PUT', `/health/${h1.body.id}`, { status: 'Off Track' })).body.status).toBe('Off Track');
    expect((await call('PUT', '/health/00000000-0000-4000-8000-000000000000', { status: 'Off Track' })).status).toBe(404);
  });
});

describe('files and linked files', () => {
  it('uploads file0..file3 with names from the parts, attaches to a story, updates without touching content', async () => {
    const story = (await call('POST', '/stories', { name: 'with files' })).body;
    const form = new FormData();
    form.append('story_id', String(story.id));
    form.append('file0', new Blob(['hello'], { type: 'text/plain' }), 'a.txt');
    form.append('file1', new Blob([new Uint8Array([1, 2, 3])], { type: 'image/png' }), 'b.png');
    const res = await fetch(`${mock.url}/api/v3/files`, { method: 'POST', headers: { 'tracker-token': mock.trackerToken }, body: form });
    expect(res.status).toBe(201);
    const up = (await res.json()) as any[];
    expect(up.map((f) => [f.name, f.size, f.content_type, f.story_ids])).toEqual([
      ['a.txt', 5, 'text/plain', [story.id]],
      ['b.png', 3, 'image/png', [story.id]],
    ]);
    expect((await call('GET', `/stories/${story.id}`)).body.files.map((f: any) => f.id)).toEqual(up.map((f) => f.id));
    const upd = await call('PUT', `/files/${up[0].id}`, { name: 'renamed.txt', description: 'd' });
    expect(upd.body).toMatchObject({ name: 'renamed.txt', size: 5, content_type: 'text/plain' });
    expect((await call('PUT', `/files/${up[0].id}`, { description: 'd'.repeat(4097) })).status).toBe(413);
    const none = new FormData();
    none.append('file1', new Blob(['x']), 'x.txt');
    expect((await fetch(`${mock.url}/api/v3/files`, { method: 'POST', headers: { 'tracker-token': mock.trackerToken }, body: none })).status).toBe(400);
    const extra = new FormData();
    extra.append('file0', new Blob(['x']), 'x.txt');
    extra.append('file4', new Blob(['x']), 'y.txt');
    expect((await fetch(`${mock.url}/api/v3/files`, { method: 'POST', headers: { 'tracker-token': mock.trackerToken }, body: extra })).status).toBe(400);
    expect((await call('DELETE', `/files/${up[1].id}`)).status).toBe(204);
    expect((await call('GET', `/stories/${story.id}`)).body.files.map((f: any) => f.id)).toEqual([up[0].id]);
  });

  it('linked files: the type enum, required fields, story link', async () => {
    const story = (await call('POST', '/stories', { name: 'linked' })).body;
    const l = await call('POST', '/linked-files', { name: 'spec', type: 'storage_b', url: 'https://x/spec', story_id: story.id });
    expect(l.status).toBe(201);
    expect(l.body.story_ids).toEqual([story.id]);
    expect((await call('GET', `/stories/${story.id}`)).body.linked_files.map((f: any) => f.id)).toEqual([l.body.id]);
    expect((await call('POST', '/linked-files', { name: 'x', type: 'dropbox', url: 'https://x' })).status).toBe(400);
    expect((await call('POST', '/linked-files', { name: 'x', type: 'url' })).status).toBe(400);
    expect((await call('POST', '/linked-files', { name: 'x', type: 'url', url: `https://${'u'.repeat(2041)}` })).status).toBe(413);
    expect((await call('PUT', `/linked-files/${l.body.id}`, { type: 'url' })).body.type).toBe('url');
    expect((await call('GET', '/linked-files')).body).toHaveLength(1);
    expect((await call('DELETE', `/linked-files/${l.body.id}`)).status).toBe(204);
  });

  it('external-link stories', async () => {
    await call('POST', '/stories', { name: 'linked out', external_links: ['https://ci.example/run/1'] });
    const r = await call('GET', `/external-link/stories?external_link=${encodeURIComponent('https://ci.example/run/1')}`);
    expect(r.body.map((s: any) => s.name)).toEqual(['linked out']);
    expect((await call('GET', '/external-link/stories')).status).toBe(400);
  });
});

describe('groups', () => {
  it('color keys, entitlement 403, stories with limit/offset', async () => {
    const g = await call('POST', '/groups', { name: 'Platform', mention_name: 'platform', color_key: 'midnight-blue', color: '#000000' });
    expect(g.status).toBe(201);
    expect(g.body).toMatchObject({ color_key: 'midnight-blue', archived: false, num_stories: 0 });
    expect((await call('POST', '/groups', { name: 'x', mention_name: 'x', color_key: 'navy' })).status).toBe(400);
    expect((await call('POST', '/groups', { name: 'x', mention_name: 'm'.repeat(64) })).status).toBe(413);
    const g2 = await call('POST', '/groups', { name: 'Web', mention_name: 'web' });
    expect(g2.status).toBe(201);
    const over = await call('POST', '/groups', { name: 'Third', mention_name: 'third' });
    expect(over.status).toBe(403);
    expect(over.body).toEqual({ reason_tag: 'entitlement-violation', entitlement_tag: expect.any(String), message: expect.any(String) });
    await call('PUT', `/groups/${g2.body.id}`, { archived: true });
    expect((await call('POST', '/groups', { name: 'Third', mention_name: 'third' })).status).toBe(201);
    const unarchive = await call('PUT', `/groups/${g2.body.id}`, { archived: false });
    expect(unarchive.status).toBe(403);
    for (let i = 0; i < 5; i++) await call('POST', '/stories', { name: `g${i}`, group_id: g.body.id });
    expect((await call('GET', `/groups/${g.body.id}`)).body.num_stories).toBe(5);
    expect((await call('GET', `/groups/${g.body.id}/stories?limit=2&offset=3`)).body.map((s: any) => s.name)).toEqual(['g3', 'g4']);
    expect((await call('GET', `/groups/${g.body.id}/stories?limit=1001`)).status).toBe(400);
    expect((await call('GET', `/groups/${g.body.id}/stories`)).body).toHaveLength(5);
    expect((await call('PUT', `/groups/${g.body.id}`, { color: null, display_icon_id: null })).body.color).toBeNull();
  });
});

describe('webhook integration, members, repositories, key results', () => {
  it('registers, reads and deletes a webhook', async () => {
    expect((await call('POST', '/integrations/webhook', { webhook_url: 'https://ci.example/hook', secret: 's' })).status).toBe(204);
    const id = await mock.store.read((s: TestState) => s.tracker.webhooks[0].id);
    const got = await call('GET', `/integrations/webhook/${id}`);
    expect(got.body).toMatchObject({ id, webhook_url: 'https://ci.example/hook', has_secret: true });
    expect(JSON.stringify(got.body)).not.toContain('"s"');
    expect((await call('POST', '/integrations/webhook', {})).status).toBe(400);
    expect((await call('DELETE', `/integrations/webhook/${id}`)).status).toBe(204);
    expect((await call('GET', `/integrations/webhook/${id}`)).status).toBe(404);
  });

  it('member, members with the disabled filter', async () => {
    const me = (await call('GET', '/member')).body;
    expect(me).toMatchObject({ mention_name: 'owner', workspace2: { url_slug: 'example' } });
    expect((await call('GET', '/members')).body).toHaveLength(3);
    expect((await call('GET', '/members?disabled=true')).body.map((m: any) => m.profile.mention_name)).toEqual(['former']);
    expect((await call('GET', '/members?disabled=false')).body).toHaveLength(2);
    expect((await call('GET', `/members/${me.id}`)).body.role).toBe('owner');
    expect((await call('GET', '/members?disabled=maybe')).status).toBe(400);
  });

  it('repositories and key results', async () => {
    const repos = (await call('GET', '/repositories')).body;
    expect(repos[0]).toMatchObject({ full_name: 'example/api', entity_type: 'repository' });
    expect((await call('GET', `/repositories/${repos[0].id}`)).status).toBe(200);
    const kr = (await mock.store.read((s: TestState) => s.tracker.keyResults)).find((k: any) => k.type === 'numeric');
    const upd = await call('PUT', `/key-results/${kr.id}`, { observed_value: { numeric_value: '310' }, name: 'WAT' });
    expect(upd.body).toMatchObject({ name: 'WAT', current_observed_value: { numeric_value: '310' }, progress: 50 });
    expect((await call('PUT', `/key-results/${kr.id}`, { observed_value: { boolean_value: true } })).status).toBe(422);
    expect((await call('PUT', `/key-results/${kr.id}`, { name: 'n'.repeat(1025) })).status).toBe(413);
  });
});

describe('iterations, labels, objectives, projects, stories', () => {
  it('iterations: CRUD, enable/disable, stories, stats', async () => {
    const it1 = await call('POST', '/iterations', { name: 'Sprint 1', start_date: '2026-01-05', end_date: '2026-01-19', labels: [{ name: 'sprint-label' }] });
    expect(it1.status).toBe(201);
    expect(it1.body.labels[0].stats).toBeDefined();
    expect((await call('POST', '/iterations', { name: 'x', start_date: '2026-01-05' })).status).toBe(400);
    expect((await call('POST', '/iterations', { name: 'x', start_date: '2026-01-05', end_date: '2026-01-01' })).status).toBe(422);
    await call('POST', '/stories', { name: 'in sprint', iteration_id: it1.body.id, estimate: 2, workflow_state_id: 500000003 });
    expect((await call('GET', `/iterations/${it1.body.id}`)).body.stats).toMatchObject({ num_points: 2, num_stories_started: 1 });
    expect((await call('GET', `/iterations/${it1.body.id}/stories`)).body).toHaveLength(1);
    expect((await call('GET', '/iterations')).body[0].description).toBeUndefined();
    expect((await call('PUT', `/iterations/${it1.body.id}`, { name: 'Sprint One' })).body.name).toBe('Sprint One');
    expect((await call('PUT', '/iterations/disable')).status).toBe(204);
    expect((await call('PUT', '/iterations/enable')).status).toBe(204);
    expect((await call('DELETE', `/iterations/${it1.body.id}`)).status).toBe(204);
  });

  it('labels: stats computed from stories and epics, epics and stories of a label', async () => {
    const l = (await call('POST', '/labels', { name: 'stat-label' })).body;
    await call('POST', '/stories', { name: 'ls1', labels: [{ name: 'stat-label' }], estimate: 5, workflow_state_id: 500000004 });
    await call('POST', '/epics', { name: 'le', labels: [{ name: 'stat-label' }] });
    const got = (await call('GET', `/labels/${l.id}`)).body;
    expect(got.stats).toMatchObject({ num_stories_total: 1, num_stories_completed: 1, num_points_completed: 5, num_epics_total: 1, num_epics_unstarted: 1 });
    expect((await call('GET', `/labels/${l.id}/stories`)).body.map((s: any) => s.name)).toEqual(['ls1']);
    expect((await call('GET', `/labels/${l.id}/epics`)).body.map((e: any) => e.name)).toEqual(['le']);
  });

  it('objectives and the deprecated milestone aliases, entitlement 403', async () => {
    const m = await call('POST', '/milestones', { name: 'Old style', state: 'in progress' });
    expect(m.status).toBe(201);
    expect((await call('GET', `/objectives/${m.body.id}`)).body).toMatchObject({ name: 'Old style', started: true });
    const e = (await call('POST', '/epics', { name: 'linked', milestone_id: m.body.id })).body;
    expect(e.objective_ids).toEqual([m.body.id]);
    expect((await call('GET', `/milestones/${m.body.id}/epics`)).body.map((x: any) => x.id)).toEqual([e.id]);
    expect((await call('PUT', `/objectives/${m.body.id}`, { state: 'done', completed_at_override: null })).body).toMatchObject({
      completed: true,
      completed_at_override: null,
    });
    // the seeded objective ("Grow adoption") and the two made here use the entitlement of 3
    expect((await call('GET', '/objectives')).body).toHaveLength(3);
    const over = await call('POST', '/objectives', { name: 'too many' });
    expect(over.status).toBe(403);
    expect(over.body).toEqual({ reason_tag: 'entitlement-violation', entitlement_tag: expect.any(String), message: expect.any(String) });
    expect((await call('DELETE', `/milestones/${m.body.id}`)).status).toBe(204);
    expect((await call('GET', `/epics/${e.id}`)).body.objective_ids).toEqual([]);
  });

  it('projects: delete refused with 422 while stories remain', async () => {
    const p = (await call('POST', '/projects', { name: 'Doomed', team_id: 1, abbreviation: 'DM' })).body;
    expect((await call('POST', '/projects', { name: 'x' })).status).toBe(400);
    const s = (await call('POST', '/stories', { name: 'keeps it alive', project_id: p.id })).body;
    expect((await call('GET', `/projects/${p.id}`)).body.stats.num_stories).toBe(1);
    expect((await call('GET', `/projects/${p.id}/stories`)).body).toHaveLength(1);
    const refused = await call('DELETE', `/projects/${p.id}`);
    expect(refused.status).toBe(422);
    expect(refused.body.message).toMatch(/still has 1 story/);
    expect((await call('PUT', `/stories/${s.id}`, { project_id: null })).status).toBe(200);
    expect((await call('DELETE', `/projects/${p.id}`)).status).toBe(204);
  });

  it('stories: 422 for unknown references', async () => {
    expect((await call('POST', '/stories', { name: 'x', epic_id: 99999999 })).status).toBe(422);
    expect((await call('POST', '/stories', { name: 'x', workflow_state_id: 1 })).status).toBe(422);
    expect((await call('POST', '/stories', {})).status).toBe(400);
  });
});

describe('search', () => {
  it('groups of {data, next, total}; next keeps the order stable; query params validated', async () => {
    for (let i = 0; i < 7; i++) await call('POST', '/stories', { name: `needle ${i}` });
    await call('POST', '/epics', { name: 'needle epic' });
    const all = (await call('GET', '/search?query=needle&page_size=3')).body;
    expect(Object.keys(all).sort()).toEqual(['epics', 'iterations', 'milestones', 'stories']);
    expect(all.stories.total).toBe(7);
    expect(all.epics).toMatchObject({ total: 1, next: null });
    const names: string[] = [];
    let page = (await call('GET', '/search/stories?query=needle&page_size=3')).body;
    names.push(...page.data.map((s: any) => s.name));
    while (page.next) {
      expect(page.next).toMatch(/^\/api\/v3\/search\/stories\?/);
      page = (await call('GET', page.next.replace('/api/v3', ''))).body;
      names.push(...page.data.map((s: any) => s.name));
    }
    expect(names).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => `needle ${i}`));
    expect((await call('GET', '/search?query=needle&entity_types=epic')).body).toHaveProperty('epics');
    expect(Object.keys((await call('GET', '/search?query=needle&entity_types=epic')).body)).toEqual(['epics']);
    expect((await call('GET', '/search')).status).toBe(400);
    expect((await call('GET', '/search/stories?query=x&page_size=251')).status).toBe(400);
    expect((await call('GET', '/search/stories?query=x&next=garbage')).status).toBe(400);
    expect((await call('GET', '/search/stories?query=needle&detail=slim')).body.data[0].description).toBeUndefined();
  });
});
