import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ShortcutClient } from '@shortcut/client';
import { startMock } from '../helpers/mock.js';

/**
 * An independent client: the official @shortcut/client (axios, generated from the real contract),
 * unmodified: it sends its default `Shortcut-Token` header, which the mock accepts beside the seed's
 * `Tracker-Token`. It must get the shapes its types promise.
 */
let mock: Awaited<ReturnType<typeof startMock>>;
let sc: ShortcutClient;

beforeAll(async () => {
  mock = await startMock({ services: ['tracker'] });
  sc = new ShortcutClient(mock.trackerToken, { baseURL: mock.url });
});
afterAll(async () => {
  await mock.close();
});

describe('@shortcut/client against the mock', () => {
  it('labels: create, read, update, list, delete', async () => {
    const { data: label, status } = await sc.createLabel({ name: 'sc-label', color: '#aabbcc', description: 'from the official client' });
    expect(status).toBe(201);
    expect(label).toMatchObject({ name: 'sc-label', color: '#aabbcc', archived: false, entity_type: 'label' });
    expect(typeof label.stats?.num_stories_total).toBe('number');
    expect((await sc.getLabel(label.id)).data.name).toBe('sc-label');
    expect((await sc.updateLabel(label.id, { archived: true, color: null })).data).toMatchObject({ archived: true, color: null });
    expect((await sc.listLabels()).data.map((l) => l.id)).toContain(label.id);
    expect((await sc.deleteLabel(label.id)).status).toBe(204);
    await expect(sc.getLabel(label.id)).rejects.toMatchObject({ response: { status: 404 } });
  });

  it('categories: create, read, update, delete', async () => {
    const { data: c } = await sc.createCategory({ name: 'sc-cat', color: '#010203' });
    expect(c).toMatchObject({ name: 'sc-cat', archived: false });
    expect((await sc.getCategory(c.id)).data.id).toBe(c.id);
    expect((await sc.updateCategory(c.id, { name: 'sc-cat-2' })).data.name).toBe('sc-cat-2');
    expect((await sc.listCategories()).data.some((x) => x.id === c.id)).toBe(true);
    expect((await sc.deleteCategory(c.id)).status).toBe(204);
  });

  it('epics with threaded comments', async () => {
    const { data: epic } = await sc.createEpic({ name: 'sc-epic', description: 'd', state: 'in progress' });
    expect(epic).toMatchObject({ name: 'sc-epic', state: 'in progress', started: true, comments: [] });
    expect(Array.isArray(epic.labels)).toBe(true);
    expect(typeof epic.stats.num_points).toBe('number');
    const { data: c } = await sc.createEpicComment(epic.id, { text: 'top' });
    const { data: reply } = await sc.createEpicCommentComment(epic.id, c.id, { text: 'nested' });
    expect(reply.text).toBe('nested');
    const { data: comments } = await sc.listEpicComments(epic.id);
    expect(comments[0]?.comments[0]?.id).toBe(reply.id);
    expect((await sc.updateEpicComment(epic.id, c.id, { text: 'top!' })).data.text).toBe('top!');
    expect((await sc.getEpic(epic.id)).data.comments).toHaveLength(1);
    expect((await sc.updateEpic(epic.id, { name: 'sc-epic-2', deadline: null })).data.name).toBe('sc-epic-2');
    expect((await sc.deleteEpicComment(epic.id, c.id)).status).toBe(204);
    expect((await sc.listEpics()).data.find((e) => e.id === epic.id)).not.toHaveProperty('comments');
    expect((await sc.deleteEpic(epic.id)).status).toBe(204);
  });

  it('objectives, iterations and projects', async () => {
    const { data: o } = await sc.createObjective({ name: 'sc-objective', state: 'to do' });
    expect(o).toMatchObject({ name: 'sc-objective', state: 'to do', completed: false, categories: [] });
    expect((await sc.updateObjective(o.id, { state: 'done' })).data.completed).toBe(true);
    expect((await sc.getObjective(o.id)).data.id).toBe(o.id);
    expect((await sc.deleteObjective(o.id)).status).toBe(204);

    const { data: it } = await sc.createIteration({ name: 'sc-sprint', start_date: '2026-02-01', end_date: '2026-02-14' });
    expect(it).toMatchObject({ name: 'sc-sprint', start_date: '2026-02-01', end_date: '2026-02-14' });
    expect(typeof it.stats.num_points).toBe('number');
    expect((await sc.updateIteration(it.id, { name: 'sc-sprint-2' })).data.name).toBe('sc-sprint-2');
    expect((await sc.getIteration(it.id)).data.id).toBe(it.id);
    expect((await sc.deleteIteration(it.id)).status).toBe(204);

    const { data: p } = await sc.createProject({ name: 'sc-project', team_id: 1 });
    expect(p).toMatchObject({ name: 'sc-project', archived: false, stats: { num_stories: 0 } });
    expect((await sc.updateProject(p.id, { archived: true })).data.archived).toBe(true);
    expect((await sc.getProject(p.id)).data.id).toBe(p.id);
    expect((await sc.deleteProject(p.id)).status).toBe(204);
  });

  it('uploads a file as multipart and gets UploadedFile records', async () => {
    const { data: files, status } = await sc.uploadFiles({ file0: new File(['hello from sc'], 'sc.txt', { type: 'text/plain' }) });
    expect(status).toBe(201);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatchObject({ name: 'sc.txt', size: 13, content_type: 'text/plain', entity_type: 'file' });
    expect((await sc.getFile(files[0]!.id)).data.name).toBe('sc.txt');
    expect((await sc.deleteFile(files[0]!.id)).status).toBe(204);
  });

  it('stories: create, read, update, move through workflow states, bulk, query, history, delete', async () => {
    const { data: workflows } = await sc.listWorkflows();
    const wf = (await sc.getWorkflow(workflows[0]!.id)).data;
    const started = wf.states.find((st) => st.type === 'started')!;
    const done = wf.states.find((st) => st.type === 'done')!;
    const { data: story, status } = await sc.createStory({ name: 'sc-story', story_type: 'bug', estimate: 2, labels: [{ name: 'sc-story-label' }] });
    expect(status).toBe(201);
    expect(story).toMatchObject({ name: 'sc-story', story_type: 'bug', started: false, tasks: [], comments: [], workflow_id: wf.id });
    expect((await sc.getStory(story.id)).data.id).toBe(story.id);
    const moved = (await sc.updateStory(story.id, { workflow_state_id: started.id })).data;
    expect(moved).toMatchObject({ started: true, completed: false, workflow_state_id: started.id });
    expect((await sc.updateStory(story.id, { workflow_state_id: done.id })).data.completed).toBe(true);
    expect((await sc.getLabel(story.labels[0]!.id)).data.stats).toMatchObject({ num_stories_completed: 1, num_points_completed: 2 });
    expect((await sc.storyHistory(story.id)).data.length).toBe(3);
    const { data: many } = await sc.createMultipleStories({ stories: [{ name: 'sc-bulk-1' }, { name: 'sc-bulk-2' }] });
    expect(many).toHaveLength(2);
    expect((await sc.updateMultipleStories({ story_ids: many.map((m) => m.id), workflow_state_id: started.id })).data.every((m) => m.started)).toBe(true);
    expect((await sc.queryStories({ workflow_state_types: ['started'] })).data.map((m) => m.id).sort()).toEqual(many.map((m) => m.id).sort());
    expect((await sc.deleteMultipleStories({ story_ids: many.map((m) => m.id) })).status).toBe(204);
    expect((await sc.deleteStory(story.id)).status).toBe(204);
    await expect(sc.getStory(story.id)).rejects.toMatchObject({ response: { status: 404 } });
  });

  it('story comments with replies and reactions, tasks and story links', async () => {
    const { data: a } = await sc.createStory({ name: 'sc-a' });
    const { data: b } = await sc.createStory({ name: 'sc-b' });
    const { data: c } = await sc.createStoryComment(a.id, { text: 'sc comment' });
    const { data: reply } = await sc.createStoryComment(a.id, { text: 'sc reply', parent_id: c.id });
    expect(reply.parent_id).toBe(c.id);
    expect((await sc.getStoryComment(a.id, c.id)).data.text).toBe('sc comment');
    expect((await sc.updateStoryComment(a.id, c.id, { text: 'sc comment!' })).data.text).toBe('sc comment!');
    expect((await sc.createStoryReaction(a.id, c.id, { emoji: ':+1:' })).data[0]?.emoji).toBe(':+1:');
    expect((await sc.deleteStoryReaction(a.id, c.id, { emoji: ':+1:' })).status).toBe(204);
    expect((await sc.listStoryComment(a.id)).data).toHaveLength(2);
    expect((await sc.deleteStoryComment(a.id, c.id)).status).toBe(204);
    expect((await sc.listStoryComment(a.id)).data).toHaveLength(0);

    const { data: task } = await sc.createTask(a.id, { description: 'sc task' });
    expect((await sc.updateTask(a.id, task.id, { complete: true })).data.complete).toBe(true);
    expect((await sc.getTask(a.id, task.id)).data.completed_at).toEqual(expect.any(String));
    expect((await sc.getStory(a.id)).data.tasks[0]?.complete).toBe(true);
    expect((await sc.deleteTask(a.id, task.id)).status).toBe(204);

    const { data: link } = await sc.createStoryLink({ subject_id: b.id, verb: 'blocks', object_id: a.id });
    expect((await sc.getStory(a.id)).data.blocked).toBe(true);
    expect((await sc.getStoryLink(link.id)).data.verb).toBe('blocks');
    expect((await sc.updateStoryLink(link.id, { verb: 'duplicates' })).data.verb).toBe('duplicates');
    expect((await sc.deleteStoryLink(link.id)).status).toBe(204);
    await sc.deleteStory(a.id);
    await sc.deleteStory(b.id);
  });

  it('is refused with 401 with a wrong token', async () => {
    const stranger = new ShortcutClient('not-the-token', { baseURL: mock.url });
    await expect(stranger.listLabels()).rejects.toMatchObject({ response: { status: 401 } });
  });
});
