import { describe, expect, it } from 'vitest';
import type { DesiredLabel } from '../../src/labels/file.js';
import { parseLabelFile } from '../../src/labels/file.js';
import { labelName, parseGrant, parseLabelRef } from '../../src/labels/names.js';
import { PlanError, limitProblems, lis, matchAll, orderPlan, planLabel, planWrites } from '../../src/labels/plan.js';
import { labelToFile } from '../../src/labels/from-service.js';
import type { Field, Label } from '../../src/labels/types.js';
import { allowedMethods, parseLabelPath } from '@opsctl/mock/services/labels/paths.js';

const pub = { state: 'PUBLISHED' as const, hasUnpublishedChanges: false };
const draft = { state: 'UNPUBLISHED_DRAFT' as const, hasUnpublishedChanges: true };

function sel(
  id: string,
  name: string,
  choices: Array<[string, string, typeof pub | typeof draft | { state: 'DISABLED' }]>,
  lifecycle: Field['lifecycle'] = pub,
): Field {
  return {
    id,
    properties: { displayName: name },
    lifecycle,
    selectionOptions: { choices: choices.map(([cid, cname, life]) => ({ id: cid, properties: { displayName: cname }, lifecycle: life })) },
  };
}

function label(fields: Field[], extra: Partial<Label> = {}): Label {
  return { name: 'labels/L', id: 'L', revisionId: '7', labelType: 'SHARED', properties: { title: 'T' }, lifecycle: pub, fields, ...extra };
}

const desired = (d: Partial<DesiredLabel>): DesiredLabel => ({ title: 'T', fields: [], ...d });

describe('planLabel', () => {
  it('matches by id, then by exact name, and only then by an old name: a rename never takes an item another entry names', () => {
    const current = [
      { id: 'a', properties: { displayName: 'Grade' } },
      { id: 'b', properties: { displayName: 'Level' } },
      { id: 'c', properties: { displayName: 'Old' } },
    ];
    const { matched, taken } = matchAll(current, [
      { name: 'Level', renamedFrom: ['Grade'] },
      { name: 'Grade' },
      { name: 'New', renamedFrom: ['Gone', 'Old'] },
      { id: 'zz', name: 'Fresh' },
    ]);
    expect(matched.map((m) => m?.id)).toEqual(['b', 'a', 'c', undefined]);
    expect([...taken].sort()).toEqual(['a', 'b', 'c']);
  });

  it('a renamed field and choice are updates of the same ids (no create, no delete or disable)', () => {
    const current = label([
      sel('f1', 'Grade', [
        ['a', 'Low', pub],
        ['b', 'High', pub],
      ]),
    ]);
    const plan = planLabel(
      current,
      desired({ fields: [{ name: 'Level', renamedFrom: ['Grade'], type: 'selection', choices: [{ name: 'Minor', renamedFrom: ['Low'] }, { name: 'High' }] }] }),
      [],
    );
    expect(plan.requests).toEqual([
      { updateField: { id: 'f1', properties: { displayName: 'Level' }, updateMask: 'displayName' } },
      { updateSelectionChoiceProperties: { fieldId: 'f1', id: 'a', properties: { displayName: 'Minor' }, updateMask: 'displayName' } },
    ]);
    expect(plan.changes).toEqual(['~ field "Level": renamed from "Grade"', '~ choice "Minor" of "Level": renamed from "Low"']);
  });

  it('copy mode, apps and the disabled state: one call each, only when the file names them and they differ', () => {
    const current = label([], { appliedLabelPolicy: { copyMode: 'DO_NOT_COPY' }, enabledAppSettings: { enabledApps: [{ app: 'DRIVE' }] } });
    expect(planWrites(planLabel(current, desired({}), []))).toBe(0);
    expect(planWrites(planLabel(current, desired({ copyMode: 'DO_NOT_COPY', enabledApps: ['DRIVE'], disabled: false }), []))).toBe(0);
    const plan = planLabel(current, desired({ copyMode: 'ALWAYS_COPY', enabledApps: [], disabled: { hideInSearch: true, showInApply: false } }), []);
    expect(plan).toMatchObject({ copyMode: 'ALWAYS_COPY', enabledApps: [], disable: { hideInSearch: true, showInApply: false } });
    expect(plan.enable).toBeUndefined();
    expect(planWrites(plan)).toBe(3);
    const disabled = label([], { lifecycle: { state: 'DISABLED', disabledPolicy: { hideInSearch: true } } });
    expect(planLabel(disabled, desired({ disabled: false }), [])).toMatchObject({ enable: true, changes: ['~ label: enable'] });
    expect(planLabel(disabled, desired({ disabled: { hideInSearch: false, showInApply: true } }), [])).toMatchObject({
      enable: true,
      disable: { hideInSearch: false, showInApply: true },
    });
    expect(planWrites(planLabel(disabled, desired({ disabled: { hideInSearch: true, showInApply: false } }), []))).toBe(0);
    expect(() => planLabel(undefined, desired({ disabled: { hideInSearch: false, showInApply: false } }), undefined)).toThrow(/this one is new: add --publish/);
    expect(planLabel(undefined, desired({ disabled: { hideInSearch: false, showInApply: false } }), undefined, { publish: true }).disable).toBeDefined();
  });

  it('turns a Label resource into the file format: no ids for an export, disabled fields and choices left out, what the service owns named', () => {
    const ignored = new Set<string>();
    const current = label(
      [
        sel('f1', 'Level', [
          ['a', 'Low', pub],
          ['b', 'Old', { state: 'DISABLED' }],
        ]),
        { ...sel('f2', 'Gone', []), lifecycle: { state: 'DISABLED' } },
      ],
      {
        appliedLabelPolicy: { copyMode: 'ALWAYS_COPY' },
        lifecycle: { state: 'DISABLED', disabledPolicy: { showInApply: true } },
      },
    );
    expect(
      labelToFile(current as unknown as Record<string, unknown>, {
        ids: false,
        ignored,
        permissions: [
          { email: 'b@x.io', role: 'READER', name: 'labels/L/permissions/1' },
          { person: 'people/9', role: 'READER' },
        ],
      }),
    ).toEqual({
      title: 'T',
      labelType: 'SHARED',
      copyMode: 'ALWAYS_COPY',
      enabledApps: [],
      disabled: { hideInSearch: false, showInApply: true },
      fields: [{ name: 'Level', type: 'selection', choices: ['Low'] }],
      permissions: [{ email: 'b@x.io', role: 'READER' }],
    });
    expect([...ignored]).toEqual(['name', 'revisionId', 'fields[].lifecycle', 'fields[].choices[].lifecycle']);
    expect(labelToFile(current as unknown as Record<string, unknown>, { ids: true })).toMatchObject({
      id: 'L',
      fields: [{ id: 'f1', choices: [{ id: 'a', name: 'Low' }] }],
    });
  });

  it('creates a new label with every field inline: one write', () => {
    const plan = planLabel(
      undefined,
      desired({
        description: 'd',
        fields: [
          { name: 'Level', type: 'selection', choices: [{ name: 'Low' }, { name: 'High', description: 'x' }] },
          { name: 'Due', type: 'date', dateFormat: 'SHORT_DATE' },
        ],
      }),
      undefined,
    );
    expect(plan.create).toEqual({
      labelType: 'SHARED',
      properties: { title: 'T', description: 'd' },
      fields: [
        {
          properties: { displayName: 'Level' },
          selectionOptions: { choices: [{ properties: { displayName: 'Low' } }, { properties: { displayName: 'High', description: 'x' } }] },
        },
        { properties: { displayName: 'Due' }, dateOptions: { dateFormatType: 'SHORT_DATE' } },
      ],
    });
    expect(plan.requests).toEqual([]);
    expect(planWrites(plan)).toBe(1);
  });

  it('plans nothing when the label already matches', () => {
    const current = label([
      sel('f1', 'Level', [
        ['a', 'Low', pub],
        ['b', 'High', pub],
      ]),
      { id: 'f2', properties: { displayName: 'Due' }, lifecycle: pub, dateOptions: { dateFormatType: 'LONG_DATE' } },
    ]);
    const plan = planLabel(
      current,
      desired({
        fields: [
          { name: 'Level', type: 'selection', choices: [{ name: 'Low' }, { name: 'High' }] },
          { name: 'Due', type: 'date' },
        ],
      }),
      [],
    );
    expect(plan.requests).toEqual([]);
    expect(planWrites(plan)).toBe(0);
  });

  it('plans the fewest requests: label props, a new choice in place, a new field, retiring extras by lifecycle', () => {
    const current = label([
      sel('f1', 'Level', [
        ['a', 'Low', pub],
        ['b', 'High', pub],
        ['c', 'Old', pub],
        ['d', 'Draft', draft],
      ]),
      { id: 'f2', properties: { displayName: 'Gone' }, lifecycle: pub, textOptions: {} },
      { id: 'f3', properties: { displayName: 'Scratch' }, lifecycle: draft, textOptions: {} },
    ]);
    const plan = planLabel(
      current,
      desired({
        title: 'T2',
        fields: [
          { name: 'Level', type: 'selection', required: true, choices: [{ name: 'Low' }, { name: 'Medium' }, { name: 'High' }] },
          { name: 'Owner', type: 'user', list: 5 },
        ],
      }),
      undefined,
    );
    expect(plan.requests).toEqual([
      { updateLabel: { properties: { title: 'T2' }, updateMask: 'title' } },
      { disableField: { id: 'f2', disabledPolicy: {} } },
      { deleteField: { id: 'f3' } },
      { updateField: { id: 'f1', properties: { displayName: 'Level', required: true }, updateMask: 'required' } },
      { disableSelectionChoice: { fieldId: 'f1', id: 'c', disabledPolicy: {} } },
      { deleteSelectionChoice: { fieldId: 'f1', id: 'd' } },
      { createSelectionChoice: { fieldId: 'f1', choice: { properties: { displayName: 'Medium', insertBeforeChoice: 'b' } } } },
      { createField: { field: { properties: { displayName: 'Owner' }, userOptions: { listOptions: { maxEntries: 5 } } } } },
    ]);
    expect(planWrites(plan)).toBe(1);
  });

  it('reorders with the fewest moves, sent in an order that lands every item right', () => {
    const current = label([
      { id: 'z', properties: { displayName: 'Z' }, lifecycle: pub, textOptions: {} },
      { id: 'y', properties: { displayName: 'Y' }, lifecycle: pub, textOptions: {} },
      { id: 'x', properties: { displayName: 'X' }, lifecycle: pub, textOptions: {} },
    ]);
    const plan = planLabel(current, desired({ fields: ['X', 'Y', 'Z'].map((name) => ({ name, type: 'text' as const })) }), undefined);
    expect(plan.requests).toHaveLength(2);
    // simulate the server's insert-before semantics
    const order = ['z', 'y', 'x'];
    for (const r of plan.requests) {
      const { id, properties } = r.updateField as { id: string; properties: { insertBeforeField: string } };
      order.splice(order.indexOf(id), 1);
      const before = properties.insertBeforeField;
      order.splice(before ? order.indexOf(before) : order.length, 0, id);
    }
    expect(order).toEqual(['x', 'y', 'z']);
  });

  it('enables disabled fields and choices the file lists again', () => {
    const current = label([sel('f1', 'Level', [['a', 'Low', { state: 'DISABLED' }]], { state: 'DISABLED' })]);
    const plan = planLabel(current, desired({ fields: [{ name: 'Level', type: 'selection', choices: [{ name: 'Low' }] }] }), undefined);
    expect(plan.requests).toEqual([{ enableField: { id: 'f1' } }, { enableSelectionChoice: { fieldId: 'f1', id: 'a' } }]);
  });

  it('refuses a type change of a published field, allows it on a draft', () => {
    const current = label([{ id: 'f', properties: { displayName: 'F' }, lifecycle: pub, textOptions: {} }]);
    expect(() => planLabel(current, desired({ fields: [{ name: 'F', type: 'integer' }] }), undefined)).toThrow(PlanError);
    const draftLabel = label([{ id: 'f', properties: { displayName: 'F' }, lifecycle: draft, textOptions: {} }]);
    expect(planLabel(draftLabel, desired({ fields: [{ name: 'F', type: 'integer' }] }), undefined).requests).toEqual([
      { updateFieldType: { id: 'f', integerOptions: {}, updateMask: '*' } },
    ]);
  });

  it('renames a field matched by id', () => {
    const current = label([{ id: 'f', properties: { displayName: 'Old' }, lifecycle: pub, textOptions: {} }]);
    expect(planLabel(current, desired({ fields: [{ id: 'f', name: 'New', type: 'text' }] }), undefined).requests).toEqual([
      { updateField: { id: 'f', properties: { displayName: 'New' }, updateMask: 'displayName' } },
    ]);
  });

  it('plans permissions: one batchUpdate for new and changed, one batchDelete for removed', () => {
    const plan = planLabel(
      label([]),
      desired({
        permissions: [
          { email: 'bob@example.com', role: 'EDITOR' },
          { email: 'new@example.com', role: 'READER' },
          { audience: 'audiences/default', role: 'READER' },
        ],
      }),
      [
        { name: 'labels/L/permissions/1', email: 'bob@example.com', role: 'READER' },
        { name: 'labels/L/permissions/2', email: 'old@example.com', role: 'READER' },
        { name: 'labels/L/permissions/3', audience: 'audiences/default', role: 'READER' },
      ],
    );
    expect(plan.grant).toEqual([
      { email: 'bob@example.com', role: 'EDITOR' },
      { email: 'new@example.com', role: 'READER' },
    ]);
    expect(plan.revoke.map((p) => p.name)).toEqual(['labels/L/permissions/2']);
    expect(planWrites(plan)).toBe(2);
  });
});

describe('limitProblems', () => {
  const limits = { maxTitleLength: 10, maxFields: 2, fieldLimits: { maxDisplayNameLength: 5, selectionLimits: { maxChoices: 2, maxDisplayNameLength: 3 } } };
  it('names every breach, counting disabled items the label keeps', () => {
    const current = label([{ id: 'old', properties: { displayName: 'Old' }, lifecycle: pub, textOptions: {} }]);
    const problems = limitProblems(
      desired({
        title: 'A very long title',
        fields: [
          { name: 'Sixsix', type: 'text' },
          { name: 'S', type: 'selection', choices: [{ name: 'a' }, { name: 'b' }, { name: 'long' }] },
        ],
      }),
      current,
      limits,
    );
    expect(problems).toEqual([
      'title: 17 characters; the limit is 10',
      'fields: the label would have 3 fields (2 in the file + 1 disabled ones it keeps); the limit is 2',
      'fields[0].name: 6 characters; the limit is 5',
      'fields[1].choices: 3 choices (3 in the file); the limit is 2',
      'fields[1].choices[2].name: 4 characters; the limit is 3',
    ]);
    expect(limitProblems(desired({ fields: [{ name: 'A', type: 'text' }] }), undefined, limits)).toEqual([]);
  });
});

describe('ordering helpers', () => {
  it('lis keeps the longest increasing run', () => {
    expect([...lis([2, 1, 0])].length).toBe(1);
    expect([...lis([0, 3, 1, 2])].sort()).toEqual([0, 2, 3]);
    expect(lis([]).size).toBe(0);
  });
  it('orderPlan inserts new items before the next existing one', () => {
    const r = orderPlan(
      ['a', 'b'],
      [{ existingId: undefined }, { existingId: 'a' }, { existingId: undefined }, { existingId: 'b' }, { existingId: undefined }],
    );
    expect(r.moves).toEqual([]);
    expect(r.insertBefore).toEqual(['a', undefined, 'b', undefined, undefined]);
  });
});

describe('names and the apply file', () => {
  it('parses bare ids and names with revisions', () => {
    expect(parseLabelRef('abc')).toEqual({ id: 'abc' });
    expect(parseLabelRef('labels/abc@published')).toEqual({ id: 'abc', rev: 'published' });
    expect(labelName(parseLabelRef('abc@12'))).toBe('labels/abc@12');
    expect(parseLabelRef('labels/abc/revisions/7')).toEqual({ id: 'abc', rev: '7' });
    expect(() => parseLabelRef('labels/abc/revisions/')).toThrow(/not a label id/);
    expect(() => parseLabelRef('labels/')).toThrow(/not a label id/);
    expect(parseGrant('Bob@Example.com=editor')).toEqual({ email: 'bob@example.com', role: 'EDITOR' });
    expect(() => parseGrant('bob@example.com=owner')).toThrow(/role/);
  });

  it('reads YAML and JSON, and names the path of each problem', async () => {
    const y = await parseLabelFile(
      'title: T\nfields:\n  - {name: L, type: selection, choices: [Low, {name: High, description: d}]}\npermissions:\n  - {email: Bob@example.com, role: READER}\n',
      'f.yaml',
    );
    expect(y).toEqual({
      title: 'T',
      fields: [{ name: 'L', type: 'selection', choices: [{ name: 'Low' }, { name: 'High', description: 'd' }] }],
      permissions: [{ email: 'bob@example.com', role: 'READER' }],
    });
    expect(await parseLabelFile('{"title":"J","id":"labels/abc"}', 'f.json')).toEqual({ id: 'abc', title: 'J', fields: [] });
    await expect(parseLabelFile('title: T\nfields:\n  - {name: L, type: text, choices: [a]}\n', 'f.yaml')).rejects.toThrow(
      /fields\[0\]\.choices: only a selection field/,
    );
    await expect(parseLabelFile('fields: []\n', 'f.yaml')).rejects.toThrow(/title/);
    await expect(parseLabelFile('title: T\ncolour: red\n', 'f.yaml')).rejects.toThrow(/colour/);
    await expect(parseLabelFile('title: T\nfields:\n  - {name: A, type: text}\n  - {name: A, type: text}\n', 'f.yaml')).rejects.toThrow(/used by two fields/);
    await expect(parseLabelFile('title: [', 'f.yaml')).rejects.toThrow(/not valid YAML/);
    await expect(parseLabelFile('title: T\npermissions: [{email: a@b.co, audience: audiences/default, role: READER}]\n', 'f.yaml')).rejects.toThrow(
      /exactly one of email or audience/,
    );
    // every problem at once, each with its path; no zod in the way (start-up budget)
    const err = await parseLabelFile(
      'title: T\nextra: 1\nfields:\n  - {name: S, type: selection, list: 2.5, choices: [{name: 5}, ok, {nom: x}]}\n  - 7\npermissions: [{email: notmail, role: X}]\n',
      'f.yaml',
    ).then(
      () => '',
      (e: Error) => e.message,
    );
    expect(
      err
        .split('\n')
        .slice(1)
        .map((l) => l.trim()),
    ).toEqual([
      '(top level): unknown key "extra" (known: id, title, renamed_from, description, labelType, languageCode, copyMode, enabledApps, disabled, fields, permissions)',
      'fields[0].list: must be true, false or a whole number of entries (1 or more)',
      'fields[0].choices[0].name: expected text, got number',
      'fields[0].choices[2]: unknown key "nom" (known: id, name, renamed_from, description)',
      'fields[0].choices[2].name: required',
      'fields[1]: expected a mapping, got number',
      'permissions[0].email: is not an email address',
      'permissions[0].role: "X" is not one of READER, APPLIER, ORGANIZER, EDITOR',
    ]);
    await expect(parseLabelFile('', 'f.yaml')).rejects.toThrow(/f.yaml: is empty/);
    await expect(
      parseLabelFile('title: T\nfields: [{name: N, type: user, list: 3}, {name: D, type: date, dateFormat: SHORT_DATE}]\n', 'f.yaml'),
    ).resolves.toEqual({
      title: 'T',
      fields: [
        { name: 'N', type: 'user', list: 3 },
        { name: 'D', type: 'date', dateFormat: 'SHORT_DATE' },
      ],
    });
  });
});

describe('mock path parsing', () => {
  it('parses every label-API path form', () => {
    expect(parseLabelPath('abc')).toEqual({ kind: 'label', id: 'abc' });
    expect(parseLabelPath('abc@published')).toEqual({ kind: 'label', id: 'abc', rev: 'published' });
    expect(parseLabelPath('abc:delta')).toEqual({ kind: 'verb', id: 'abc', verb: 'delta' });
    expect(parseLabelPath('abc%3Apublish')).toEqual({ kind: 'verb', id: 'abc', verb: 'publish' });
    expect(parseLabelPath('abc:nope')).toBeUndefined();
    expect(parseLabelPath('abc/permissions')).toEqual({ kind: 'permissions', id: 'abc' });
    expect(parseLabelPath('abc/permissions:batchDelete')).toEqual({ kind: 'permissions', id: 'abc', batch: 'batchDelete' });
    expect(parseLabelPath('abc/revisions/3/permissions:batchUpdate')).toEqual({ kind: 'permissions', id: 'abc', rev: '3', batch: 'batchUpdate' });
    expect(parseLabelPath('abc/revisions/3/permissions/9')).toEqual({ kind: 'permission', id: 'abc', rev: '3', permissionId: '9' });
    expect(parseLabelPath('abc/locks')).toEqual({ kind: 'locks', id: 'abc' });
    expect(parseLabelPath('abc/revisions/3/locks')).toEqual({ kind: 'locks', id: 'abc', rev: '3' });
    expect(parseLabelPath('abc/other')).toBeUndefined();
    expect(parseLabelPath('%E0%A4%A')).toBeUndefined();
    expect(allowedMethods({ kind: 'permissions', id: 'a' })).toEqual(['GET', 'POST', 'PATCH']);
    expect(allowedMethods({ kind: 'permissions', id: 'a', batch: 'batchUpdate' })).toEqual(['POST']);
  });
});
