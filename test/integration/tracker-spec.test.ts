import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMock } from '../helpers/mock.js';
import { loadSpec, type SpecChecker } from '../helpers/shortcut-spec.js';

/**
 * Every route of the tracker mock, driven once with valid input, and every answer validated against
 * the reference contract (packages/shared/src/tracker/openapi.json = shared/ref/shortcut-openapi.json),
 * nullability included. The seed's deliberate differences are listed in test/helpers/shortcut-spec.ts
 * (brand renames; iteration dates as date strings). Routes the contract does not have are named below
 * with the reason.
 */
const NOT_IN_CONTRACT = new Map<string, string>([
  // the contract itself, served for generic clients (test/e2e/tracker-mock-seed.e2e.test.ts drives it)
  ['GET /api/v3/openapi.json', 'the reference contract, served by the mock'],
]);

let mock: Awaited<ReturnType<typeof startMock>>;
let spec: SpecChecker;
const problems: string[] = [];
const driven = new Set<string>();

beforeAll(async () => {
  mock = await startMock({ services: ['tracker'] });
  spec = loadSpec();
});
afterAll(async () => {
  await mock.close();
});

/** One request; its answer is checked against the contract and the route is marked as driven. */
async function call(method: string, path: string, body?: unknown, expected?: number): Promise<any> {
  const full = `/api/v3${path}`;
  const init: RequestInit = { method, headers: { 'Shortcut-Token': mock.trackerToken } };
  if (body instanceof FormData) init.body = body;
  else if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  const res = await fetch(`${mock.url}${full}`, init);
  const textBody = await res.text();
  const json = textBody ? JSON.parse(textBody) : undefined;
  if (res.status >= 300 || (expected !== undefined && res.status !== expected)) {
    throw new Error(`${method} ${full} answered ${res.status}: ${textBody}`);
  }
  const op = spec.operation(method, full);
  if (op) driven.add(`${method} ${op.template}`);
  problems.push(...spec.check(method, full, res.status, json));
  return json;
}

describe('every mock response validates against the reference contract', () => {
  it('drives each route and finds no response the contract rejects', async () => {
    // labels, categories, objectives, milestones
    const label = await call('POST', '/labels', { name: 'spec-label', color: '#112233', description: 'd', external_id: 'x1' }, 201);
    await call('GET', '/labels');
    await call('GET', '/labels?slim=true');
    await call('GET', `/labels/${label.id}`);
    await call('PUT', `/labels/${label.id}`, { description: 'd2' });
    const cat = await call('POST', '/categories', { name: 'spec-cat', color: '#445566' }, 201);
    await call('GET', '/categories');
    await call('GET', `/categories/${cat.id}`);
    await call('PUT', `/categories/${cat.id}`, { name: 'spec-cat-2' });
    const obj = await call('POST', '/objectives', { name: 'spec-objective', state: 'in progress', categories: [{ name: 'spec-cat-2' }] }, 201);
    await call('GET', '/objectives');
    await call('GET', `/objectives/${obj.id}`);
    await call('PUT', `/objectives/${obj.id}`, { state: 'done' });
    await call('GET', `/categories/${cat.id}/objectives`);
    await call('GET', `/categories/${cat.id}/milestones`);
    const ms = await call('POST', '/milestones', { name: 'spec-milestone' }, 201);
    await call('GET', '/milestones');
    await call('GET', `/milestones/${ms.id}`);
    await call('PUT', `/milestones/${ms.id}`, { description: 'm' });

    // groups, projects, iterations
    const members = await call('GET', '/members');
    await call('GET', '/members?disabled=true');
    await call('GET', `/members/${members[0].id}`);
    await call('GET', '/member');
    const group = await call('POST', '/groups', { name: 'Spec team', mention_name: 'spec-team', color_key: 'blue', member_ids: [members[0].id] }, 201);
    await call('GET', '/groups');
    await call('GET', `/groups/${group.id}`);
    await call('PUT', `/groups/${group.id}`, { description: 'team' });
    const project = await call('POST', '/projects', { name: 'Spec project', team_id: 1, abbreviation: 'SP' }, 201);
    await call('GET', '/projects');
    await call('GET', `/projects/${project.id}`);
    await call('PUT', `/projects/${project.id}`, { description: 'p' });
    const iteration = await call(
      'POST',
      '/iterations',
      { name: 'Spec sprint', start_date: '2026-03-02', end_date: '2026-03-16', labels: [{ name: 'spec-label' }] },
      201,
    );
    await call('GET', '/iterations');
    await call('GET', `/iterations/${iteration.id}`);
    await call('PUT', `/iterations/${iteration.id}`, { description: 'sprint' });
    await call('PUT', '/iterations/disable', undefined, 204);
    await call('PUT', '/iterations/enable', undefined, 204);

    // epics: with and without health, comments and replies
    const epic = await call('POST', '/epics', { name: 'Spec epic', labels: [{ name: 'spec-label' }], objective_ids: [obj.id], group_ids: [group.id] }, 201);
    await call('GET', `/epics/${epic.id}`);
    await call('GET', `/epics/${epic.id}/health`);
    await call('GET', '/epics');
    await call('GET', '/epics?includes_description=true');
    await call('GET', '/epics/paginated?page_size=2');
    await call('GET', '/epic-workflow');
    const comment = await call('POST', `/epics/${epic.id}/comments`, { text: 'top' }, 201);
    await call('POST', `/epics/${epic.id}/comments/${comment.id}`, { text: 'reply' }, 201);
    await call('GET', `/epics/${epic.id}/comments`);
    await call('GET', `/epics/${epic.id}/comments/${comment.id}`);
    await call('PUT', `/epics/${epic.id}/comments/${comment.id}`, { text: 'top!' });
    const health = await call('POST', `/epics/${epic.id}/health`, { status: 'At Risk', text: 'late' }, 201);
    await call('PUT', `/health/${health.id}`, { status: 'On Track' });
    await call('GET', `/epics/${epic.id}/health`);
    await call('GET', `/epics/${epic.id}/health-history`);
    await call('PUT', `/epics/${epic.id}`, { name: 'Spec epic 2', state: 'in progress' });
    await call('POST', `/epics/${epic.id}/unlink-planningtool`, undefined, 204);
    await call('GET', `/objectives/${obj.id}/epics`);
    await call('GET', `/milestones/${obj.id}/epics`);
    await call('GET', `/labels/${label.id}/epics`);

    // files, linked files, custom fields, templates, documents, repositories, key results, webhooks
    const form = new FormData();
    form.append('file0', new Blob(['spec file'], { type: 'text/plain' }), 'spec.txt');
    const [file] = await call('POST', '/files', form, 201);
    await call('GET', '/files');
    await call('GET', `/files/${file.id}`);
    await call('PUT', `/files/${file.id}`, { description: 'f' });
    const linked = await call('POST', '/linked-files', { name: 'spec link', type: 'storage_a', url: 'https://example.com/doc' }, 201);
    await call('GET', '/linked-files');
    await call('GET', `/linked-files/${linked.id}`);
    await call('PUT', `/linked-files/${linked.id}`, { description: 'l' });
    const fields = await call('GET', '/custom-fields');
    await call('GET', `/custom-fields/${fields[0].id}`);
    await call('PUT', `/custom-fields/${fields[0].id}`, { description: 'How urgent' });
    const tpl = await call('POST', '/entity-templates', { name: 'Spec template', story_contents: { story_type: 'bug', name: 'From template' } }, 201);
    await call('GET', '/entity-templates');
    await call('GET', `/entity-templates/${tpl.id}`);
    await call('PUT', `/entity-templates/${tpl.id}`, { name: 'Spec template 2' });
    await call('PUT', '/entity-templates/disable', undefined, 204);
    await call('PUT', '/entity-templates/enable', undefined, 204);
    await call('POST', '/documents', { title: 'Spec doc', content: '# hi' }, 201);
    await call('GET', '/documents');
    const repos = await call('GET', '/repositories');
    await call('GET', `/repositories/${repos[0].id}`);
    const krs = await mock.store.read((s) => (s.tracker as any).keyResults.map((k: any) => k.id));
    await call('GET', `/key-results/${krs[0]}`);
    await call('PUT', `/key-results/${krs[0]}`, { name: 'Ship it' });
    const hook = await fetch(`${mock.url}/api/v3/integrations/webhook`, {
      method: 'POST',
      headers: { 'Shortcut-Token': mock.trackerToken, 'content-type': 'application/json' },
      body: JSON.stringify({ webhook_url: 'https://ci.example/hook' }),
    });
    expect(hook.status).toBe(204);
    driven.add('POST /api/v3/integrations/webhook');
    const hookId = hook.headers.get('location')!.split('/').pop();
    await call('GET', `/integrations/webhook/${hookId}`);

    // stories and their lists
    const story = await call(
      'POST',
      '/stories',
      {
        name: 'Spec story',
        labels: [{ name: 'spec-label' }],
        epic_id: epic.id,
        iteration_id: iteration.id,
        project_id: project.id,
        group_id: group.id,
        estimate: 2,
        external_links: ['https://example.com/x'],
      },
      201,
    );
    await call('GET', `/stories/${story.id}`);
    await call('PUT', `/stories/${story.id}`, { name: 'Spec story 2' });
    await call('GET', `/epics/${epic.id}/stories`);
    await call('GET', `/iterations/${iteration.id}/stories`);
    await call('GET', `/projects/${project.id}/stories`);
    await call('GET', `/labels/${label.id}/stories`);
    await call('GET', `/groups/${group.id}/stories`);
    await call('GET', `/external-link/stories?external_link=${encodeURIComponent('https://example.com/x')}`);

    // workflows, the rest of the stories API
    const [workflow] = await call('GET', '/workflows');
    await call('GET', `/workflows/${workflow.id}`);
    const started = workflow.states.find((st: any) => st.type === 'started');
    const other = await call(
      'POST',
      '/stories',
      { name: 'Spec other', tasks: [{ description: 'inline task' }], story_links: [{ verb: 'blocks', object_id: story.id }], parent_story_id: story.id },
      201,
    );
    await call('PUT', `/stories/${story.id}`, { workflow_state_id: started.id });
    await call('GET', `/stories/${story.id}/sub-tasks`);
    await call('GET', `/stories/${story.id}/history`);
    const bulk = await call(
      'POST',
      '/stories/bulk',
      {
        stories: [
          { name: 'Spec bulk 1', external_id: 'b1' },
          { name: 'Spec bulk 2', estimate: 3 },
        ],
      },
      201,
    );
    await call('PUT', '/stories/bulk', { story_ids: bulk.map((b: any) => b.id), workflow_state_id: started.id, labels_add: [{ name: 'spec-label' }] });
    await call('POST', '/stories/search', { workflow_state_types: ['started'] }, 201);
    await call('GET', '/search/stories?query=spec');
    await call('POST', '/stories/from-template', { story_template_id: tpl.id, name: 'Spec from template' }, 201);
    const sc = await call('POST', `/stories/${story.id}/comments`, { text: 'story comment' }, 201);
    await call('POST', `/stories/${story.id}/comments`, { text: 'story reply', parent_id: sc.id }, 201);
    await call('GET', `/stories/${story.id}/comments`);
    await call('GET', `/stories/${story.id}/comments/${sc.id}`);
    await call('PUT', `/stories/${story.id}/comments/${sc.id}`, { text: 'story comment!' });
    await call('POST', `/stories/${story.id}/comments/${sc.id}/reactions`, { emoji: ':+1:' }, 201);
    await call('DELETE', `/stories/${story.id}/comments/${sc.id}/reactions`, { emoji: ':+1:' }, 204);
    await call('POST', `/stories/${story.id}/comments/${sc.id}/unlink-from-slack`, undefined, 201);
    const task = await call('POST', `/stories/${story.id}/tasks`, { description: 'Spec task' }, 201);
    await call('GET', `/stories/${story.id}/tasks/${task.id}`);
    await call('PUT', `/stories/${story.id}/tasks/${task.id}`, { complete: true });
    const link = await call('POST', '/story-links', { verb: 'relates to', subject_id: story.id, object_id: bulk[0].id }, 201);
    await call('GET', `/story-links/${link.id}`);
    await call('PUT', `/story-links/${link.id}`, { verb: 'duplicates' });
    await call('GET', `/stories/${story.id}`);
    await call('GET', `/stories/${other.id}`);
    const doc = await call('POST', '/documents', { title: 'Spec runbook', content: '# steps' }, 201);
    await call('GET', `/documents/${doc.id}`);
    await call('PUT', `/documents/${doc.id}`, { title: 'Spec runbook 2' });
    await call('PUT', `/documents/${doc.id}/epics/${epic.id}`, undefined, 204);
    await call('GET', `/documents/${doc.id}/epics`);
    await call('GET', `/epics/${epic.id}/documents`);
    await call('GET', '/search/documents?title=runbook');
    await call('DELETE', `/documents/${doc.id}/epics/${epic.id}`, undefined, 204);
    await call('DELETE', `/documents/${doc.id}`, undefined, 204);
    await call('DELETE', `/story-links/${link.id}`, undefined, 204);
    await call('DELETE', `/stories/${story.id}/tasks/${task.id}`, undefined, 204);
    await call('DELETE', `/stories/${story.id}/comments/${sc.id}`, undefined, 204);
    await call('DELETE', '/stories/bulk', { story_ids: bulk.map((b: any) => b.id) }, 204);

    // search
    await call('GET', '/search?query=spec');
    for (const kind of ['stories', 'epics', 'iterations', 'milestones', 'objectives']) await call('GET', `/search/${kind}?query=spec&page_size=1`);
    await call('GET', '/search/stories?query=spec&detail=slim');

    // deletes last
    await call('DELETE', `/stories/${story.id}`, undefined, 204);
    await call('DELETE', `/epics/${epic.id}/comments/${comment.id}`, undefined, 204);
    await call('DELETE', `/epics/${epic.id}`, undefined, 204);
    await call('DELETE', `/integrations/webhook/${hookId}`, undefined, 204);
    await call('DELETE', `/entity-templates/${tpl.id}`, undefined, 204);
    await call('DELETE', `/linked-files/${linked.id}`, undefined, 204);
    await call('DELETE', `/files/${file.id}`, undefined, 204);
    await call('DELETE', `/custom-fields/${fields[1].id}`, undefined, 204);
    await call('DELETE', `/iterations/${iteration.id}`, undefined, 204);
    await call('DELETE', `/projects/${project.id}`, undefined, 204);
    await call('DELETE', `/milestones/${ms.id}`, undefined, 204);
    await call('DELETE', `/objectives/${obj.id}`, undefined, 204);
    await call('DELETE', `/categories/${cat.id}`, undefined, 204);
    await call('DELETE', `/labels/${label.id}`, undefined, 204);

    if (process.env.SPEC_DUMP) (await import('node:fs')).writeFileSync(process.env.SPEC_DUMP, problems.join('\n'));
    expect(problems).toEqual([]);
  });

  it('every route of the mock was driven, and each is an operation of the contract', async () => {
    const svc: any = await mock.service('tracker');
    const missing: string[] = [];
    for (const r of svc.routes as Array<{ method: string; path: string }>) {
      const concrete = r.path.replace(/:[a-z_]+/gi, '1');
      const op = spec.operation(r.method, concrete);
      const key = `${r.method} ${r.path}`;
      if (!op) {
        if (!NOT_IN_CONTRACT.has(key)) missing.push(`${key}: not in the contract`);
        continue;
      }
      if (!driven.has(`${r.method} ${op.template}`)) missing.push(`${key}: not driven by this test`);
    }
    expect(missing).toEqual([]);
  });
});
