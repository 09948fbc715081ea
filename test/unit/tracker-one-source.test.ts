import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFINITIONS } from '@opsctl/shared/tracker/contract.js';
import { FLAG_BODIES, FLAG_OPERATIONS, ID_KINDS, PATH_KINDS } from '@opsctl/shared/tracker/flags.js';
import { operationFor } from '@opsctl/shared/tracker/lookup.js';
import { OPERATIONS } from '@opsctl/shared/tracker/contract.js';
import { documents, groups, linkedFiles, operationKey, RESOURCES, search, stories } from '../../src/tracker/resources.js';
import { trackerTable } from '../../scripts/tracker-table.mjs';
import { coerceFlag } from '../../src/tracker/input.js';
import { isId, REF_KINDS } from '../../src/tracker/names.js';
import { ValidationError } from '../../src/core/errors.js';
import { validateBody } from '../../src/tracker/validate.js';

const YAML_TEXT = readFileSync(new URL('../../packages/shared/src/tracker/resources.yaml', import.meta.url), 'utf8');
const CONTRACT = { operations: OPERATIONS, flagOps: FLAG_OPERATIONS, flagDefs: FLAG_BODIES, pathKinds: PATH_KINDS };
/** resources.yaml with `text` planted under the labels resource (or under its epics verb). */
const planted = (text: string, under: 'labels' | 'labels epics' = 'labels') =>
  under === 'labels'
    ? YAML_TEXT.replace('\n  labels:\n', `\n  labels:\n    ${text}\n`)
    : YAML_TEXT.replace('\n      epics: { op: listLabelEpics,', `\n      epics: { ${text}, op: listLabelEpics,`);

// Issue 25 item 1 and issue 36 item 4: the table is generated from the contract and resources.yaml, which holds
// only the CLI's choices; the flags, the check before sending, the completions and the mock's routes read it.
describe('one source for the tracker CLI and the mock: the table generated from the contract', () => {
  it('the committed table is what the contract and resources.yaml make', () => {
    expect(JSON.parse(JSON.stringify(trackerTable(YAML_TEXT, CONTRACT)))).toEqual(JSON.parse(JSON.stringify(RESOURCES)));
  });

  it('resources.yaml says no field type, limit, enum, nullability, id type, verb list or path of a verb: the generator refuses them', () => {
    for (const key of ['type', 'max', 'nullable', 'required', 'values', 'idType', 'verbs'])
      expect(() => trackerTable(planted(`${key}: x`), CONTRACT), key).toThrow(`resources.yaml: labels: unknown key "${key}"`);
    for (const key of ['method', 'path'])
      expect(() => trackerTable(planted(`${key}: x`, 'labels epics'), CONTRACT), key).toThrow(`resources.yaml: labels epics: unknown key "${key}"`);
    // a flag or an operation the contract lacks
    expect(() => trackerTable(YAML_TEXT.replace('listQuery: [slim]', 'listQuery: [slim, colour]'), CONTRACT)).toThrow(
      'resources.yaml: labels listQuery: names colour, which no body or query of GET /labels has in the contract',
    );
    expect(() => trackerTable(YAML_TEXT.replace('op: listLabelEpics', 'op: listLabelEpicz'), CONTRACT)).toThrow(
      'resources.yaml: labels epics: op: no operation listLabelEpicz in the contract',
    );
    // nor lists a field's values in its help
    expect(YAML_TEXT).not.toMatch(/backlog, unstarted|story, epic, iteration/);
  });

  it("every flag of every verb is a field of its operation's body or query in the contract, with the contract's kind", () => {
    let checked = 0;
    for (const spec of RESOURCES) {
      const sets = [
        { fields: spec.fields, keys: { create: operationKey('POST', spec.path), update: operationKey('PUT', `${spec.path}/{id}`) } },
        ...(spec.extras ?? []).filter((e) => e.body).map((e) => ({ fields: e.body!, keys: { create: operationKey(e.method, e.path) } })),
      ];
      for (const { fields, keys } of sets) {
        for (const [name, f] of Object.entries(fields)) {
          for (const mode of f.in ?? (['create', 'update'] as const)) {
            const key = (keys as Record<string, string | undefined>)[mode];
            if (!key || !f.source?.[mode]) continue;
            expect(f.source[mode], `${spec.name} ${name}`).toBe(key);
            const [method = '', path = ''] = key.split(' ');
            const def = operationFor(method, path)?.body;
            expect(def, key).toBeDefined();
            const field = DEFINITIONS[def!]!.fields[name];
            expect(field, `${spec.name} ${name} in ${def}`).toBeDefined();
            expect(FLAG_BODIES[def!]![name]!.type).toBe(f.type);
            if (field!.enum) expect(f.values).toEqual(field!.enum.map(String));
            checked++;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(150);
  });

  it("the flags table names each operation's body definition as contract.ts does", () => {
    for (const [key, entry] of Object.entries(FLAG_OPERATIONS)) {
      const [method = '', path = ''] = key.split(' ');
      const op = operationFor(method, path);
      expect(op, key).toBeDefined();
      expect(op?.body, key).toBe(entry.body);
      expect(Object.keys(entry.query ?? {}), key).toEqual(Object.keys(op?.query ?? {}));
    }
  });

  it("enum choices (the flags' choices and the completions) are the document's values, seed renames applied", () => {
    expect(linkedFiles.fields.type!.values).toEqual(['storage_a', 'url', 'storage_b', 'storage_c', 'storage_d']);
    expect(groups.fields.color_key!.values).toEqual(DEFINITIONS.CreateGroup!.fields.color_key!.enum);
    expect(stories.fields.story_type!.values).toEqual(['feature', 'chore', 'bug']);
  });

  it('the check before sending accepts what the document accepts and the old hand table refused', () => {
    // content_format is no flag of documents create, but the document's CreateDoc has it (the official client sends it)
    expect(validateBody(documents.fields, 'create', { title: 'Runbook', content: '# Steps', content_format: 'markdown' })).toEqual([]);
    // the hand table said 128 for a story's external_id; CreateStoryParams says 1024
    expect(validateBody(stories.fields, 'create', { name: 's', external_id: 'x'.repeat(1024) })).toEqual([]);
    expect(validateBody(stories.fields, 'create', { name: 's', external_id: 'x'.repeat(1025) })).toEqual([
      { field: 'external_id', message: 'must be at most 1024 characters (got 1025)', kind: 'too_long' },
    ]);
    // nested bodies are checked by the document's definitions (no hand-written schemas)
    expect(validateBody(stories.fields, 'create', { name: 's', tasks: [{ description: 'd', complete: 'yes' }] })[0]).toMatchObject({
      field: 'tasks.0.complete',
      kind: 'invalid',
    });
    expect(validateBody(documents.fields, 'create', { title: 'Runbook', content: 'c', content_format: 'docx' })[0]).toMatchObject({
      field: 'content_format',
      message: 'must be one of: markdown, html',
    });
  });

  it("the mock's body types are the generated definitions (packages/shared/src/tracker/types.ts), none written by hand but MoveParams", () => {
    const text = readFileSync(new URL('../../packages/mock/src/services/tracker/bodies.ts', import.meta.url), 'utf8');
    expect([...text.matchAll(/^export interface (\w+)/gm)].map((m) => m[1])).toEqual(['MoveParams']);
    const aliases = [...text.matchAll(/^export type (\w+) = (.+);$/gm)];
    expect(aliases.length).toBeGreaterThan(30);
    for (const [, name, type] of aliases) expect(type, name).toMatch(/^(Either<T\.\w+, T\.\w+>|T\.\w+)$/);
  });

  it("what a positional id holds (an integer or a uuid) is its path placeholder's kind in the contract", () => {
    let checked = 0;
    for (const spec of RESOURCES) {
      const item = ['GET', 'PUT', 'DELETE'].map((m) => operationKey(m, `${spec.path}/{id}`)).find((k) => PATH_KINDS[k]);
      expect(spec.idType, spec.name).toBe(item ? PATH_KINDS[item]![0] : undefined);
      for (const e of spec.extras ?? []) {
        if (!e.args) continue; // (key-results list reads its objective from a flag, in its own handler)
        const kinds = PATH_KINDS[operationKey(e.method, e.path)] ?? [];
        expect(
          (e.args ?? []).map((a) => a.type),
          `${spec.name} ${e.name}`,
        ).toEqual(kinds);
        checked += kinds.length;
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect(stories.idType).toBe('int');
    expect(documents.idType).toBe('uuid');
    expect(search.idType).toBeUndefined();
    // arguments come from the operation's path: an extra verb cannot name more or fewer than it has
    expect(stories.extras?.find((e) => e.name === 'comment')?.args?.map((a) => a.name)).toEqual(['id', 'comment_id']);
  });

  it("a name's kind of id is the type of the record's id in the contract", () => {
    expect(REF_KINDS.member.idType).toBe(ID_KINDS.Member);
    expect(REF_KINDS.member.idType).toBe('uuid');
    expect(REF_KINDS.group.idType).toBe('uuid');
    expect(REF_KINDS['workflow-state'].idType).toBe(ID_KINDS.WorkflowState);
    expect(REF_KINDS.epic.idType).toBe('int');
    expect(isId('epic', '12')).toBe(true);
    expect(isId('member', '12')).toBe(false);
  });

  it("a list flag of the contract's values refuses another value before sending, naming the flag and the values", () => {
    const search = RESOURCES.find((r) => r.name === 'search')!.extras!.find((e) => e.name === 'all')!;
    const types = search.query!.entity_types!;
    expect(types.values).toEqual(['story', 'milestone', 'epic', 'iteration', 'objective']);
    expect(coerceFlag('entity_types', types, 'story, epic')).toEqual(['story', 'epic']);
    expect(() => coerceFlag('entity_types', types, 'story,stories')).toThrow(ValidationError);
    expect(() => coerceFlag('entity_types', types, 'story,stories')).toThrow(
      '--entity-types: "stories" is not one of: story, milestone, epic, iteration, objective',
    );
    const wst = RESOURCES.find((r) => r.name === 'stories')!.extras!.find((e) => e.name === 'search')!.body!.workflow_state_types!;
    expect(wst.values).toEqual(['started', 'backlog', 'unstarted', 'done']);
  });
});
