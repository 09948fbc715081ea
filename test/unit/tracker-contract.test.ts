import { describe, expect, it } from 'vitest';
import { DEFINITIONS, OPERATIONS, TOKEN_HEADER } from '@opsctl/shared/tracker/contract.js';
import { operationAt, operationFor } from '@opsctl/shared/tracker/lookup.js';
import { validateDefinition, validateOperationBody } from '../../src/tracker/validate.js';

describe('the generated tracker contract (packages/shared/src/tracker)', () => {
  it('holds every operation of the document with the seed renames applied', () => {
    expect(Object.keys(OPERATIONS)).toHaveLength(141);
    expect(OPERATIONS.unlinkProductboardFromEpic.path).toBe('/epics/{epic-public-id}/unlink-planningtool');
    expect(OPERATIONS.unlinkCommentThreadFromSlack).toMatchObject({
      method: 'POST',
      path: '/stories/{story-public-id}/comments/{comment-public-id}/unlink-from-slack',
    });
    expect(OPERATIONS.deleteDoc).toMatchObject({ body: 'GetDoc', bodyRequired: true });
    expect(OPERATIONS.disableIterations).not.toHaveProperty('body');
    expect(DEFINITIONS.Epic!.fields).toHaveProperty('planningtool_id');
    expect(DEFINITIONS.Epic!.fields).not.toHaveProperty('productboard_id');
    expect(DEFINITIONS.Profile!.fields).toHaveProperty('avatar_hash');
    expect(DEFINITIONS.CreateLinkedFile!.fields.type!.enum).toEqual(['storage_a', 'url', 'storage_b', 'storage_c', 'storage_d']);
    expect(DEFINITIONS.CreateIteration!.fields.start_date!.format).toBe('date');
    expect(TOKEN_HEADER).toEqual({ seed: 'Tracker-Token', real: 'Shortcut-Token' });
    // limits, nullability and enums come through
    expect(DEFINITIONS.CreateLabelParams!.fields.name).toMatchObject({ type: 'string', maxLength: 128, minLength: 1 });
    expect(DEFINITIONS.UpdateEpic!.fields.deadline!.nullable).toBe(true);
    expect(DEFINITIONS.CreateStoryParams!.fields.story_type!.enum).toEqual(['feature', 'chore', 'bug']);
  });

  it('finds the operation of a concrete request and of a template with any placeholder names', () => {
    expect(operationAt('PUT', '/api/v3/stories/bulk')?.id).toBe('updateMultipleStories');
    expect(operationAt('PUT', '/api/v3/stories/12')?.id).toBe('updateStory');
    expect(operationFor('POST', '/epics/{id}/comments/{cid}')?.id).toBe('createEpicCommentComment');
    expect(operationFor('DELETE', '/documents/:id')?.id).toBe('deleteDoc');
  });

  it('validates bodies from the tables: the fields the resource table used to refuse pass, what the document refuses fails', () => {
    expect(validateDefinition('CreateDoc', { title: 't', content: 'c', content_format: 'markdown' }, 'create')).toEqual([]);
    expect(validateDefinition('CreateCategory', { name: 'c', type: 'milestone' }, 'create')).toEqual([]);
    expect(validateDefinition('CreateTask', { description: 'd', created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-02T00:00:00Z' }, 'create')).toEqual(
      [],
    );
    expect(validateDefinition('UpdateStory', { after_id: 1, branch_ids: [1], commit_ids: [2], pull_request_ids: [3] }, 'update')).toEqual([]);
    expect(validateDefinition('CreateLabelParams', { name: 'x'.repeat(129) }, 'create')).toEqual([
      { field: 'name', message: 'must be at most 128 characters (got 129)', kind: 'too_long' },
    ]);
    expect(validateDefinition('CreateLabelParams', { name: 'x', colour: '#fff' }, 'create')).toEqual([
      { field: 'colour', message: 'is not a field of this create request', kind: 'unknown' },
    ]);
    expect(validateDefinition('UpdateLabel', { color: null }, 'update')).toEqual([]);
    expect(validateDefinition('UpdateLabel', { name: null }, 'update')).toEqual([{ field: 'name', message: 'cannot be null', kind: 'invalid' }]);
    expect(validateDefinition('CreateIteration', { name: 'i', start_date: '2026-02-30', end_date: '2026-03-01' }, 'create')[0]).toMatchObject({
      field: 'start_date',
      message: 'must be a date, e.g. 2026-01-31',
    });
    expect(validateOperationBody({ method: 'PUT' }, { x: 1 })).toEqual([
      { field: 'body', message: 'is not accepted: this operation takes no body', kind: 'unknown' },
    ]);
  });
});
