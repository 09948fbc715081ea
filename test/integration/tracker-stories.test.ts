import { describe, expect, it } from 'vitest';
import { useTrackerMock } from '../helpers/tracker.js';

const t = useTrackerMock((tr) => {
  for (const c of ['stories', 'storyComments', 'tasks', 'storyLinks', 'storyHistory', 'labels', 'epics', 'documents']) tr[c] = [];
});
const { cli, json } = t;

describe('stories, workflows and what hangs off a story, through the CLI', () => {
  it('create gives the full Story; move by state name drives started/completed and the label and epic stats', async () => {
    const epic = await json('tracker', 'epics', 'create', '--name', 'Flow epic');
    const s = await json(
      'tracker',
      'stories',
      'create',
      '--data',
      JSON.stringify({ name: 'Flow story', estimate: 3, epic_id: epic.id, labels: [{ name: 'flow' }] }),
    );
    expect(s).toMatchObject({ name: 'Flow story', started: false, completed: false, tasks: [], comments: [], files: [], workflow_state_id: 500000002 });
    const label = s.labels[0];
    const stats = async () => (await json('tracker', 'labels', 'get', String(label.id))).stats;
    expect(await stats()).toMatchObject({ num_stories_unstarted: 1, num_stories_in_progress: 0, num_points_unstarted: 3 });

    const moved = await cli('tracker', 'stories', 'move', String(s.id), '--state', 'in progress', '--json');
    expect(moved.code, moved.stderr).toBe(0);
    expect(moved.json()).toMatchObject({ workflow_state_id: 500000003, started: true, completed: false });
    expect(moved.json().started_at).toEqual(expect.any(String));
    expect(await stats()).toMatchObject({ num_stories_unstarted: 0, num_stories_in_progress: 1, num_points_in_progress: 3 });
    expect((await json('tracker', 'epics', 'get', String(epic.id))).stats).toMatchObject({ num_stories_started: 1, num_points_started: 3 });

    const done = await cli('tracker', 'stories', 'move', String(s.id), '--state', 'Done');
    expect(done.code).toBe(0);
    expect(done.stderr).toContain('In Progress → Done');
    expect(await stats()).toMatchObject({ num_stories_completed: 1, num_points_completed: 3, num_stories_in_progress: 0 });
    const got = await json('tracker', 'stories', 'get', String(s.id));
    expect(got).toMatchObject({ completed: true, started: true });
    expect(typeof got.cycle_time).toBe('number');
    const wf = await json('tracker', 'workflows', 'states', String(got.workflow_id));
    expect(wf.find((st: any) => st.name === 'Done').num_stories).toBe(1);

    t.mock.requests.length = 0;
    const unknown = await cli('tracker', 'stories', 'move', String(s.id), '--state', 'Shipped');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no workflow state is named "Shipped"');
    expect(unknown.stderr).toMatch(/"Backlog" \(500000001\).*"To Do".*"In Progress".*"Done"/);
    expect(t.writes()).toHaveLength(0);

    const history = await json('tracker', 'stories', 'history', String(s.id));
    expect(history.map((h: any) => h.actions[0].action)).toEqual(['create', 'update', 'update']);
    expect(history[1].actions[0].changes.workflow_state_id).toEqual({ old: 500000002, new: 500000003 });

    expect((await cli('tracker', 'stories', 'delete', String(s.id), '--yes')).code).toBe(0);
    expect((await cli('tracker', 'stories', 'get', String(s.id))).code).toBe(1);
    expect(await stats()).toMatchObject({ num_stories_total: 0 });
  });

  it('comments with nested replies and reactions, tasks checked and unchecked, links, sub-tasks', async () => {
    const a = await json('tracker', 'stories', 'create', '--name', 'A');
    const b = await json('tracker', 'stories', 'create', '--name', 'B', '--parent-story-id', String(a.id));
    const c = await json('tracker', 'stories', 'comment-add', String(a.id), '--text', 'first');
    const r = await json('tracker', 'stories', 'reply', String(a.id), '--parent-id', String(c.id), '--text', 'answer');
    expect(r.parent_id).toBe(c.id);
    expect(await json('tracker', 'stories', 'react', String(a.id), String(c.id), '--emoji', ':tada:')).toEqual([
      { emoji: ':tada:', permission_ids: [expect.any(String)] },
    ]);
    expect((await json('tracker', 'stories', 'comment', String(a.id), String(c.id))).reactions).toHaveLength(1);
    expect((await cli('tracker', 'stories', 'unreact', String(a.id), String(c.id), '--emoji', ':tada:')).code).toBe(0);
    expect((await json('tracker', 'stories', 'comment-update', String(a.id), String(c.id), '--text', 'first!')).text).toBe('first!');
    expect((await cli('tracker', 'stories', 'comment-delete', String(a.id), String(c.id), '--yes')).code).toBe(0);
    expect(await json('tracker', 'stories', 'comments', String(a.id))).toEqual([]);

    const task = await json('tracker', 'stories', 'task-add', String(a.id), '--description', 'write test');
    expect(task).toMatchObject({ complete: false, story_id: a.id });
    expect((await json('tracker', 'stories', 'task-check', String(a.id), String(task.id))).complete).toBe(true);
    expect((await json('tracker', 'stories', 'get', String(a.id))).tasks[0].complete).toBe(true);
    expect((await json('tracker', 'stories', 'task-uncheck', String(a.id), String(task.id))).completed_at).toBeNull();
    expect((await cli('tracker', 'stories', 'task-delete', String(a.id), String(task.id), '--yes')).code).toBe(0);

    const link = await json('tracker', 'story-links', 'create', '--subject-id', String(b.id), '--verb', 'blocks', '--object-id', String(a.id));
    expect((await json('tracker', 'stories', 'get', String(a.id))).blocked).toBe(true);
    expect((await json('tracker', 'stories', 'get', String(b.id))).blocker).toBe(true);
    expect((await cli('tracker', 'story-links', 'create', '--subject-id', String(b.id), '--verb', 'blocks', '--object-id', String(a.id))).code).toBe(1);
    expect((await cli('tracker', 'story-links', 'create', '--subject-id', String(b.id), '--verb', 'fixes', '--object-id', String(a.id))).code).toBe(2);
    expect((await json('tracker', 'story-links', 'update', String(link.id), '--verb', 'relates to')).verb).toBe('relates to');
    expect((await json('tracker', 'stories', 'get', String(a.id))).blocked).toBe(false);
    expect((await cli('tracker', 'story-links', 'delete', String(link.id), '--yes')).code).toBe(0);

    expect((await json('tracker', 'stories', 'sub-tasks', String(a.id))).map((x: any) => x.id)).toEqual([b.id]);
  });

  it('bulk create/update/delete, from a template, search by attributes', async () => {
    const made = await json(
      'tracker',
      'stories',
      'bulk-create',
      '--data',
      JSON.stringify({ stories: [{ name: 'bulk one', estimate: 1 }, { name: 'bulk two' }] }),
    );
    expect(made).toHaveLength(2);
    const ids = made.map((x: any) => x.id).join(',');
    const updated = await json('tracker', 'stories', 'bulk-update', '--story-ids', ids, '--workflow-state-id', '500000003');
    expect(updated.every((x: any) => x.started)).toBe(true);
    const found = await json('tracker', 'stories', 'search', '--data', JSON.stringify({ workflow_state_types: ['started'] }));
    expect(found.map((x: any) => x.id).sort()).toEqual(made.map((x: any) => x.id).sort());
    expect(
      (await cli('tracker', 'stories', 'bulk-create', '--data', JSON.stringify({ stories: [{ name: 'ok' }, { name: 'bad', epic_id: 999999 }] }))).code,
    ).toBe(1);
    expect(await json('tracker', 'stories', 'search', '--data', '{"story_type":"feature"}')).toHaveLength(2);
    expect((await cli('tracker', 'stories', 'bulk-delete', '--story-ids', ids, '--yes')).code).toBe(0);

    const tpl = await json(
      'tracker',
      'entity-templates',
      'create',
      '--data',
      JSON.stringify({ name: 'Bug tpl', story_contents: { story_type: 'bug', name: 'Bug: ', tasks: [{ description: 'repro' }] } }),
    );
    const fromTpl = await json('tracker', 'stories', 'from-template', '--story-template-id', tpl.id, '--name', 'Bug: crash');
    expect(fromTpl).toMatchObject({ name: 'Bug: crash', story_type: 'bug', story_template_id: tpl.id });
    expect(fromTpl.tasks.map((k: any) => k.description)).toEqual(['repro']);
  });

  it('documents: get, update, link to epics, epics documents, search documents; search objectives', async () => {
    const doc = await json('tracker', 'documents', 'create', '--title', 'Deploy runbook', '--content', '# steps');
    expect(await json('tracker', 'documents', 'get', doc.id)).toMatchObject({ title: 'Deploy runbook', content_markdown: '# steps', archived: false });
    expect((await json('tracker', 'documents', 'update', doc.id, '--title', 'Deploy runbook v2')).title).toBe('Deploy runbook v2');
    const epic = await json('tracker', 'epics', 'create', '--name', 'Docs epic');
    expect((await cli('tracker', 'documents', 'link-epic', doc.id, String(epic.id))).code).toBe(0);
    expect((await json('tracker', 'epics', 'documents', String(epic.id))).map((d: any) => d.id)).toEqual([doc.id]);
    expect((await json('tracker', 'documents', 'epics', doc.id)).map((e: any) => e.id)).toEqual([epic.id]);
    expect((await json('tracker', 'epics', 'get', String(epic.id))).stats.num_related_documents).toBe(1);
    expect((await json('tracker', 'search', 'documents', '--title', 'runbook')).map((d: any) => d.id)).toEqual([doc.id]);
    expect((await cli('tracker', 'documents', 'unlink-epic', doc.id, String(epic.id))).code).toBe(0);
    expect((await cli('tracker', 'documents', 'delete', doc.id, '--yes')).code).toBe(0);
    expect((await cli('tracker', 'documents', 'get', doc.id)).code).toBe(1);

    await json('tracker', 'objectives', 'create', '--name', 'Findable objective');
    expect((await json('tracker', 'search', 'objectives', '--query', 'findable')).map((o: any) => o.name)).toEqual(['Findable objective']);
  });
});

describe('stories import', () => {
  it('YAML: plan, --dry-run writes nothing, bulk creates, a second run writes nothing; states by name', async () => {
    const stories = Array.from(
      { length: 150 },
      (_, i) => `  - {external_id: "imp-${i}", name: "Imported ${i}", estimate: ${i % 3}${i === 0 ? ', state: "In Progress"' : ''}}`,
    ).join('\n');
    const file = t.file('stories.yaml', `stories:\n${stories}\n`);
    const dry = await cli('tracker', 'stories', 'import', '-f', file, '--dry-run', '--json');
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.json()).toMatchObject({ planned: 150, existing: 0, created: 0, dry_run: true, requests: 2 });
    expect(t.writes().filter((w) => w.path.endsWith('/bulk'))).toHaveLength(0);

    t.mock.requests.length = 0;
    const first = await cli('tracker', 'stories', 'import', '-f', file, '--json');
    expect(first.code, first.stderr).toBe(0);
    expect(first.json()).toMatchObject({ planned: 150, created: 150, requests: 2 });
    expect(t.mock.requests.filter((r) => r.path === '/api/v3/stories/bulk').map((r) => r.method)).toEqual(['POST', 'POST']);
    const one = await json('tracker', 'stories', 'search', '--data', '{"external_id":"imp-0"}');
    expect(one[0]).toMatchObject({ name: 'Imported 0', workflow_state_id: 500000003, started: true });

    t.mock.requests.length = 0;
    const again = await cli('tracker', 'stories', 'import', '-f', file, '--json');
    expect(again.code).toBe(0);
    expect(again.json()).toMatchObject({ planned: 0, existing: 150, created: 0 });
    expect(t.writes().filter((w) => w.path !== '/api/v3/stories/search')).toHaveLength(0);
    expect(again.stderr).toContain('0 to create');
  });

  it('CSV with labels and tasks; bad rows are refused before anything is sent, naming the row', async () => {
    const csv = t.file(
      's.csv',
      'external_id,name,story_type,estimate,labels,tasks\ncsv-1,First,bug,2,ui;urgent,repro;fix\ncsv-2,"Second, with comma",feature,,,\n',
    );
    const r = await cli('tracker', 'stories', 'import', '-f', csv, '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ created: 2 });
    const [first] = await json('tracker', 'stories', 'search', '--data', '{"external_id":"csv-1"}');
    expect(first).toMatchObject({ story_type: 'bug', estimate: 2, num_tasks_completed: 0 });
    expect(first.labels.map((l: any) => l.name).sort()).toEqual(['ui', 'urgent']);
    expect(first.task_ids).toHaveLength(2);

    t.mock.requests.length = 0;
    const bad = t.file('bad.csv', 'external_id,name,story_type\nok-1,Fine,bug\nok-2,Broken,epic\n');
    const refused = await cli('tracker', 'stories', 'import', '-f', bad);
    expect(refused.code).toBe(2);
    // 0-based like apply, the CSV line beside it
    expect(refused.stderr).toContain('bad.csv: stories[1] (line 3).story_type: must be one of: feature, chore, bug');
    expect(t.mock.requests).toHaveLength(0);
    const noExt = await cli('tracker', 'stories', 'import', '-f', t.file('n.json', '[{"name":"x"}]'));
    expect(noExt.code).toBe(2);
    expect(noExt.stderr).toContain('stories[0]: external_id is required');
  });
});
