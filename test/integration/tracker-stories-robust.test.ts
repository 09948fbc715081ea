import { describe, expect, it } from 'vitest';
import { trackerCall, useTrackerMock } from '../helpers/tracker.js';

const t = useTrackerMock();

/** Client mistakes on the story endpoints: always a 4xx naming the problem, never a 5xx. */
describe('story endpoints refuse bad input with 4xx', () => {
  it('bulk, search, from-template, comments, tasks, links, workflows, documents', async () => {
    const call = trackerCall(t.mock);
    const story = (await call('POST', '/stories', { name: 'robust' })).body;
    const cases: Array<[string, string, unknown, number]> = [
      ['POST', '/stories/bulk', { stories: [1] }, 400],
      ['POST', '/stories/bulk', { stories: [null] }, 400],
      ['POST', '/stories/bulk', { stories: [] }, 400],
      ['POST', '/stories/bulk', { stories: Array.from({ length: 101 }, (_, i) => ({ name: `n${i}` })) }, 400],
      ['POST', '/stories/bulk', { stories: [{ name: 'ok' }, { name: 'x', project_id: 424242 }] }, 422],
      ['PUT', '/stories/bulk', { story_ids: [story.id, 999999], estimate: 1 }, 422],
      ['PUT', '/stories/bulk', { story_ids: 'all' }, 400],
      ['DELETE', '/stories/bulk', { story_ids: [999999] }, 422],
      ['POST', '/stories/search', { workflow_state_types: ['shipped'] }, 400],
      ['POST', '/stories/search', { workflow_state_types: 'started' }, 400],
      ['POST', '/stories/search', { __proto__: { x: 1 }, constructor: 1 }, 400],
      ['POST', '/stories/from-template', { story_template_id: '00000000-0000-4000-8000-000000000000' }, 422],
      ['POST', '/stories/from-template', { name: 'x' }, 400],
      ['POST', `/stories/${story.id}/comments`, { text: 'x', parent_id: 999999 }, 422],
      ['POST', `/stories/${story.id}/comments/999999/reactions`, { emoji: ':+1:' }, 404],
      ['POST', `/stories/${story.id}/tasks`, { description: '' }, 400],
      ['PUT', `/stories/${story.id}/tasks/999999`, { complete: true }, 404],
      ['POST', '/story-links', { verb: 'blocks', subject_id: story.id, object_id: story.id }, 422],
      ['POST', '/story-links', { verb: 'fixes', subject_id: story.id, object_id: story.id }, 400],
      ['GET', '/workflows/1', undefined, 404],
      ['GET', '/workflows/toString', undefined, 400],
      ['GET', '/documents/constructor', undefined, 400],
      ['GET', '/search/documents', undefined, 400],
      ['PUT', `/stories/${story.id}`, { workflow_state_id: 1 }, 422],
      ['PUT', `/stories/${story.id}`, { parent_story_id: story.id }, 422],
    ];
    for (const [method, path, body, status] of cases) {
      const r = await call(method, path, body);
      expect({ method, path, status: r.status }).toEqual({ method, path, status });
      expect(typeof r.body?.message).toBe('string');
    }
  });
});
