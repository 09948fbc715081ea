import { describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { useTrackerMock } from '../helpers/tracker.js';
import type { TestState } from '../helpers/mock.js';

const t = useTrackerMock();

const cli = t.cli;
const json = t.json;

describe('every resource through the CLI', () => {
  it('epics: create with typed flags, comments and replies, health, paginated --all/--limit, delete', async () => {
    const e = await json('tracker', 'epics', 'create', '--name', 'CLI epic', '--state', 'in progress', '--deadline', '2026-03-01T00:00:00Z');
    expect(e).toMatchObject({ name: 'CLI epic', state: 'in progress', deadline: '2026-03-01T00:00:00Z' });
    expect((await json('tracker', 'epics', 'update', String(e.id), '--deadline', 'null', '--epic-state-id', '500000013')).deadline).toBeNull();
    const c = await json('tracker', 'epics', 'comment-add', String(e.id), '--text', 'hello');
    const r = await json('tracker', 'epics', 'reply', String(e.id), String(c.id), '--text', 'hi back');
    const tree = await json('tracker', 'epics', 'comment', String(e.id), String(c.id));
    expect(tree.comments[0].id).toBe(r.id);
    expect((await json('tracker', 'epics', 'comment-update', String(e.id), String(c.id), '--text', 'hello!')).text).toBe('hello!');
    expect((await cli('tracker', 'epics', 'comment-delete', String(e.id), String(c.id), '--yes')).code).toBe(0);
    expect(await json('tracker', 'epics', 'comments', String(e.id))).toEqual([]);
    await json('tracker', 'epics', 'health-set', String(e.id), '--status', 'At Risk', '--text', 'late');
    await json('tracker', 'epics', 'health-set', String(e.id), '--status', 'On Track');
    expect((await json('tracker', 'epics', 'health', String(e.id))).status).toBe('On Track');
    expect((await json('tracker', 'epics', 'health-history', String(e.id))).map((h: any) => h.status)).toEqual(['On Track', 'At Risk']);
    expect((await cli('tracker', 'epics', 'health-set', String(e.id), '--status', 'Fine')).code).toBe(2);
    expect((await cli('tracker', 'epics', 'unlink-planningtool', String(e.id))).code).toBe(0);

    for (let i = 0; i < 12; i++) await cli('tracker', 'epics', 'create', '--name', `page ${i}`);
    const first = await cli('tracker', 'epics', 'paginated', '--json=id');
    expect(first.json()).toHaveLength(10);
    expect(first.stderr).toMatch(/showing 10 of 13 .*pass --all/);
    t.mock.requests.length = 0;
    const all = await cli('tracker', 'epics', 'paginated', '--all', '--json=id');
    expect(all.json()).toHaveLength(13);
    expect(all.stderr).not.toContain('more exist');
    const limited = await cli('tracker', 'epics', 'paginated', '--limit', '5', '--json=id');
    expect(limited.json()).toHaveLength(5);
    expect(limited.stderr).toContain('more exist');
    expect((await cli('tracker', 'epics', 'list', '--limit', '3', '--json=id')).stderr).toContain('showing 3 of 13 epics');
    expect((await cli('tracker', 'epics', 'list', '--limit', '0')).code).toBe(2);
    expect((await cli('tracker', 'epics', 'delete', String(e.id), '--yes')).code).toBe(0);
  });

  it('stories, projects, iterations, groups and their story lists; project delete 422 is reported', async () => {
    const p = await json('tracker', 'projects', 'create', '--name', 'CLI project', '--team-id', '1', '--abbreviation', 'CP');
    const it = await json('tracker', 'iterations', 'create', '--name', 'Sprint', '--start-date', '2026-01-05', '--end-date', '2026-01-19');
    const g = await json('tracker', 'groups', 'create', '--name', 'CLI team', '--mention-name', 'cliteam', '--color-key', 'sky-blue');
    const s = await json(
      'tracker',
      'stories',
      'create',
      '--name',
      'CLI story',
      '--project-id',
      String(p.id),
      '--iteration-id',
      String(it.id),
      '--group-id',
      g.id,
      '--estimate',
      '3',
      '--external-links',
      'https://ci.example/1',
    );
    expect(s).toMatchObject({ project_id: p.id, iteration_id: it.id, group_id: g.id, estimate: 3 });
    expect((await json('tracker', 'projects', 'stories', String(p.id))).map((x: any) => x.id)).toEqual([s.id]);
    expect((await json('tracker', 'iterations', 'stories', String(it.id))).map((x: any) => x.id)).toEqual([s.id]);
    expect((await json('tracker', 'groups', 'stories', g.id, '--all')).map((x: any) => x.id)).toEqual([s.id]);
    expect((await json('tracker', 'stories', 'by-link', '--external-link', 'https://ci.example/1')).map((x: any) => x.id)).toEqual([s.id]);
    const refused = await cli('tracker', 'projects', 'delete', String(p.id), '--yes');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/HTTP 422: project \d+ still has 1 story/);
    expect((await cli('tracker', 'stories', 'delete', String(s.id), '--yes')).code).toBe(0);
    expect((await cli('tracker', 'projects', 'delete', String(p.id), '--yes')).code).toBe(0);
    expect((await cli('tracker', 'groups', 'create', '--name', 'x', '--mention-name', 'y', '--color-key', 'navy')).code).toBe(2);
    expect((await cli('tracker', 'iterations', 'disable')).code).toBe(0);
    expect((await cli('tracker', 'iterations', 'enable')).code).toBe(0);
    expect((await cli('tracker', 'groups', 'stories', 'not-a-uuid')).code).toBe(2);
  });

  it('custom fields via --data, documents, templates, members, repositories, key results, webhooks, workflow', async () => {
    const fields = await json('tracker', 'custom-fields', 'list');
    const f = fields.find((x: any) => x.name === 'Priority');
    const upd = await json('tracker', 'custom-fields', 'update', f.id, '--data', JSON.stringify({ values: [{ id: f.values[1].id }, { value: 'New' }] }));
    expect(upd.values.map((v: any) => v.value)).toEqual(['High', 'New']);
    const conflict = await cli('tracker', 'custom-fields', 'update', f.id, '--data', '{"values":[{"id":"00000000-0000-4000-8000-000000000000"}]}');
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toMatch(/HTTP 409/);
    await json('tracker', 'documents', 'create', '--title', 'Doc', '--content', 'body');
    await t.mock.store.write((s: TestState) => void (s.tracker.features.documents = false));
    const off = await cli('tracker', 'documents', 'list');
    expect(off.stderr).toMatch(/HTTP 403: documents are turned off/);
    await t.mock.store.write((s: TestState) => void (s.tracker.features.documents = true));
    const tpl = await json('tracker', 'entity-templates', 'create', '--data', '{"name":"T","story_contents":{"story_type":"chore"}}');
    expect(tpl.story_contents.story_type).toBe('chore');
    expect((await cli('tracker', 'entity-templates', 'disable')).code).toBe(0);
    const members = await cli('tracker', 'members', 'list', '--disabled');
    expect(members.stdout).toContain('Former Colleague');
    expect((await json('tracker', 'members', 'me')).mention_name).toBe('owner');
    expect((await json('tracker', 'repositories', 'list')).length).toBe(2);
    expect((await json('tracker', 'epic-workflow', 'get')).epic_states).toHaveLength(3);
    const kr = (await t.mock.store.read((s: TestState) => s.tracker.keyResults))[0];
    expect((await json('tracker', 'key-results', 'update', kr.id, '--data', '{"observed_value":{"boolean_value":true}}')).progress).toBe(100);
    const hook = await cli('tracker', 'webhooks', 'create', '--webhook-url', 'https://ci.example/hook', '--secret', 'shh');
    expect(hook.code).toBe(0);
    const hookId = await t.mock.store.read((s: TestState) => s.tracker.webhooks.at(-1).id);
    expect((await json('tracker', 'webhooks', 'get', String(hookId))).webhook_url).toBe('https://ci.example/hook');
  });

  it('objectives, milestones (deprecated aliases) and categories with their objectives', async () => {
    const o = await json('tracker', 'objectives', 'create', '--name', 'Obj', '--data', '{"categories":[{"name":"Cat1"}]}');
    const cat = o.categories[0];
    expect((await json('tracker', 'categories', 'objectives', String(cat.id))).map((x: any) => x.id)).toEqual([o.id]);
    expect((await json('tracker', 'milestones', 'get', String(o.id))).name).toBe('Obj');
    const e = await json('tracker', 'epics', 'create', '--name', 'E', '--objective-ids', String(o.id));
    expect((await json('tracker', 'objectives', 'epics', String(o.id))).map((x: any) => x.id)).toEqual([e.id]);
  });

  it('labels: epics and stories of a label', async () => {
    const s = await json('tracker', 'stories', 'create', '--name', 'labelled', '--data', '{"labels":[{"name":"cli-label"}]}');
    const id = s.label_ids[0];
    expect((await json('tracker', 'labels', 'stories', String(id))).map((x: any) => x.id)).toEqual([s.id]);
    expect(await json('tracker', 'labels', 'epics', String(id))).toEqual([]);
  });

  it('search: one page by default with a notice, every page with --all, in a stable order', async () => {
    for (let i = 0; i < 30; i++) await cli('tracker', 'stories', 'create', '--name', `findme ${String(i).padStart(2, '0')}`);
    const first = await cli('tracker', 'search', 'stories', '--query', 'findme', '--json=name');
    expect(first.json()).toHaveLength(25);
    expect(first.stderr).toMatch(/showing 25 of 30/);
    const all = await cli('tracker', 'search', 'stories', '--query', 'findme', '--page-size', '7', '--all', '--json=name');
    expect(all.json().map((x: any) => x.name)).toEqual(Array.from({ length: 30 }, (_, i) => `findme ${String(i).padStart(2, '0')}`));
    const combined = await json('tracker', 'search', 'all', '--query', 'findme', '--entity-types', 'story,epic');
    expect(combined.stories.total).toBe(30);
    expect((await cli('tracker', 'search', 'stories')).code).toBe(2);
    expect((await cli('tracker', 'search', 'stories', '--query', 'x', '--page-size', '251')).code).toBe(2);
  });

  it('files upload: 4 per request, batched beyond that, attached to a story', async () => {
    const s = await json('tracker', 'stories', 'create', '--name', 'with uploads');
    const paths = Array.from({ length: 6 }, (_, i) => {
      const p = join(t.dir, `f${i}.txt`);
      writeFileSync(p, 'x'.repeat(i + 1));
      return p;
    });
    t.mock.requests.length = 0;
    const up = await cli('tracker', 'files', 'upload', ...paths, '--story', String(s.id), '--json');
    expect(up.code).toBe(0);
    expect(up.json().map((f: any) => [f.name, f.size])).toEqual(paths.map((_, i) => [`f${i}.txt`, i + 1]));
    expect(t.mock.requests.filter((r) => r.method === 'POST' && r.path === '/api/v3/files')).toHaveLength(2);
    expect((await json('tracker', 'stories', 'get', String(s.id))).files).toHaveLength(6);
    const id = up.json()[0].id;
    expect((await json('tracker', 'files', 'update', String(id), '--name', 'renamed.txt')).size).toBe(1);
    const missing = await cli('tracker', 'files', 'upload', join(t.dir, 'nope.txt'));
    expect(missing.code).toBe(2);
  });

  it('linked files: the type enum is checked before sending', async () => {
    const bad = await cli('tracker', 'linked-files', 'create', '--name', 'x', '--type', 'dropbox', '--url', 'https://x');
    expect(bad.code).toBe(2);
    const ok = await json('tracker', 'linked-files', 'create', '--name', 'x', '--type', 'url', '--url', 'https://x');
    expect(ok.type).toBe('url');
  });
});
