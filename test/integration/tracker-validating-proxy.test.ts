import { ShortcutClient } from '@shortcut/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempConfigDir } from '../helpers/cli.js';
import { startMock, trackerEnv } from '../helpers/mock.js';
import { startValidatingProxy, type ValidatingProxy } from '../helpers/validating-proxy.js';

/**
 * Issue 25, items 3 and 4: a validating gateway of the real OpenAPI document (ajv, test/helpers/
 * validating-proxy.ts, independent of packages/shared/src/tracker) stands between each client and the mock in strict
 * mode; any request or answer that breaks the document is a problem, and the test wants none.
 */
let mock: Awaited<ReturnType<typeof startMock>>;
let proxy: ValidatingProxy;
const cfg = tempConfigDir();

beforeAll(async () => {
  mock = await startMock({ services: ['tracker'] });
  proxy = await startValidatingProxy(mock.url);
});
afterAll(async () => {
  await proxy.close();
  await mock.close();
  cfg.cleanup();
});

async function opsctl(...argv: string[]): Promise<any> {
  const r = await runCli(['--no-input', ...argv, '--json'], { env: trackerEnv({ url: proxy.url, trackerToken: mock.trackerToken }, cfg.dir) });
  if (r.code !== 0) throw new Error(`opsctl ${argv.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout.trim() ? JSON.parse(r.stdout) : undefined;
}

describe('the validating proxy', () => {
  it('refuses what the document refuses: a {} body on an operation that declares none, DELETE /documents/{id} without its body', async () => {
    const before = proxy.problems.length;
    const put = await fetch(`${proxy.url}/api/v3/iterations/disable`, {
      method: 'PUT',
      headers: { 'tracker-token': mock.trackerToken, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(put.status).toBe(422);
    const del = await fetch(`${proxy.url}/api/v3/documents/00000000-0000-4000-8000-000000000000`, {
      method: 'DELETE',
      headers: { 'tracker-token': mock.trackerToken },
    });
    expect(del.status).toBe(422);
    expect(proxy.problems.splice(before)).toEqual([
      'PUT /api/v3/iterations/disable: a body ({}) where the contract declares none',
      'DELETE /api/v3/documents/{doc-public-id}: the contract requires a body, none was sent',
    ]);
  });
});

describe("opsctl's tracker verbs through the validating proxy", () => {
  it('the body-less operations go without a body, DELETE /documents/{id} with one, and comment threads unlink from chat', async () => {
    await opsctl('tracker', 'iterations', 'disable');
    await opsctl('tracker', 'iterations', 'enable');
    await opsctl('tracker', 'entity-templates', 'disable');
    await opsctl('tracker', 'entity-templates', 'enable');
    const epic = await opsctl('tracker', 'epics', 'create', '--name', 'proxied epic');
    const doc = await opsctl('tracker', 'documents', 'create', '--title', 'proxied doc', '--content', 'hello');
    await opsctl('tracker', 'documents', 'link-epic', doc.id, String(epic.id));
    await opsctl('tracker', 'documents', 'unlink-epic', doc.id, String(epic.id), '--yes');
    await opsctl('tracker', 'documents', 'delete', doc.id, '--yes');
    const story = await opsctl('tracker', 'stories', 'create', '--name', 'proxied story');
    const comment = await opsctl('tracker', 'stories', 'comment-add', String(story.id), '--text', 'thread');
    const unlinked = await opsctl('tracker', 'stories', 'comment-unlink-chat', String(story.id), String(comment.id));
    expect(unlinked).toMatchObject({ id: comment.id, text: 'thread' });
    await opsctl('tracker', 'stories', 'comment-delete', String(story.id), String(comment.id), '--yes');
    const task = await opsctl('tracker', 'stories', 'task-add', String(story.id), '--description', 'proxied task');
    await opsctl('tracker', 'stories', 'task-delete', String(story.id), String(task.id), '--yes');
    const ec = await opsctl('tracker', 'epics', 'comment-add', String(epic.id), '--text', 'epic thread');
    await opsctl('tracker', 'epics', 'comment-delete', String(epic.id), String(ec.id), '--yes');
    const label = await opsctl('tracker', 'labels', 'create', '--name', 'proxied label', '--color', '#123456');
    await opsctl('tracker', 'labels', 'update', String(label.id), '--description', 'd');
    await opsctl('tracker', 'labels', 'list');
    await opsctl('tracker', 'labels', 'delete', String(label.id), '--yes');
    expect(proxy.problems).toEqual([]);
    for (const op of [
      'PUT /api/v3/iterations/disable',
      'PUT /api/v3/entity-templates/enable',
      'PUT /api/v3/documents/{doc-public-id}/epics/{epic-public-id}',
      'DELETE /api/v3/documents/{doc-public-id}',
      'POST /api/v3/stories/{story-public-id}/comments/{comment-public-id}/unlink-from-slack',
      'DELETE /api/v3/stories/{story-public-id}/tasks/{task-public-id}',
      'DELETE /api/v3/epics/{epic-public-id}/comments/{comment-public-id}',
    ])
      expect(proxy.seen).toContain(op);
  });
});

describe('the official client (@shortcut/client) through the validating proxy', () => {
  it('the calls that used to be refused or off-schema pass, typed errors included', async () => {
    const sc = new ShortcutClient(mock.trackerToken, { baseURL: proxy.url });
    const { data: doc } = await sc.createDoc({ title: 'sc doc', content: 'c', content_format: 'markdown' });
    await sc.deleteDoc(doc.id, {});
    const { data: existing } = await sc.createStory({ name: 'sc existing' });
    const { data: story } = await sc.createStory({
      name: 'sc parent',
      comments: [{ text: 'c1' }],
      sub_tasks: [{ story_id: existing.id }, { name: 'sc sub' }],
    });
    const { data: other } = await sc.createStory({ name: 'sc other' });
    await sc.updateStory(other.id, { before_id: story.id, branch_ids: [], commit_ids: [], pull_request_ids: [] });
    const { data: c } = await sc.createStoryComment(story.id, { text: 'to unlink' });
    expect((await sc.unlinkCommentThreadFromSlack(story.id, c.id)).status).toBe(201);
    const { data: task } = await sc.createTask(story.id, { description: 't', created_at: '2026-01-01T00:00:00Z' });
    await sc.deleteTask(story.id, task.id);
    await sc.createCategory({ name: 'sc typed', type: 'milestone' });
    await sc.disableIterations();
    await sc.enableIterations();
    const { data: tpl } = await sc.createEntityTemplate({ name: 'sc tpl', story_contents: { name: 'from tpl', external_links: ['https://x.example/1'] } });
    const { data: made } = await sc.createStoryFromTemplate({
      story_template_id: tpl.id,
      external_links_add: ['https://x.example/2'],
      labels_add: [{ name: 'sc added' }],
    });
    expect(made.external_links).toEqual(['https://x.example/1', 'https://x.example/2']);
    const next = Buffer.from('o:1000').toString('base64url');
    await expect(sc.searchStories({ query: 'sc', next })).rejects.toMatchObject({ response: { status: 400, data: { error: 'maximum-results-exceeded' } } });
    expect(proxy.problems).toEqual([]);
  });
});
