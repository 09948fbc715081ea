import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEFINITIONS, OPERATIONS, TOKEN_HEADER } from '@opsctl/shared/tracker/contract.js';
import { operationAt, operationFor } from '@opsctl/shared/tracker/lookup.js';
import { validateDefinition, validateOperationBody } from '../../src/tracker/validate.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPT = join(ROOT, 'scripts/gen-tracker-contract.mjs');

describe('the generated tracker contract (packages/shared/src/tracker)', () => {
  it('is current: the generator in --check mode finds nothing to rewrite', () => {
    const r = spawnSync(process.execPath, [SCRIPT, '--check'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('a change to the overrides makes the committed files stale, named with the fix', () => {
    // a copy of the repository's inputs in a scratch tree, so the real files are never touched
    const dir = mkdtempSync(join(tmpdir(), 'opsctl-contract-'));
    try {
      for (const d of ['scripts', 'packages/shared/src/tracker']) execFileSync('mkdir', ['-p', join(dir, d)]);
      for (const f of [
        'scripts/gen-tracker-contract.mjs',
        'packages/shared/src/tracker/openapi.json',
        'packages/shared/src/tracker/overrides.json',
        'packages/shared/src/tracker/contract.ts',
        'packages/shared/src/tracker/types.ts',
        'packages/shared/src/tracker/flags.ts',
        '.prettierrc.json',
      ])
        copyFileSync(join(ROOT, f), join(dir, f));
      execFileSync('ln', ['-s', join(ROOT, 'node_modules'), join(dir, 'node_modules')]);
      const ov = JSON.parse(readFileSync(join(dir, 'packages/shared/src/tracker/overrides.json'), 'utf8'));
      ov.fields[0].to = 'avatar_digest';
      writeFileSync(join(dir, 'packages/shared/src/tracker/overrides.json'), JSON.stringify(ov));
      const r = spawnSync(process.execPath, [join(dir, 'scripts/gen-tracker-contract.mjs'), '--check'], { cwd: dir, encoding: 'utf8' });
      expect(r.status).toBe(1);
      expect(r.stderr).toContain('stale: packages/shared/src/tracker/contract.ts, packages/shared/src/tracker/types.ts; run npm run gen:contract');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

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
